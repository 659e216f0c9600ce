// The adjudication queue: solutions whose overlapping passes disagree on a step, each step with
// its votes and consensus, and a ruling picker per step. A ruling overrides the majority in the
// consensus (labeling/quality/consensus.py), which the prm800k-consensus export writes.
import { renderMath } from "../math.js";
import { call } from "./api.js";
import { el } from "../dom.js";
import { errorText, rating, selected, statusLine, stepNumber, valueSelect, votes } from "./ratings.js";

const PAGE = 20;

export async function showDisagreements(box, urls, options) {
  const controls = el("p", "small");
  const all = el("input");
  all.type = "checkbox";
  all.id = "disagreements-all";
  const label = el("label", null, " Show solutions already ruled on too");
  label.htmlFor = all.id;
  const exported = el("a", null, "Download the consensus export");
  exported.href = urls.export;
  controls.append(all, label, " · ", exported, " (PRM800K JSONL, one record per overlapping solution, rulings applied)");
  const count = el("p", "muted small");
  count.dataset.testid = "disagreement-count";
  const list = el("div", "q-list");
  const more = el("button", "q-button", "Load more");
  more.type = "button";
  more.hidden = true;
  box.append(controls, count, list, more);
  let offset = 0;
  const load = async (fresh) => {
    if (fresh) {
      offset = 0;
      list.replaceChildren();
    }
    const state = all.checked ? "all" : "open";
    const page = await call(`${urls.disagreements}?state=${state}&limit=${PAGE}&offset=${offset}`);
    offset += page.results.length;
    list.append(...page.results.map((entry) => item(entry, urls, options)));
    count.textContent = page.count
      ? `${page.count} solution${page.count === 1 ? "" : "s"} where the passes disagree${all.checked ? "" : " and a step awaits a ruling"}.`
      : (all.checked ? "No overlapping passes disagree." : "Nothing awaits a ruling.");
    more.hidden = offset >= page.count;
  };
  const fail = (error) => count.replaceChildren(el("span", "errors", `Could not load: ${errorText(error)}`));
  all.addEventListener("change", () => load(true).catch(fail));
  more.addEventListener("click", () => load(false).catch(fail));
  await load(true);
}

function item(entry, urls, options) {
  const node = el("article", "q-item");
  node.dataset.solution = entry.solution;
  node.append(el("h3", null, `Solution ${entry.solution} · ${entry.passes} passes`));
  node.append(renderMath(el("div", "q-problem"), entry.problem, options));
  const table = el("table", "dash-table");
  table.tabIndex = 0; // it scrolls sideways on a phone: the keyboard must reach it
  const head = el("tr");
  for (const h of ["#", "Step", "Votes", "Consensus", "Ruling"]) head.append(el("th", null, h));
  table.append(head);
  const pickers = [];
  const cells = new Map();
  for (const step of entry.steps) {
    const row = el("tr");
    row.dataset.position = step.position;
    row.dataset.alternative = step.alternative;
    row.classList.toggle("split", step.disagree);
    row.classList.toggle("ruled", step.ruling !== null);
    const counted = el("td");
    counted.append(votes(step.votes, step.voters));
    const value = el("td", "consensus");
    value.append(rating(step.value));
    const select = valueSelect(step.ruling, `Ruling for step ${stepNumber(step)}`, "no ruling");
    select.dataset.position = step.position;
    select.dataset.alternative = step.alternative;
    select.dataset.saved = select.value;
    pickers.push(select);
    const ruling = el("td", "ruling");
    ruling.append(select);
    row.append(el("td", null, stepNumber(step)), renderMath(el("td", "step-text"), step.text, options), counted, value,
      ruling);
    cells.set(`${step.position}.${step.alternative}`, { row, value });
    table.append(row);
  }
  const note = el("input", "q-note");
  note.type = "text";
  note.placeholder = "Why (kept with the rulings)";
  note.setAttribute("aria-label", `Note on the rulings for solution ${entry.solution}`);
  note.value = entry.steps.find((s) => s.note)?.note || "";
  const save = el("button", "q-button primary", "Save rulings");
  save.type = "button";
  save.dataset.testid = "save-rulings";
  const message = statusLine("ruling-message");
  save.addEventListener("click", async () => {
    const changed = pickers.filter((s) => s.value !== s.dataset.saved);
    message.classList.remove("errors");
    if (!changed.length) {
      message.textContent = "No ruling changed.";
      return;
    }
    const ratings = changed.map((s) => ({
      position: Number(s.dataset.position), alternative: Number(s.dataset.alternative), value: selected(s),
    }));
    save.disabled = true;
    try {
      const answer = await call(urls.consensus.replace("/0/", `/${entry.solution}/`), {
        method: "PUT", body: { ratings, note: note.value },
      });
      for (const c of answer) {
        const found = cells.get(`${c.position}.${c.alternative}`);
        if (!found) continue;
        found.value.replaceChildren(rating(c.value));
        found.row.classList.toggle("ruled", c.adjudicated);
      }
      for (const s of changed) s.dataset.saved = s.value;
      message.textContent = "Saved: the consensus uses these rulings.";
      node.dataset.ruled = "1";
    } catch (error) {
      message.textContent = `Not saved: ${errorText(error)}`;
      message.classList.add("errors");
    } finally {
      save.disabled = false;
    }
  });
  const buttons = el("p", "q-buttons");
  buttons.append(note, " ", save);
  node.append(table, buttons, message);
  return node;
}
