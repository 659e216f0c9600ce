// People vs PRM: the steps where the champion's score and people's consensus disagree most
// (scoring/people.py), a page at a time, each linked to its solution. Every text goes in as text.
import { call } from "../dashboard/api.js";
import { fmt, scroller, tellCount } from "../dashboard/dom.js";
import { el, table } from "../dom.js";
import { optionsFromData, renderMath } from "../math.js";
import { button } from "./util.js";

const PAGE = 20;
const RATING = { "-1": "−1 wrong", 0: "0 neutral", 1: "+1 right" };

/** The section's body: ``url`` is the list's API route (``data-people-vs-prm-url``). */
export async function showPeopleVsPrm(box, data, url = data.peopleVsPrmUrl) {
  const body = el("div");
  box.append(el("p", "muted", "Steps of rated solutions the champion PRM scored, where its P(correct) and the " +
    "people's consensus (the majority, or a lead's ruling; 0 counts as correct, as the PRM is trained) differ most."),
  body);
  await render(body, url, 0, optionsFromData(data));
}

async function render(body, url, offset, options) {
  const page = await call(`${url}?limit=${PAGE}&offset=${offset}`);
  body.replaceChildren();
  const status = el("p", "muted");
  status.dataset.testid = "people-vs-prm-status";
  if (page.checkpoint === null) {
    status.textContent = "No champion PRM yet: nothing to compare.";
  } else {
    const last = Math.min(offset + page.results.length, page.count);
    status.textContent = page.count ? `Steps ${offset + 1}–${last} of ${page.count} compared (champion checkpoint ` +
      `${page.checkpoint}).` : `No step is both rated and scored by the champion (checkpoint ${page.checkpoint}) yet.`;
    if (page.unscored) status.textContent += ` ${page.unscored} rated solution${page.unscored === 1 ? "" : "s"} ` +
      "the champion has not scored are left out.";
  }
  body.append(status);
  tellCount(body, page.checkpoint === null ? null : page.count);
  if (!page.results.length) return;
  body.append(scroller(table(["disagreement", "PRM P(correct)", "people", "solution", "generation", "step", "text"],
    page.results, (row, tr) => {
      tr.dataset.solution = row.solution;
      tr.dataset.position = row.position;
      return [fmt(row.disagreement), fmt(row.prm), people(row), link(row), row.generation == null ? "—" : String(row.generation),
        String(row.position + 1), renderMath(el("span"), row.step, options)];  // steps count from 1, as in the workspace
    }, "people-vs-prm-table"), "People vs PRM"));
  const nav = el("div", "job-bar");
  if (offset > 0) {
    nav.append(button("Previous", "people-vs-prm-previous", () => render(body, url, Math.max(0, offset - PAGE), options)));
  }
  if (offset + PAGE < page.count) {
    nav.append(button("Next", "people-vs-prm-next", () => render(body, url, offset + PAGE, options)));
  }
  if (nav.childNodes.length) body.append(nav);
}

function people(row) {
  const votes = Object.entries(row.votes).map(([value, n]) => `${RATING[value] ?? value} ×${n}`).join(", ");
  const text = `${RATING[String(row.people)] ?? row.people}${row.adjudicated ? " (lead's ruling)" : ""}`;
  const cell = el("span", null, text);
  if (votes) cell.title = `votes: ${votes}`;
  return cell;
}

function link(row) {
  // The API's own route for the solution (a path on this site), nothing else.
  if (typeof row.url !== "string" || !row.url.startsWith("/") || row.url.startsWith("//")) return String(row.solution);
  const a = el("a", null, `solution ${row.solution}`);
  a.href = row.url;
  return a;
}
