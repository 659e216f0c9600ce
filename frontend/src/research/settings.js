// The loop's settings form: what a generation scores and selects, and how the PRM retrains
// (GET/PATCH the project's loop-settings, scoring/loop_settings.py). The server judges every
// value; a refused one gets the server's message beside its field (novalidate: the browser
// does not pre-empt it), and nothing is stored until all of them are good.
import { call } from "../dashboard/api.js";
import { errorText, fieldErrors, statusLine } from "../dashboard/ratings.js";
import { el } from "../dom.js";
import "./settings.css";

const FIELDS = [
  { group: "Active learning" },
  { name: "pool_limit", label: "Pool to score", step: "1",
    help: "Candidate-pool solutions a generation scores, lowest ids first (0: the whole pool)." },
  { name: "generation_size", label: "Generation size", step: "1",
    help: "Solutions a generation selects for the annotators' queue." },
  { name: "selection_wrong_share", label: "Convincing wrong answers", step: "0.05",
    help: "Share of a generation taken from the highest-scored solutions whose final answer is wrong, 0 to 1." },
  { name: "selection_per_problem_cap", label: "Per-problem cap", step: "1",
    help: "Most solutions of one problem in a generation (0: no cap)." },
  { group: "Retraining" },
  { name: "retrain_threshold", label: "Retrain after", step: "1",
    help: "New submitted passes since the last checkpoint that make a retrain due (0: never; Retrain now still works)." },
  { name: "retrain_metric", label: "Promotion metric", select: true,
    help: "A new checkpoint becomes the champion only when it beats the champion on this held-out figure." },
  { name: "base_model_path", label: "Base model", text: true,
    help: "Empty: the bundled all-MiniLM-L6-v2. Else an absolute path on the server (the GPU worker reads it " +
      "there) to a Hugging Face model directory or a Stepmark checkpoint." },
  { name: "train_settings", label: "Train settings", json: true,
    help: 'JSON overrides of the training run, e.g. {"lr": 1e-5, "epochs": 2, "max_tokens": 4096} (empty: the defaults).' },
];

function control(field, values) {
  if (field.select) {
    const select = el("select");
    const choices = values.metric_choices.map((c) => [c.value, c.label]);
    // A value set elsewhere (the admin) that is no longer offered stays visible, marked.
    if (!choices.some(([value]) => value === values[field.name])) choices.push([values[field.name], `${values[field.name]} (unknown)`]);
    for (const [value, label] of choices) {
      const option = el("option", null, label);
      option.value = value;
      select.append(option);
    }
    return select;
  }
  if (field.json) {
    const area = el("textarea");
    area.rows = 3;
    area.spellcheck = false;
    return area;
  }
  const input = el("input");
  input.type = field.text ? "text" : "number";
  if (!field.text) input.step = field.step;
  return input;
}

/** An object as one readable JSON line ({"lr": 1e-05, "epochs": 2}); "" for none. */
function jsonLine(value) {
  const entries = Object.entries(value ?? {});
  return entries.length ? `{${entries.map(([k, v]) => `${JSON.stringify(k)}: ${JSON.stringify(v)}`).join(", ")}}` : "";
}

function show(inputs, values) {
  for (const [name, input] of Object.entries(inputs)) {
    const value = values[name];
    if (name === "train_settings") input.value = jsonLine(value);
    else input.value = value ?? "";
  }
}

function read(name, input) {
  if (name === "train_settings") {
    const text = input.value.trim();
    if (!text) return {};
    try {
      return JSON.parse(text);
    } catch {
      return text; // the server answers what is wrong with it
    }
  }
  if (input.type === "number") return input.value === "" ? null : Number(input.value);
  return input.value;
}

export async function showLoopSettings(box, urls) {
  const url = urls.loopSettingsUrl;
  const values = await call(url);
  const form = el("form", "loop-form");
  form.noValidate = true;
  form.dataset.testid = "loop-settings-form";
  const inputs = {};
  const errors = {};
  const pool = el("p", "muted small loop-span");
  pool.dataset.testid = "candidate-pool";
  for (const field of FIELDS) {
    if (field.group) {
      form.append(el("h3", "loop-group", field.group));
      if (field.group === "Active learning") form.append(pool);
      continue;
    }
    const input = control(field, values);
    input.id = `loop-${field.name}`;
    input.name = field.name;
    const help = el("span", "help", field.help);
    help.id = `${input.id}-help`;
    const error = el("span", "field-error");
    error.id = `${input.id}-error`;
    error.dataset.testid = `loop-error-${field.name}`;
    input.setAttribute("aria-describedby", `${help.id} ${error.id}`);
    const label = el("label", null, field.label);
    label.htmlFor = input.id;
    const cell = el("div");
    cell.append(input, help, error);
    form.append(label, cell);
    inputs[field.name] = input;
    errors[field.name] = error;
  }
  const showPool = (n) => {
    pool.textContent = `The candidate pool holds ${n.toLocaleString()} solution${n === 1 ? "" : "s"} ` +
      "never selected nor handed out.";
  };
  show(inputs, values);
  showPool(values.candidate_pool);
  const save = el("button", "primary", "Save loop settings");
  save.type = "submit";
  save.dataset.testid = "loop-save";
  const message = statusLine("loop-settings-message");
  const buttons = el("div");
  buttons.append(save, message);
  form.append(el("span"), buttons);
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    message.textContent = "";
    message.classList.remove("errors");
    const body = {};
    for (const [name, input] of Object.entries(inputs)) {
      body[name] = read(name, input);
      errors[name].textContent = "";
      input.removeAttribute("aria-invalid");
    }
    save.disabled = true;
    try {
      const saved = await call(url, { method: "PATCH", body });
      show(inputs, saved);
      showPool(saved.candidate_pool);
      message.textContent = "Saved. The next generation and retrain use these settings.";
    } catch (error) {
      const found = fieldErrors(error);
      let first = null;
      for (const [name, text] of Object.entries(found)) {
        if (!errors[name]) continue;
        errors[name].textContent = text;
        inputs[name].setAttribute("aria-invalid", "true");
        first ??= inputs[name];
      }
      message.textContent = first ? "Not saved: fix the marked fields." : `Not saved: ${errorText(error)}`;
      message.classList.add("errors");
      first?.focus();
    } finally {
      save.disabled = false;
    }
  });
  box.append(form);
}
