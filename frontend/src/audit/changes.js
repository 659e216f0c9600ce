// An audit entry's before and after as a person reads them: "field: old → new" for each field
// that changed, or the one side there is (something made, or something removed).
import { el } from "../dom.js";

function text(value) {
  if (value === null || value === undefined || value === "") return "—";
  if (typeof value === "object") return JSON.stringify(value);
  return String(value);
}

/** ``[{key, kind, was, now}]``: each field of ``before``/``after`` (either may be null), ``kind``
 * "changed" (in both), "set" (only after) or "removed" (only before), the values as text. */
export function changes(before, after) {
  const keys = [...new Set([...Object.keys(before || {}), ...Object.keys(after || {})])];
  return keys.map((key) => {
    const had = before != null && key in before, has = after != null && key in after;
    const kind = had && has ? "changed" : has ? "set" : "removed";
    return { key, kind, was: had ? text(before[key]) : null, now: has ? text(after[key]) : null };
  });
}

/** A list node of the change from ``before`` to ``after``. */
export function describe(before, after) {
  const found = changes(before, after);
  if (!found.length) return el("span", "muted", "—");
  const list = el("ul", "audit-change");
  for (const { key, kind, was, now } of found) {
    const item = el("li");
    item.append(el("span", "audit-key", `${key}: `));
    if (kind === "changed") item.append(`${was} → ${now}`);
    else if (kind === "set") item.append(now);
    else item.append(el("s", null, was));
    list.append(item);
  }
  return list;
}
