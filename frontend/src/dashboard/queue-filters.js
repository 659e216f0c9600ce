// The adjudication queue's filter (frontend/src/dashboard/adjudication.js) as the page's address
// holds it and as the API takes it, and the summary line of a collapsed disagreement. Pure: no DOM.
//
// The address says a step as people read it (step 3 is the third step); the API takes its
// position (0-based, as every step's ``position``). Only here is one turned into the other.

export const FILTERS = ["state", "annotator", "generation", "step"];
export const STATES = ["open", "ruled", "all"];

/** The filter in an address's query (``?state=ruled&step=3``): the known keys with a value; a
 * step that is not a whole number from 1 is left out rather than sent on (the API would refuse it). */
export function filtersFrom(search) {
  const here = new URLSearchParams(search);
  const filters = {};
  for (const name of FILTERS) {
    const value = (here.get(name) || "").trim();
    if (!value) continue;
    if (name === "step" && !/^[1-9][0-9]{0,8}$/.test(value)) continue;
    if (name === "state" && !STATES.includes(value)) continue;
    filters[name] = value;
  }
  return filters;
}

/** The address's query with ``filters`` in place of the old filter; other keys (none yet) kept. */
export function addressQuery(search, filters) {
  const params = new URLSearchParams(search);
  for (const name of FILTERS) params.delete(name);
  for (const name of FILTERS) if (filters[name] && !(name === "state" && filters[name] === "open")) params.set(name, filters[name]);
  const query = params.toString();
  return query ? `?${query}` : "";
}

/** The API's query of ``filters`` and a page: ``state`` open unless said, the step as a position. */
export function apiQuery(filters, limit, offset) {
  const params = new URLSearchParams({ state: filters.state || "open" });
  if (filters.annotator) params.set("annotator", filters.annotator);
  if (filters.generation) params.set("generation", filters.generation);
  if (filters.step) params.set("position", String(Number(filters.step) - 1));
  params.set("limit", String(limit));
  params.set("offset", String(offset));
  return params.toString();
}

/** The start of a problem for a one-line summary: whitespace folded, cut at a word within
 * ``max`` characters, never inside a formula (an odd ``$``, an unclosed ``\(`` or ``\[`` is cut
 * off with what follows it), so the math renderer gets whole formulas only. */
export function excerpt(text, max = 90) {
  const flat = String(text || "").replace(/\s+/g, " ").trim();
  if (flat.length <= max) return flat;
  let cut = flat.slice(0, max);
  const space = cut.lastIndexOf(" ");
  if (space > max / 2) cut = cut.slice(0, space);
  const dollars = [...cut.matchAll(/(?<!\\)\$/g)].map((m) => m.index);
  if (dollars.length % 2) cut = cut.slice(0, dollars[dollars.length - 1]);
  for (const [open, close] of [["\\(", "\\)"], ["\\[", "\\]"]]) {
    const opened = cut.lastIndexOf(open);
    if (opened > cut.lastIndexOf(close)) cut = cut.slice(0, opened);
  }
  return `${cut.trimEnd()}…`;
}

/** The steps a collapsed disagreement names: those the passes disagree on, in order. */
export function splitSteps(steps) {
  return steps.filter((step) => step.disagree);
}
