// The lead's pre-label policy (GET/PATCH /api/projects/{id}/prelabel-settings/): what annotators see
// of a machine source's labels (hidden, suggestions, verify), whose labels, and the share of gold
// passes that carry a trap. The sources to choose from are the agreement view's (sources.js).
// The server judges every value and its message goes beside the field.
import { el } from "../dom.js";
import { call } from "./api.js";
import { settingsForm } from "./form.js";

const MODES = [["hidden", "Hidden (PRM800K's practice)"], ["suggest", "Shown as suggestions"],
  ["verify", "Verify: annotators confirm or correct each"]];

const FIELDS = [
  { group: "Pre-labels" },
  { name: "prelabel_mode", label: "Annotators see", options: MODES,
    help: "Hidden keeps annotators' ratings independent; the dashboard compares time and agreement per mode." },
  { name: "prelabel_source", label: "Whose labels", options: [],
    help: "A machine source of this project: a PRM checkpoint, an LLM judge, Monte Carlo rollouts." },
  { name: "trap_rate", label: "Trap rate", step: "0.01",
    help: "Share of gold passes, 0 to 1, whose pre-label on one step is made wrong: accepting it is a gold miss. " +
      "While traps are set, reasons are not shown (a trap's reason would tell)." },
];

/** The form in ``box``; ``url`` is the settings route, ``sourcesUrl`` the agreement route that lists sources. */
export async function showPrelabelSettings(box, url, sourcesUrl) {
  const [values, agreement] = await Promise.all([call(url), call(sourcesUrl)]);
  const machines = agreement.sources.filter((s) => s.id !== undefined);
  const fields = FIELDS.map((f) => (f.name === "prelabel_source"
    ? { ...f, options: [["", "none"], ...machines.map((s) => [String(s.id), `${s.name} (${s.kind})`])] } : f));
  settingsForm(box, {
    url, fields, values, formClass: "q-form", saveLabel: "Save pre-label settings", saveClass: "q-button primary",
    ids: { prefix: "prelabel-", form: "prelabel-form", error: "prelabel-error-", message: "prelabel-message" },
    group(field, form) {
      form.append(el("fieldset", null, field.group));
    },
    control(field) {
      if (!field.options) {
        const input = el("input");
        input.type = "number";
        input.step = field.step;
        return input;
      }
      const select = el("select");
      for (const [value, label] of field.options) {
        const option = el("option", null, label);
        option.value = value;
        select.append(option);
      }
      return select;
    },
    show(inputs, shown) {
      for (const [name, input] of Object.entries(inputs)) input.value = shown[name] === null ? "" : String(shown[name]);
    },
    read(name, input) {
      if (name === "prelabel_source") return input.value === "" ? null : Number(input.value);
      if (name === "trap_rate") return input.value === "" ? "" : Number(input.value);
      return input.value;
    },
    saved: () => "Saved: new hand-outs follow it (a pass keeps what it was handed out with).",
  });
}
