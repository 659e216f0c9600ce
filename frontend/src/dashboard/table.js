// The annotator table: one row per annotator, sorted by a click on any column's header
// (again: the other way). Paused and failed annotators are highlighted with the reason.
import { el } from "../dom.js";
import { count, duration, fmt, pct, scroller, statusTag } from "./dom.js";

const BLOCKED = new Set(["paused", "failed_screening"]);

// [key, heading, value of a row for sorting, cell text]
export const COLUMNS = [
  ["label", "Annotator", (r) => r.label.toLowerCase()],
  ["status", "Status", (r) => r.status || "active"],
  ["gold_score", "Gold score", (r) => r.gold_score, (r) => `${fmt(r.gold_score)} (${r.gold_passes})`],
  ["alpha", "α vs others", (r) => r.alpha, (r) => fmt(r.alpha)],
  ["kappa", "κ vs others", (r) => r.kappa, (r) => fmt(r.kappa)],
  ["plus", "+1", (r) => r.distribution["1"], (r) => pct(r.distribution["1"])],
  ["zero", "0", (r) => r.distribution["0"], (r) => pct(r.distribution["0"])],
  ["minus", "−1", (r) => r.distribution["-1"], (r) => pct(r.distribution["-1"])],
  ["passes", "Passes", (r) => r.passes, (r) => count(r.passes ?? 0)],
  ["steps", "Steps", (r) => r.steps, (r) => count(r.steps ?? 0)],
  ["median_step_seconds", "s / step", (r) => r.median_step_seconds, (r) => fmt(r.median_step_seconds, 1)],
  ["median_pass_seconds", "Time / pass", (r) => r.median_pass_seconds, (r) => duration(r.median_pass_seconds)],
  ["active_hours", "Active time", (r) => r.active_hours, (r) => duration(r.active_hours == null ? null : r.active_hours * 3600)],
];

function compare(a, b) {
  // Missing values sort last whichever way the column is sorted.
  if (a === null || a === undefined) return b === null || b === undefined ? 0 : 1;
  if (b === null || b === undefined) return -1;
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Build the table into ``box``; ``linkOf(row)`` gives the drill-down URL. */
export function annotatorTable(box, rows, linkOf) {
  const table = el("table", "dash-table");
  table.dataset.testid = "annotator-table";
  const head = el("tr");
  const body = el("tbody");
  let sortKey = "label";
  let ascending = true;
  const draw = () => {
    const [, , keyOf] = COLUMNS.find(([key]) => key === sortKey);
    const sorted = [...rows].sort((a, b) => {
      const order = compare(keyOf(a), keyOf(b));
      return order === 0 ? compare(a.label, b.label) : ascending || keyOf(a) == null || keyOf(b) == null ? order : -order;
    });
    body.replaceChildren(...sorted.map((row) => rowOf(row, linkOf)));
    for (const th of head.children) {
      th.setAttribute("aria-sort", th.dataset.key === sortKey ? (ascending ? "ascending" : "descending") : "none");
    }
  };
  for (const [key, heading] of COLUMNS) {
    const th = el("th", null, heading);
    th.dataset.key = key;
    th.tabIndex = 0;
    const sort = () => {
      ascending = sortKey === key ? !ascending : true;
      sortKey = key;
      draw();
    };
    th.addEventListener("click", sort);
    th.addEventListener("keydown", (e) => e.key === "Enter" && sort());
    head.append(th);
  }
  table.append(el("thead"), body);
  table.tHead.append(head);
  draw();
  box.append(scroller(table, "Annotators"));
  return table;
}

function rowOf(row, linkOf) {
  const tr = el("tr");
  tr.dataset.annotator = row.id;
  tr.dataset.status = row.status || "active";
  if (BLOCKED.has(row.status)) tr.className = "blocked";
  for (const [key, , keyOf, text] of COLUMNS) {
    const td = el("td");
    td.dataset.key = key;
    if (key === "label") {
      const link = el("a", null, row.label);
      link.href = linkOf(row);
      td.append(link);
    } else if (key === "status") {
      td.append(statusTag(row.status));
      if (row.status_reason && row.status !== "active") td.append(el("div", "reason", row.status_reason));
    } else {
      td.textContent = String(text ? text(row) : keyOf(row));
    }
    tr.append(td);
  }
  return tr;
}
