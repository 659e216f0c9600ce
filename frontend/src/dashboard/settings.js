// The quality settings form: gold rate, automatic pausing (threshold, window, minimum passes)
// and screening (on/off, set size, pass mark). The server judges every value: a refused one
// gets the server's message beside its field (novalidate: the browser does not pre-empt it).
import { call } from "./api.js";
import { el } from "../dom.js";
import { section } from "./dom.js";
import { settingsForm } from "./form.js";

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
  const count = el("p", "muted small q-span");
  count.dataset.testid = "screening-items";
  const showCount = (n) => {
    count.textContent = `The screening set: ${n} screening item${n === 1 ? "" : "s"} in this project. Mark a gold ` +
      "item as one in its gold editor (on an annotator's passes, Edit gold ratings).";
  };
  showCount(values.screening_items);
  settingsForm(box, {
    url, fields: FIELDS, values, formClass: "q-form", saveLabel: "Save settings", saveClass: "q-button primary",
    ids: { prefix: "setting-", form: "settings-form", error: "error-", message: "settings-message" },
    group(field, form) {
      form.append(el("fieldset", null, field.group));
      if (field.group === "Screening") form.append(count);
    },
    control(field) {
      const input = el("input");
      input.type = field.checkbox ? "checkbox" : "number";
      if (!field.checkbox) input.step = field.step;
      return input;
    },
    show(inputs, shown) {
      for (const [name, input] of Object.entries(inputs)) {
        if (input.type === "checkbox") input.checked = Boolean(shown[name]);
        else input.value = shown[name];
      }
    },
    read: (name, input) => (input.type === "checkbox" ? input.checked : input.value === "" ? "" : Number(input.value)),
    saved(stored) {
      showCount(stored.screening_items);
      return "Saved.";
    },
  });
}

export function settingsSection() {
  return section("Quality settings", "settings");
}
