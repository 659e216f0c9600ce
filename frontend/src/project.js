// Entry of the project form (labeling/templates/labeling/project_form.html): a new project
// (POST /api/projects/, its creator leads and researches it) or an existing one's name,
// instructions and rules (GET/PATCH /api/projects/{id}/, its leads and researchers). The API
// judges every value (labeling/api/projects.py); the form is dashboard/form.js's.
import "./main.js";
import "./dashboard/dashboard.css";
import "./research/settings.css";
import { call } from "./dashboard/api.js";
import { settingsForm } from "./dashboard/form.js";
import { el } from "./dom.js";

const FIELDS = [
  { name: "name", label: "Name", text: true, help: "Unique on this site; annotators see it." },
  { name: "instructions", label: "Instructions", area: true,
    help: "Markdown (math between $ or \\( \\)), shown to annotators on their home page and beside the work: " +
      "the scale with a worked example of each rating." },
  { name: "overlap", label: "Overlap", step: "1",
    help: "How many annotators rate each solution (1: no agreement can be measured)." },
  { group: "A pass" },
  { name: "stop_at_first_error", label: "Stop at the first −1", checkbox: true,
    help: "PRM800K's phase 2: a pass ends at the first step rated −1." },
  { name: "allow_alternatives", label: "Rate other completions", checkbox: true,
    help: "PRM800K's phase 1: the other completions offered at a step are rated too." },
  { name: "allow_human_steps", label: "Own steps", checkbox: true,
    help: "Phase 1: where every completion at a step is −1, the annotator may write the step." },
  { name: "lease_seconds", label: "Lease (s)", step: "60",
    help: "An assignment left without activity this long goes back to the queue (at least 60)." },
  { group: "How text is shown" },
  { name: "dollar_math", label: "$ is math", checkbox: true,
    help: "Text between $ signs is math (MATH, PRM800K); off where $ is money (GSM8K)." },
  { name: "show_calculator_markup", label: "Calculator markup", checkbox: true,
    help: "Show GSM8K's <<48/2=24>> annotations instead of hiding them." },
  { name: "is_active", label: "Active", checkbox: true, existing: true,
    help: "Annotators see the project and are handed its work; off pauses it for everyone." },
];

const root = document.getElementById("project-form");
if (root) start(root).catch((error) => {
  root.querySelector(".dash-loading")?.remove();
  root.append(el("p", "errors", `The project could not be read: ${error.message}`));
});

async function start(root) {
  const creating = Boolean(root.dataset.new);
  const fields = FIELDS.filter((field) => !(creating && field.existing));
  // A new project starts from the model's defaults (the page carries them), an existing one from itself.
  const values = creating ? JSON.parse(document.getElementById("project-defaults").textContent)
    : await call(root.dataset.url);
  root.querySelector(".dash-loading")?.remove();
  const box = el("section", "card");
  root.append(box);
  settingsForm(box, {
    url: root.dataset.url, method: creating ? "POST" : "PATCH", fields, values, formClass: "loop-form",
    saveLabel: creating ? "Create project" : "Save",
    ids: { prefix: "project-", form: "project-form", error: "project-error-", message: "project-message", save: "project-save" },
    group(field, form) {
      form.append(el("h3", "loop-group", field.group));
    },
    control(field) {
      if (field.area) {
        const area = el("textarea");
        area.rows = 8;
        return area;
      }
      const input = el("input");
      input.type = field.checkbox ? "checkbox" : field.text ? "text" : "number";
      if (field.step) input.step = field.step;
      return input;
    },
    show(inputs, shown) {
      for (const [name, input] of Object.entries(inputs)) {
        if (input.type === "checkbox") input.checked = Boolean(shown[name]);
        else input.value = shown[name] ?? "";
      }
    },
    read(name, input) {
      if (input.type === "checkbox") return input.checked;
      if (input.type === "number") return input.value === "" ? null : Number(input.value);
      return input.value;
    },
    saved(stored) {
      if (!creating) return "Saved.";
      // The creator researches it: its next step is importing what people will rate.
      location.assign(`/projects/${stored.id}/research/#import`);
      return "Created.";
    },
  });
  root.dataset.state = "ready";
}
