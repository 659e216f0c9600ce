// An audit entry's before and after as a person reads them: "field: old → new" for each field
// that changed, or the one side there is (something made, or something removed).
import { el } from "../dom.js";

function text(value) {
  if (value === null || value === undefined) return "—";
  if (typeof value === "object") return JSON.stringify(value);
  return String(value);
}

/** A list node of the change from ``before`` to ``after`` (either may be null). */
export function describe(before, after) {
  const list = el("ul", "audit-change");
  const keys = [...new Set([...Object.keys(before || {}), ...Object.keys(after || {})])];
  if (!keys.length) return el("span", "muted", "—");
  for (const key of keys) {
    const had = before && key in before, has = after && key in after;
    const item = el("li");
    item.append(el("span", "audit-key", `${key}: `));
    if (had && has) item.append(`${text(before[key])} → ${text(after[key])}`);
    else if (has) item.append(text(after[key]));
    else item.append(el("s", null, text(before[key])));
    list.append(item);
  }
  return list;
}
