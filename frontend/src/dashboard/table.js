// The annotator table: one row per annotator, sorted by a click on any column's header
// (again: the other way). Paused and failed annotators are highlighted with the reason; an
// outlier's flags (labeling/stats/outliers.py) are in words in the Flags column and colour the
// cell of the figure that stands out.
import { el } from "../dom.js";
import { count, duration, fmt, pct, scroller, statusTag } from "./dom.js";

const BLOCKED = new Set(["paused", "failed_screening"]);

export const MAJORITY_HELP = "Leave-one-out agreement: Cohen's κ of their ratings against the majority of the " +
  "other annotators' ratings of the same steps (their own rating never counts towards the majority; steps where " +
  "the others tie are left out), with its 95% bootstrap interval. 1: always with the others; 0: no better than chance.";

// [key, heading, value of a row for sorting, cell text, header tooltip]
export const COLUMNS = [
  ["label", "Annotator", (r) => r.label.toLowerCase()],
  ["status", "Status", (r) => r.status || "active"],
  ["flags", "Flags", (r) => r.flags.length, null,
    "Where they stand out from the rest of the team (thresholds below the table). Sort to put the flagged first."],
  ["gold_score", "Gold score", (r) => r.gold_score, (r) => `${fmt(r.gold_score)} (${r.gold_passes})`,
    "Rolling gold score (share of gold steps rated as the gold), and over how many gold passes."],
  ["wrong_prelabels_accepted", "Wrong pre-labels accepted", (r) => acceptedShare(r), acceptedText,
    "Of the wrong pre-labels their gold passes showed (traps, and the source's own mistakes), how many they " +
    "accepted as they were: each is also a gold miss. Only where the project shows pre-labels."],
    ["kappa_majority", "κ vs others' majority", (r) => r.kappa_majority, majorityText, MAJORITY_HELP],
  ["kappa", "mean κ per pair", (r) => r.kappa, (r) => fmt(r.kappa),
    "Mean of Cohen's κ with each other annotator on the steps both rated."],
  ["share_plus", "+1", (r) => r.distribution["1"], (r) => pct(r.distribution["1"]),
    "Share of +1 among their main-step ratings (alternatives not counted)."],
  ["share_zero", "0", (r) => r.distribution["0"], (r) => pct(r.distribution["0"]),
    "Share of 0 among their main-step ratings (alternatives not counted)."],
  ["share_minus", "−1", (r) => r.distribution["-1"], (r) => pct(r.distribution["-1"]),
    "Share of −1 among their main-step ratings (alternatives not counted)."],
  ["passes", "Passes", (r) => r.passes, (r) => count(r.passes ?? 0)],
  ["steps", "Steps (all ratings)", (r) => r.steps, (r) => count(r.steps ?? 0),
    "Every rating they gave, alternatives included (the +1 / 0 / −1 shares count main steps only)."],
  ["median_step_seconds", "s / step", (r) => r.median_step_seconds, (r) => fmt(r.median_step_seconds, 1),
    "Median over their passes of the pass's time divided by its ratings."],
  ["median_pass_seconds", "Time / pass", (r) => r.median_pass_seconds, (r) => duration(r.median_pass_seconds)],
  ["active_hours", "Active time", (r) => r.active_hours, (r) => duration(r.active_hours == null ? null : r.active_hours * 3600)],
];

function acceptedShare(r) {
  return r.wrong_prelabels ? r.wrong_prelabels_accepted / r.wrong_prelabels : null;
}

function acceptedText(r) {
  return r.wrong_prelabels ? `${r.wrong_prelabels_accepted} of ${r.wrong_prelabels}` : "—";
}

function majorityText(r) {
  if (r.kappa_majority === null || r.kappa_majority === undefined) return "—";
  const interval = r.kappa_majority_low === null || r.kappa_majority_low === undefined ? ""
    : ` [${fmt(r.kappa_majority_low)}, ${fmt(r.kappa_majority_high)}]`;
  return `${fmt(r.kappa_majority)}${interval}`;
}

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
  for (const [key, heading, , , help] of COLUMNS) {
    const th = el("th", null, heading);
    th.dataset.key = key;
    if (help) th.title = help;
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
  // The exports' labeler id (the CSV's labeler column), for a lead to join them on.
  if (row.labeler) tr.dataset.labeler = row.labeler;
  tr.dataset.status = row.status || "active";
  if (BLOCKED.has(row.status)) tr.className = "blocked";
  else if (row.flags.length) tr.className = "flagged";
  tr.dataset.flags = row.flags.map((f) => f.kind).join(" ");
  const flaggedColumns = new Map(row.flags.map((f) => [f.column, f]));
  for (const [key, , keyOf, text] of COLUMNS) {
    const td = el("td");
    td.dataset.key = key;
    if (key === "flags") {
      td.append(...flagTags(row.flags));
    } else if (key === "label") {
      const link = el("a", null, row.label);
      link.href = linkOf(row);
      if (row.labeler) link.title = `Labeler id in the exports: ${row.labeler}`;
      td.append(link);
    } else if (key === "status") {
      td.append(statusTag(row.status));
      if (row.status_reason && row.status !== "active") td.append(el("div", "reason", row.status_reason));
    } else {
      td.textContent = String(text ? text(row) : keyOf(row));
      if (key === "kappa_majority" && row.kappa_majority_reason) td.title = row.kappa_majority_reason;
    }
    const flag = flaggedColumns.get(key);
    if (flag) {
      td.classList.add("flagged-cell");
      td.title = `${flag.label}: ${flag.text}`;
    }
    tr.append(td);
  }
  return tr;
}

/** An outlier's flags as tags, each in words (its label) with the figures in its title and for screen readers. */
export function flagTags(flags) {
  if (!flags.length) return [el("span", "muted", "—")];
  return flags.map((flag) => {
    const tag = el("span", `tag flag flag-${flag.kind}`, flag.label);
    tag.title = flag.text;
    tag.dataset.flag = flag.kind;
    tag.append(el("span", "sr-only", `: ${flag.text}`));
    return tag;
  });
}
