// Registering a PRM from a directory the workers read (POST /api/projects/{id}/checkpoints/,
// scoring/registry.py): the path, its layout (auto: told from the files) and TRL's step separator;
// the refusal names what the directory lacks. A worker then validates it; the checkpoint table
// shows "validating", then "registered" or "invalid" with the reason. Every text goes in through
// dom.js's el() as a text node: a path or an error is never read as HTML.
import { call } from "../dashboard/api.js";
import { el } from "../dom.js";
import { button } from "./util.js";

export const LAYOUTS = [
  ["auto", "detect from the files"],
  ["stepmark", "Stepmark checkpoint"],
  ["qwen-prm", "Qwen2.5-Math-PRM layout"],
  ["math-shepherd", "Math-Shepherd layout"],
  ["token-classification", "token classification (TRL PRMTrainer output)"],
];

function field(labelText, control, id) {
  control.id = id;
  const label = el("label", null, labelText);
  label.htmlFor = id;
  return [label, control];
}

/** The form; ``registered(checkpoint)`` is called with the stored row (status "validating"). */
export function registerForm(urls, registered) {
  const form = el("form", "register-form");
  form.dataset.testid = "register-form";
  const path = el("input");
  path.type = "text";
  path.placeholder = "/data/huggingface/Qwen2.5-Math-PRM-7B";
  path.required = true;
  path.size = 48;
  const layout = el("select");
  for (const [value, text] of LAYOUTS) {
    const option = el("option", null, text);
    option.value = value;
    layout.append(option);
  }
  const separator = el("input");
  separator.type = "text";
  separator.size = 6;
  separator.placeholder = "\\n";
  separator.title = "token-classification only: the step separator TRL trained with (empty: a newline, TRL's default)";
  const champion = el("input");
  champion.type = "checkbox";
  const message = el("span", "job-status");
  message.dataset.testid = "register-status";
  message.setAttribute("role", "status");
  const showSeparator = () => { separator.disabled = layout.value !== "token-classification"; };
  layout.addEventListener("change", showSeparator);
  showSeparator();
  const send = async () => {
    message.className = "job-status";
    const body = { path: path.value.trim(), layout: layout.value, champion: champion.checked };
    // Typed as \n or \t: the escape, not the two characters.
    const typed = separator.value.replace(/\\n/g, "\n").replace(/\\t/g, "\t");
    if (!separator.disabled && typed) body.step_separator = typed;
    try {
      const row = await call(urls.checkpointsUrl, { method: "POST", body });
      message.textContent = `Checkpoint #${row.id} (${row.layout}): waiting for a worker to load it…`;
      message.dataset.state = "queued";
      await registered(row);
    } catch (error) {
      message.className = "job-status failed";
      message.dataset.state = "refused";
      message.textContent = `Refused: ${error.data?.detail || error.message}`;
    }
  };
  form.addEventListener("submit", (event) => { event.preventDefault(); send(); });
  const submit = button("Register", "register-prm", send);
  const championLabel = el("label", null, " make it the champion once valid");
  championLabel.prepend(champion);
  form.append(el("h3", null, "Register a PRM"),
    el("p", "muted small", "A directory the GPU workers can read: a Stepmark checkpoint, the Qwen2.5-Math-PRM or " +
      "Math-Shepherd layout, or a TRL PRMTrainer output. A worker loads it, finds its step token and scores a " +
      "smoke example before it can be used."),
    ...field("Directory", path, "register-path"), ...field("Layout", layout, "register-layout"),
    ...field("Step separator", separator, "register-separator"), championLabel, submit, message);
  return form;
}

/** A row's actions: make it the champion, evaluate it against the champion; ``done`` redraws. */
export function checkpointActions(c, urls, done) {
  const box = el("span", "checkpoint-actions");
  const usable = ["registered", "rejected", "champion"].includes(c.status) && !c.is_champion;
  if (!usable) return box;
  const note = el("span", "job-status");
  const act = (label, testid, url, text) => button(label, testid, async () => {
    try {
      await call(url, { method: "POST" });
      note.className = "job-status";
      note.textContent = text;
      await done();
    } catch (error) {
      note.className = "job-status failed";
      note.textContent = error.data?.detail || error.message;
    }
  });
  box.append(
    act("Make champion", "make-champion", urls.championUrl.replace(/\/0\/champion\/$/, `/${c.id}/champion/`),
      `#${c.id} is the champion.`),
    act("Evaluate vs champion", "evaluate-checkpoint", urls.evaluateUrl.replace(/\/0\/evaluate\/$/, `/${c.id}/evaluate/`),
      "Evaluation queued; the row and the plots change when the worker is done."),
    note);
  return box;
}
