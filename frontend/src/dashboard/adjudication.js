// The adjudication queue: solutions whose overlapping passes disagree on a step, each step with
// its votes and consensus, and a ruling picker per step. A ruling overrides the majority in the
// consensus (labeling/quality/consensus.py), which the prm800k-consensus export writes.
// Filtered by status, annotator, generation and step; the filter lives in the page's address
// (./queue-filters.js), so a filtered queue can be shared. Each solution is one summary line
// (problem, disagreeing steps, who voted what) until opened: the queue stays short.
import { renderMath } from "../math.js";
import { call } from "./api.js";
import { el } from "../dom.js";
import { tellCount } from "./dom.js";
import { errorText, rating, selected, statusLine, stepNumber, valueSelect, votes } from "./ratings.js";
import { addressQuery, apiQuery, excerpt, filtersFrom, splitSteps } from "./queue-filters.js";

const PAGE = 20;
const STATE_LABELS = [["open", "Awaiting a ruling"], ["ruled", "Ruled"], ["all", "All"]];

function field(form, label, control) {
  const wrap = el("label", "q-filter");
  wrap.append(el("span", null, label), control);
  form.append(wrap);
  return control;
}

function choices(select, options, current) {
  const any = select.options[0];
  select.replaceChildren(any);
  for (const [value, text] of options) {
    const option = el("option", null, text);
    option.value = String(value);
    select.append(option);
  }
  // A value from the address that is no choice (yet) still shows what is filtered.
  if (current && !options.some(([value]) => String(value) === current)) {
    const option = el("option", null, `#${current}`);
    option.value = current;
    select.append(option);
  }
  select.value = current || "";
}

function anySelect(name, text) {
  const select = el("select");
  select.name = name;
  const any = el("option", null, text);
  any.value = "";
  select.append(any);
  return select;
}

export async function showDisagreements(box, urls, options) {
  const form = el("form", "q-filters small");
  form.dataset.testid = "disagreement-filters";
  form.setAttribute("aria-label", "Filter the disagreements");
  const state = field(form, "Status", el("select"));
  state.name = "state";
  for (const [value, text] of STATE_LABELS) {
    const option = el("option", null, text);
    option.value = value;
    state.append(option);
  }
  const annotator = field(form, "Annotator", anySelect("annotator", "anyone"));
  const generation = field(form, "Generation", anySelect("generation", "any"));
  const step = field(form, "Step", el("input"));
  step.name = "step";
  step.type = "number";
  step.min = "1";
  step.inputMode = "numeric";
  step.placeholder = "any";
  const apply = el("button", "q-button", "Filter");
  apply.type = "submit";
  const clear = el("button", "q-button", "Clear");
  clear.type = "button";
  form.append(apply, clear);
  const exported = el("p", "small");
  const link = el("a", null, "Download the consensus export");
  link.href = urls.export;
  exported.append(link, " (PRM800K JSONL, one record per overlapping solution, rulings applied)");
  const count = el("p", "muted small");
  count.dataset.testid = "disagreement-count";
  count.setAttribute("role", "status");
  const list = el("div", "q-list");
  const more = el("button", "q-button", "Load more");
  more.type = "button";
  more.hidden = true;
  box.append(form, exported, count, list, more);

  let filters = filtersFrom(location.search);
  state.value = filters.state || "open";
  step.value = filters.step || "";
  let offset = 0;
  let latest = 0;
  const load = async (fresh) => {
    // Filters changed in quick succession overlap: only the last request's answer is drawn.
    const ticket = ++latest;
    box.dataset.state = "loading";
    let page;
    try {
      page = await call(`${urls.disagreements}?${apiQuery(filters, PAGE, fresh ? 0 : offset)}`);
    } catch (error) {
      if (ticket === latest) throw error;
      return; // a stale request's error: a newer one is on its way
    }
    if (ticket !== latest) return;
    if (fresh) {
      offset = 0;
      list.replaceChildren();
    }
    choices(annotator, page.annotators.map((a) => [a.id, a.name]), filters.annotator);
    choices(generation, page.generations.map((n) => [n, `generation ${n}`]), filters.generation);
    offset += page.results.length;
    list.append(...page.results.map((entry) => item(entry, urls, options)));
    const narrowed = filters.annotator || filters.generation || filters.step;
    const kind = { open: " and a step awaits a ruling", ruled: ", every such step ruled", all: "" }[filters.state || "open"];
    count.textContent = page.count
      ? `${page.count} solution${page.count === 1 ? "" : "s"} where the passes disagree${kind}${narrowed ? " (filtered)" : ""}.`
      : (narrowed ? "No disagreement matches the filter."
        : { open: "Nothing awaits a ruling.", ruled: "Nothing is ruled yet.", all: "No overlapping passes disagree." }[filters.state || "open"]);
    more.hidden = offset >= page.count;
    tellCount(box, page.count);
    box.dataset.state = "ready";
  };
  const fail = (error) => {
    count.replaceChildren(el("span", "errors", `Could not load: ${errorText(error)}`));
    box.dataset.state = "error";
  };
  const refilter = () => {
    filters = filtersFrom(new URLSearchParams(new FormData(form)).toString());
    history.replaceState(null, "", `${location.pathname}${addressQuery(location.search, filters)}${location.hash}`);
    load(true).catch(fail);
  };
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    refilter();
  });
  // A choice applies at once; the step (typed) applies on Enter, the button or leaving the box.
  for (const select of [state, annotator, generation]) select.addEventListener("change", refilter);
  step.addEventListener("change", refilter);
  clear.addEventListener("click", () => {
    form.reset();
    state.value = "open";
    annotator.value = generation.value = step.value = "";
    refilter();
  });
  more.addEventListener("click", () => load(false).catch(fail));
  await load(true);
}

function summary(entry, options) {
  const line = el("summary", "q-summary");
  const title = el("span", "q-summary-title");
  title.append(el("strong", null, `Solution ${entry.solution}`), ` · ${entry.passes} passes · `,
    renderMath(el("span", "q-excerpt"), excerpt(entry.problem), options));
  line.append(title);
  const split = splitSteps(entry.steps);
  const steps = el("span", "q-summary-steps");
  for (const step of split) {
    const one = el("span", "q-summary-step");
    one.dataset.position = step.position;
    one.dataset.alternative = step.alternative;
    one.append(el("span", "q-step-label", `Step ${stepNumber(step)}`), " ", votes(step.votes, step.voters));
    const tag = el("span", "tag ruled-tag", "ruled");
    tag.hidden = step.ruling === null;
    one.append(" ", tag);
    steps.append(one);
  }
  line.append(steps);
  return line;
}

function item(entry, urls, options) {
  const node = el("details", "q-item");
  node.dataset.solution = entry.solution;
  node.append(summary(entry, options));
  // The steps (math rendered, pickers) are drawn when first opened: a page of 20 stays light.
  node.addEventListener("toggle", () => {
    if (node.open && !node.dataset.drawn) {
      node.dataset.drawn = "1";
      node.append(body(entry, urls, options, node));
    }
  });
  return node;
}

function body(entry, urls, options, node) {
  const inside = el("div", "q-body");
  // The whole problem only where the summary line had to cut it.
  if (excerpt(entry.problem) !== String(entry.problem || "").replace(/\s+/g, " ").trim()) {
    inside.append(renderMath(el("div", "q-problem"), entry.problem, options));
  }
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
        const tag = node.querySelector(`.q-summary-step[data-position="${c.position}"][data-alternative="${c.alternative}"] .ruled-tag`);
        if (tag) tag.hidden = !c.adjudicated;
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
  inside.append(table, buttons, message);
  return inside;
}
