// Entry of the audit-log page (labeling/templates/labeling/audit.html): a project's leads' and
// researchers' actions, newest first, filtered by action, who and date, a page at a time, with the
// CSV of the same filter. The filter lives in the page's address, so a filtered view can be shared.
import "./main.js";
import "./dashboard/dashboard.css";
import "./audit/audit.css";
import { el } from "./dom.js";
import { call } from "./dashboard/api.js";
import { describe } from "./audit/changes.js";

const PAGE = 50;
const FILTERS = ["action", "actor", "since", "until"];

const root = document.getElementById("audit");
if (root) start(root);

function start(root) {
  const form = root.querySelector(".audit-filters");
  const csv = root.querySelector(".csv-link");
  const list = el("section", "card audit-list");
  list.dataset.testid = "audit-list";
  root.querySelector(".dash-loading")?.remove();
  root.append(list);
  const here = new URLSearchParams(location.search);
  for (const name of FILTERS) if (here.get(name)) form.elements[name].value = here.get(name);
  let offset = Number(here.get("offset")) || 0;

  const filter = () => {
    const params = new URLSearchParams();
    for (const name of FILTERS) if (form.elements[name].value) params.set(name, form.elements[name].value);
    return params;
  };
  const load = async () => {
    const params = filter();
    csv.href = `${root.dataset.auditUrl}?${new URLSearchParams([...params, ["format", "csv"]])}`;
    history.replaceState(null, "", `?${new URLSearchParams([...params, ...(offset ? [["offset", offset]] : [])])}`);
    root.dataset.state = "loading";
    try {
      const answer = await call(`${root.dataset.auditUrl}?${new URLSearchParams([...params, ["limit", PAGE], ["offset", offset]])}`);
      draw(list, answer, offset, (next) => { offset = next; load(); });
      root.dataset.state = "ready";
    } catch (error) {
      list.replaceChildren(el("p", "errors", `Could not load: ${error.message}`));
      root.dataset.state = "error";
    }
  };
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    offset = 0;
    load();
  });
  load();
}

function draw(list, answer, offset, go) {
  const { count, results } = answer;
  list.replaceChildren();
  const shown = results.length ? `Entries ${offset + 1}–${offset + results.length} of ${count}` : "No entries match.";
  const summary = el("p", "audit-count muted", shown);
  summary.dataset.testid = "audit-count";
  list.append(summary);
  if (results.length) {
    const table = el("table", "dash-table audit-table");
    const head = table.createTHead().insertRow();
    for (const h of ["When", "Who", "Action", "On", "Change", "Why"]) head.append(el("th", null, h));
    const body = table.createTBody();
    for (const entry of results) {
      const row = body.insertRow();
      row.dataset.action = entry.action;
      const when = new Date(entry.at);
      const cells = [
        ["When", el("time", null, when.toLocaleString())],
        ["Who", entry.actor || "the system"],
        ["Action", el("span", `tag audit-action audit-${entry.action.split(".")[0]}`, entry.action)],
        ["On", entry.target],
        ["Change", describe(entry.before, entry.after)],
        ["Why", entry.reason || "—"],
      ];
      cells[0][1].dateTime = entry.at;
      for (const [label, value] of cells) {
        const td = row.insertCell();
        td.dataset.label = label;
        td.append(value instanceof Node ? value : document.createTextNode(value));
      }
    }
    list.append(table);
  }
  const pager = el("nav", "audit-pager");
  pager.setAttribute("aria-label", "Pages of the audit log");
  const previous = el("button", null, "← Newer");
  previous.type = "button";
  previous.disabled = offset === 0;
  previous.addEventListener("click", () => go(Math.max(0, offset - PAGE)));
  const next = el("button", null, "Older →");
  next.type = "button";
  next.dataset.testid = "audit-older";
  next.disabled = offset + results.length >= count;
  next.addEventListener("click", () => go(offset + PAGE));
  pager.append(previous, next);
  list.append(pager);
}
