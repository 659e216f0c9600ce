// The quality settings form: gold rate, automatic pausing (threshold, window, minimum passes)
// and screening (on/off, set size, pass mark). The server judges every value: a refused one
// gets the server's message beside its field (novalidate: the browser does not pre-empt it).
import { call } from "./api.js";
import { el } from "../dom.js";
import { section } from "./dom.js";
import { errorText, fieldErrors, statusLine } from "./ratings.js";

const FIELDS = [
  { group: "Gold items" },
  { name: "quality_control_rate", label: "Gold rate", step: "0.01",
    help: "Share of hand-outs that are gold items, 0 to 1 (0.05: one in twenty)." },
  { name: "gold_threshold", label: "Pause below", step: "0.01",
    help: "An annotator whose rolling gold score falls below this, 0 to 1, is paused (0: never)." },
  { name: "gold_window", label: "Window", step: "1", help: "The rolling score is the mean over this many latest gold passes." },
  { name: "gold_min_passes", label: "Passes before pausing", step: "1", help: "Gold passes needed before anyone is paused." },
  { group: "Screening" },
  { name: "requires_screening", label: "Screen newcomers", checkbox: true,
    help: "Newcomers rate the screening items before real work." },
  { name: "screening_size", label: "Screening set size", step: "1",
    help: "How many screening items a newcomer rates, in id order (0: all of them)." },
  { name: "screening_threshold", label: "Pass mark", step: "0.01",
    help: "Mean agreement with the gold over the screening items needed to pass, 0 to 1." },
];

export async function showSettings(box, url) {
  const values = await call(url);
  const form = el("form", "q-form");
  form.noValidate = true;
  form.dataset.testid = "settings-form";
  const inputs = {};
  const errors = {};
  const count = el("p", "muted small q-span");
  count.dataset.testid = "screening-items";
  for (const field of FIELDS) {
    if (field.group) {
      form.append(el("fieldset", null, field.group));
      if (field.group === "Screening") form.append(count);
      continue;
    }
    const input = el("input");
    input.id = `setting-${field.name}`;
    input.name = field.name;
    if (field.checkbox) {
      input.type = "checkbox";
      input.checked = Boolean(values[field.name]);
    } else {
      input.type = "number";
      input.step = field.step;
      input.value = values[field.name];
    }
    const help = el("span", "help", field.help);
    help.id = `${input.id}-help`;
    const error = el("span", "field-error");
    error.id = `${input.id}-error`;
    error.dataset.testid = `error-${field.name}`;
    input.setAttribute("aria-describedby", `${help.id} ${error.id}`);
    const label = el("label", null, field.label);
    label.htmlFor = input.id;
    const cell = el("div");
    cell.append(input, help, error);
    form.append(label, cell);
    inputs[field.name] = input;
    errors[field.name] = error;
  }
  const showCount = (n) => {
    count.textContent = `The screening set: ${n} screening item${n === 1 ? "" : "s"} in this project. Mark a gold ` +
      "item as one in its gold editor (on an annotator's passes, Edit gold ratings).";
  };
  showCount(values.screening_items);
  const save = el("button", "q-button primary", "Save settings");
  save.type = "submit";
  const message = statusLine("settings-message");
  const buttons = el("div");
  buttons.append(save, message);
  form.append(el("span"), buttons);
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    message.textContent = "";
    message.classList.remove("errors");
    const body = {};
    for (const [name, input] of Object.entries(inputs)) {
      body[name] = input.type === "checkbox" ? input.checked : input.value === "" ? "" : Number(input.value);
      errors[name].textContent = "";
      input.removeAttribute("aria-invalid");
    }
    save.disabled = true;
    try {
      const saved = await call(url, { method: "PATCH", body });
      for (const [name, input] of Object.entries(inputs)) {
        if (input.type === "checkbox") input.checked = Boolean(saved[name]);
        else input.value = saved[name];
      }
      showCount(saved.screening_items);
      message.textContent = "Saved.";
    } catch (error) {
      const found = fieldErrors(error);
      for (const [name, text] of Object.entries(found)) {
        if (!errors[name]) continue;
        errors[name].textContent = text;
        inputs[name].setAttribute("aria-invalid", "true");
      }
      message.textContent = Object.keys(found).length ? "Not saved: fix the marked fields." : `Not saved: ${errorText(error)}`;
      message.classList.add("errors");
    } finally {
      save.disabled = false;
    }
  });
  box.append(form);
}

export function settingsSection() {
  return section("Quality settings", "settings");
}
