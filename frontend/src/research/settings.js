// The loop's settings form: what a generation scores and selects, and how the PRM retrains
// (GET/PATCH the project's loop-settings, scoring/loop_settings.py), built by dashboard/form.js.
import { call } from "../dashboard/api.js";
import { settingsForm } from "../dashboard/form.js";
import { el } from "../dom.js";
import "./settings.css";

const FIELDS = [
  { group: "Active learning" },
  { name: "pool_limit", label: "Pool to score", step: "1",
    help: "Candidate-pool solutions a generation scores, lowest ids first (0: the whole pool)." },
  { name: "generation_size", label: "Generation size", step: "1",
    help: "Solutions a generation selects for the annotators' queue." },
  { name: "selection_strategy", label: "Selection strategy", select: "strategy_choices",
    help: "How a generation is chosen: convincing wrong answers (the highest-scored wrong answers), uncertainty " +
      "(where the PRM disagrees with itself under MC dropout on its step head; 4 cheap head passes), " +
      "random (the baseline), or a mixture of them." },
  { name: "selection_mix", label: "Mixture shares", json: true,
    help: 'For a mixture: each strategy\'s share, summing to 1, e.g. {"convincing_wrong": 0.5, "uncertainty": 0.3, ' +
      '"random": 0.2}.' },
  { name: "selection_wrong_share", label: "Convincing wrong answers", step: "0.05",
    help: "Share of a generation taken from the highest-scored solutions whose final answer is wrong, 0 to 1." },
  { name: "selection_per_problem_cap", label: "Per-problem cap", step: "1",
    help: "Most solutions of one problem in a generation (0: no cap)." },
  { group: "Retraining" },
  { name: "retrain_threshold", label: "Retrain after", step: "1",
    help: "New submitted passes since the last checkpoint that make a retrain due (0: never; Retrain now still works)." },
  { name: "retrain_metric", label: "Promotion metric", select: "metric_choices",
    help: "A new checkpoint becomes the champion only when it beats the champion on this held-out figure, " +
      "beyond the noise of the held-out set (the three settings below)." },
  { name: "promotion_min_problems", label: "Held-out problems needed", step: "1",
    help: "With fewer held-out problems the retrain does not judge at all: the champion stays." },
  { name: "promotion_confidence", label: "Promotion confidence", step: "0.01",
    help: "How sure the gain must be, 0.5 to 0.999: a paired bootstrap over the held-out problems must keep it " +
      "above 0 at this one-sided confidence." },
  { name: "promotion_guard_tolerance", label: "Guard tolerance", step: "0.01",
    help: "How much worse than the champion's the log loss and the calibration error (ECE) may be, absolute." },
  { name: "base_model_path", label: "Base model", text: true,
    help: "Empty: the bundled all-MiniLM-L6-v2. Else an absolute path on the server (the GPU worker reads it " +
      "there) to a Hugging Face model directory or a Stepmark checkpoint." },
  { name: "train_settings", label: "Train settings", json: true,
    help: 'JSON overrides of the training run, e.g. {"lr": 1e-5, "epochs": 2, "max_tokens": 4096} (empty: the defaults); ' +
      '{"start_from": "champion"} fine-tunes the champion instead of the base, {"processes": 4} trains on 4 GPUs.' },
];

function control(field, values) {
  if (field.select) {
    const select = el("select");
    const choices = values[field.select].map((c) => [c.value, c.label]);
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

const JSON_FIELDS = new Set(FIELDS.filter((f) => f.json).map((f) => f.name));

function show(inputs, values) {
  for (const [name, input] of Object.entries(inputs)) {
    const value = values[name];
    if (JSON_FIELDS.has(name)) input.value = jsonLine(value);
    else input.value = value ?? "";
  }
}

function read(name, input) {
  if (JSON_FIELDS.has(name)) {
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
  const pool = el("p", "muted small loop-span");
  pool.dataset.testid = "candidate-pool";
  const showPool = (n) => {
    pool.textContent = `The candidate pool holds ${n.toLocaleString()} solution${n === 1 ? "" : "s"} ` +
      "never selected nor handed out.";
  };
  showPool(values.candidate_pool);
  settingsForm(box, {
    url, fields: FIELDS, values, formClass: "loop-form", saveLabel: "Save loop settings",
    ids: { prefix: "loop-", form: "loop-settings-form", error: "loop-error-", message: "loop-settings-message",
           save: "loop-save" },
    group(field, form) {
      form.append(el("h3", "loop-group", field.group));
      if (field.group === "Active learning") form.append(pool);
    },
    control, show, read,
    saved(stored) {
      showPool(stored.candidate_pool);
      return "Saved. The next generation and retrain use these settings.";
    },
  });
}
