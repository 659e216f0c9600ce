// What the quality pages share: a rating chip, a vote count, a value picker and a refusal's
// messages per field. Text goes in as text nodes (../dom.js), never as HTML.
import { el } from "../dom.js";

export const LABEL = { 1: "+1", 0: "0", "-1": "−1" };
const KIND = { 1: "good", 0: "neutral", "-1": "bad" };

/** A +1 / 0 / −1 chip; "—" for no rating. */
export function rating(value) {
  if (value === null || value === undefined) return el("span", "rating none", "—");
  return el("span", `rating ${KIND[value]}`, LABEL[value]);
}

/** The votes in reading order, +1 first: ``[{value, count, names}]``, ``names`` from ``voters``
 * (``{value: [names]}``; who voted what) or empty where the caller has no names. */
export function ballots(counts, voters = {}) {
  return ["1", "0", "-1"].filter((value) => counts[value])
    .map((value) => ({ value: Number(value), count: counts[value], names: voters[value] || [] }));
}

/** ``{"-1": 2, "1": 1}`` as chips with counts: "+1 ×1 −1 ×2"; with ``voters``, each count
 * followed by who gave it: "+1 ×1 ann · −1 ×2 bea, cal". */
export function votes(counts, voters) {
  const box = el("span", "votes");
  for (const { value, count, names } of ballots(counts, voters)) {
    const group = el("span", "vote");
    group.dataset.value = value;
    group.append(rating(value), " ", el("span", "vote-count", `×${count}`));
    if (names.length) group.append(" ", el("span", "voters", names.join(", ")));
    box.append(group, " ");
  }
  return box;
}

/** The step's number as people read it: 3, or 3.2 for the second alternative at step 3. */
export function stepNumber(step) {
  return step.alternative ? `${step.position + 1}.${step.alternative}` : String(step.position + 1);
}

/** A <select> of −1 / 0 / +1 and, with ``none``, an empty choice labelled ``none``. */
export function valueSelect(current, label, none = "—") {
  const select = el("select", "value-select");
  select.setAttribute("aria-label", label);
  const options = none === null ? [] : [["", none]];
  options.push(["1", "+1"], ["0", "0"], ["-1", "−1"]);
  for (const [value, text] of options) {
    const option = el("option", null, text);
    option.value = value;
    select.append(option);
  }
  select.value = current === null || current === undefined ? "" : String(current);
  return select;
}

/** The select's value as a number, or null when empty. */
export function selected(select) {
  return select.value === "" ? null : Number(select.value);
}

/** ``{field: message}`` of a refused request: the API's ``{detail, field}`` or DRF's ``{field: [messages]}``. */
export function fieldErrors(error) {
  const data = error.data;
  if (!data || typeof data !== "object") return {};
  if ("detail" in data) return data.field ? { [data.field]: data.detail } : {};
  return Object.fromEntries(Object.entries(data).map(([k, v]) => [k, Array.isArray(v) ? v.join(" ") : String(v)]));
}

/** A refusal's message for people: the server's detail without the status prefix. */
export function errorText(error) {
  const data = error.data;
  if (data && typeof data === "object" && data.detail) return String(data.detail);
  return error.message;
}

/** A line that says what just happened (role=status, so screen readers hear it). */
export function statusLine(testid) {
  const line = el("p", "q-status small");
  line.setAttribute("role", "status");
  if (testid) line.dataset.testid = testid;
  return line;
}
