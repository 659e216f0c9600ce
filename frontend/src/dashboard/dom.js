// The dashboard's small DOM helpers (the element builder itself is ../dom.js): every text goes
// in as a text node, never as HTML.
import { el } from "../dom.js";

const SVG = "http://www.w3.org/2000/svg";

export function svg(tag, attributes = {}, text) {
  const node = document.createElementNS(SVG, tag);
  for (const [name, value] of Object.entries(attributes)) node.setAttribute(name, String(value));
  if (text !== undefined) node.textContent = String(text);
  return node;
}

/**
 * Say how many things a section lists now (the quality page shows it on the section's tab):
 * a "count" event from ``node`` that bubbles up to the section; null: not known.
 */
export function tellCount(node, n) {
  node.dispatchEvent(new CustomEvent("count", { bubbles: true, detail: n }));
}

/** A tab's count as it follows its label: " (12)", "" while unknown. */
export function tabCount(n) {
  return n === null || n === undefined ? "" : ` (${count(n)})`;
}

/** A number for people: ``digits`` decimals, "—" for missing. */
export function fmt(value, digits = 2) {
  if (value === null || value === undefined || Number.isNaN(value)) return "—";
  return Number(value).toFixed(digits);
}

/** A count for people: thousands grouped ("5,276"), "—" for missing. */
export function count(value) {
  return value === null || value === undefined ? "—" : Number(value).toLocaleString("en-US");
}

/** A length of time in the unit people read it in: "40 s", "25 min", "3.5 h", "2.1 days". */
export function duration(seconds) {
  if (seconds === null || seconds === undefined) return "—";
  if (seconds < 90) return `${Math.round(seconds)} s`;
  if (seconds < 90 * 60) return `${Math.round(seconds / 60)} min`;
  if (seconds < 48 * 3600) return `${(seconds / 3600).toFixed(1)} h`;
  return `${(seconds / 86400).toFixed(1)} days`;
}

export function pct(value) {
  return value === null || value === undefined ? "—" : `${Math.round(value * 100)}%`;
}

export function section(title, testid) {
  const box = el("section", "card dash-card");
  if (testid) box.dataset.testid = testid;
  box.append(el("h2", null, title));
  return box;
}

/** The status tag of an annotator's standing; paused and failed ones stand out. */
export function statusTag(status) {
  const tag = el("span", `tag status-${status || "active"}`, (status || "active").replace("_", " "));
  return tag;
}

/** ``node`` (a wide table) in a box that scrolls sideways on its own, reachable by keyboard. */
export function scroller(node, label) {
  const box = el("div", "table-scroll");
  box.tabIndex = 0;
  box.setAttribute("role", "region");
  box.setAttribute("aria-label", label);
  box.append(node);
  return box;
}
