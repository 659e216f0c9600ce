// Entry of the lead's reports inbox (labeling/templates/labeling/inbox.html): the passes annotators
// gave up on and the problems they flagged as bad, across the project, each resolved with a note
// (POST /api/assignments/{id}/resolve/, which the audit log keeps).
import "./main.js";
import "./dashboard/dashboard.css";
import "./audit/audit.css";
import { el } from "./dom.js";
import { optionsFromData, renderMath } from "./math.js";
import { call } from "./dashboard/api.js";

const PAGE = 50;
const REASONS = { give_up: "Gave up", bad_problem: "Bad problem" };

const root = document.getElementById("inbox");
if (root) start(root);

function start(root) {
  const options = optionsFromData(root.dataset);
  const list = el("div", "inbox-list");
  list.dataset.testid = "inbox-list";
  root.querySelector(".dash-loading")?.remove();
  root.append(list);
  const tabs = [...root.querySelectorAll("[data-state-tab]")];
  let state = "open";
  let offset = 0;
  const load = async () => {
    for (const tab of tabs) tab.setAttribute("aria-selected", String(tab.dataset.stateTab === state));
    root.dataset.state = "loading";
    try {
      const answer = await call(`${root.dataset.reportsUrl}?${new URLSearchParams({ state, limit: PAGE, offset })}`);
      draw(answer);
      root.dataset.state = "ready";
    } catch (error) {
      list.replaceChildren(el("p", "errors", `Could not load: ${error.message}`));
      root.dataset.state = "error";
    }
  };
  const draw = ({ count, results }) => {
    list.replaceChildren();
    const words = { open: "open report", resolved: "resolved report", all: "report" }[state];
    const summary = el("p", "muted", `${count} ${words}${count === 1 ? "" : "s"}`);
    summary.dataset.testid = "inbox-count";
    list.append(summary);
    if (!results.length) list.append(el("p", "card", state === "open" ? "Nothing to resolve." : "None."));
    for (const report of results) list.append(card(report, root, options));
    if (count > PAGE) {
      const pager = el("nav", "audit-pager");
      const previous = el("button", null, "← Newer");
      previous.disabled = offset === 0;
      previous.addEventListener("click", () => { offset = Math.max(0, offset - PAGE); load(); });
      const next = el("button", null, "Older →");
      next.disabled = offset + results.length >= count;
      next.addEventListener("click", () => { offset += PAGE; load(); });
      pager.append(previous, next);
      list.append(pager);
    }
  };
  for (const tab of tabs) {
    tab.addEventListener("click", () => {
      state = tab.dataset.stateTab;
      offset = 0;
      load();
    });
  }
  load();
}

function card(report, root, options) {
  const box = el("article", "card report");
  box.dataset.assignment = report.assignment;
  box.dataset.testid = "report";
  const head = el("div", "report-head");
  const who = report.drilldown ? el("a", null, report.username || `annotator ${report.annotator}`)
    : el("span", null, report.username || "an imported labeler");
  if (report.drilldown) who.href = report.drilldown;
  head.append(el("span", `tag report-${report.reason}`, REASONS[report.reason] || report.reason), who,
    el("span", "muted small", `pass ${report.assignment} · ${new Date(report.submitted_at).toLocaleString()}`));
  box.append(head);
  box.append(el("p", "report-note", report.note ? `“${report.note}”` : "No note given."));
  box.append(renderMath(el("div", "q-problem"), report.problem, options));
  if (report.resolved) {
    box.append(resolvedLine(report));
    return box;
  }
  const form = el("form");
  const label = el("label", "sr-only", "Note");
  const note = el("textarea");
  note.name = "note";
  note.placeholder = "What was done (e.g. problem fixed, annotator told)";
  note.maxLength = 2000;
  note.id = `note-${report.assignment}`;
  label.htmlFor = note.id;
  const button = el("button", "primary", "Resolve");
  button.type = "submit";
  const message = el("p", "muted small");
  message.setAttribute("role", "status");
  form.append(label, note, button);
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    button.disabled = true;
    try {
      const done = await call(root.dataset.resolveUrl.replace("/0/", `/${report.assignment}/`), {
        method: "POST", body: { note: note.value },
      });
      form.replaceWith(resolvedLine(done));
      box.classList.add("resolved");
      message.textContent = "Resolved: it has left the open inbox.";
    } catch (error) {
      message.textContent = `Could not resolve: ${error.message}`;
      button.disabled = false;
    }
  });
  box.append(form, message);
  return box;
}

function resolvedLine(report) {
  const line = el("p", "resolution");
  line.dataset.testid = "resolution";
  line.append(el("strong", null, "Resolved"),
    ` by ${report.resolved_by || "someone"} ${new Date(report.resolved_at).toLocaleString()}`,
    report.resolution_note ? `: ${report.resolution_note}` : ".");
  return line;
}
