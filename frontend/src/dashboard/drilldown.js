// One annotator's page: their figures, their standing with Pause / Resume, and their passes
// with each step's rating (and "unsure" flag) beside the gold rating and the other annotators'
// ratings, the pass's note, and the gold actions (./gold.js) on each pass.
import { optionsFromData, renderMath } from "../math.js";
import { call } from "./api.js";
import { el } from "../dom.js";
import { duration, fmt, pct, section, statusTag } from "./dom.js";
import { goldActions } from "./gold.js";
import { rating } from "./ratings.js";
import "./quality.css";

const PAGE = 20;

export async function showAnnotator(root) {
  root.querySelector(".dash-loading")?.remove();
  const standing = section("Standing", "standing");
  const figures = section("Figures", "figures");
  figures.append(el("p", "muted", "Loading…"));
  const passes = section("Passes, newest first", "passes");
  root.append(standing, figures, passes);
  const list = el("div", "pass-list");
  const more = el("button", "more", "Load more passes");
  more.hidden = true;
  passes.append(list, more);

  const options = optionsFromData(root.dataset); // the project's rendering settings
  const data = root.dataset;
  const shown = new Map(); // card -> its pass, to draw again when the solution's gold changes
  const draw = (pass) => {
    const card = passCard(pass, options, goldActions(pass, urls, changed, options));
    shown.set(card, pass);
    return card;
  };
  // Gold is the solution's: every card of that solution shows the change.
  const changed = (solution, gold) => {
    const values = new Map(gold.ratings.map((r) => [`${r.position}.${r.alternative}`, r.value]));
    for (const [card, pass] of [...shown]) {
      if (pass.solution !== solution) continue;
      pass.solution_is_gold = gold.is_gold;
      for (const step of pass.steps) step.gold = values.get(`${step.position}.${step.alternative}`) ?? null;
      shown.delete(card);
      card.replaceWith(draw(pass));
    }
  };
  const urls = {
    gold: data.goldUrl, fromPass: data.fromPassUrl, propose: data.proposeUrl, quality: data.qualityUrl,
  };
  let offset = 0;
  const load = async () => {
    const page = await call(`${root.dataset.passesUrl}?limit=${PAGE}&offset=${offset}`);
    if (offset === 0) showStanding(standing, root, page.annotator);
    offset += page.passes.length;
    list.append(...page.passes.map(draw));
    if (!page.count) list.append(el("p", "muted", "No submitted passes yet."));
    more.hidden = offset >= page.count;
    passes.querySelector("h2").textContent = `Passes, newest first (${offset} of ${page.count})`;
  };
  more.addEventListener("click", () => load().catch((e) => fail(passes, e)));
  await load();
  root.dataset.state = "ready";
  call(root.dataset.tableUrl).then((table) => {
    const row = table.annotators.find((r) => String(r.id) === root.dataset.annotatorId);
    showFigures(figures, row);
  }).catch((e) => fail(figures, e));
}

function fail(box, error) {
  box.append(el("p", "errors", `Could not load: ${error.message}`));
}

function showStanding(box, root, annotator) {
  const line = el("p", "standing-line");
  const reason = el("span", "reason");
  const button = el("button", "standing-action");
  button.dataset.testid = "standing-action";
  const message = el("p", "muted small");
  // A pause needs a reason (the annotator is shown it, the audit log keeps it); a resume may give one.
  const reasonBox = el("input", "standing-reason");
  reasonBox.type = "text";
  reasonBox.maxLength = 2000;
  reasonBox.dataset.testid = "standing-reason";
  reasonBox.setAttribute("aria-label", "Reason");
  const draw = (state, why) => {
    line.replaceChildren(statusTag(state), " ", reason);
    reason.textContent = why || "";
    const blocked = state === "paused" || state === "failed_screening";
    box.classList.toggle("blocked", blocked);
    button.textContent = blocked ? "Resume" : "Pause";
    button.dataset.action = blocked ? "resume" : "pause";
    reasonBox.placeholder = blocked ? "Reason for resuming (optional)" : "Reason for the pause (shown to them)";
    reasonBox.value = "";
    root.dataset.status = state;
  };
  draw(annotator.status || "active", annotator.status_reason);
  button.addEventListener("click", async () => {
    const action = button.dataset.action;
    if (action === "pause" && !reasonBox.value.trim()) {
      message.textContent = "Give a reason for the pause: they are shown it.";
      reasonBox.focus();
      return;
    }
    button.disabled = true;
    message.textContent = "";
    try {
      const answer = await call(action === "resume" ? root.dataset.resumeUrl : root.dataset.pauseUrl, {
        method: "POST", body: { reason: reasonBox.value.trim() },
      });
      draw(answer.state, answer.reason);
      message.textContent = action === "resume" ? "Resumed: they get work again." : "Paused: no new work until resumed.";
    } catch (error) {
      message.textContent = `Could not ${action}: ${error.message}`;
    } finally {
      button.disabled = false;
    }
  });
  box.append(line, reasonBox, button, message, labelerLine(annotator.labeler));
}

/** Their labeler id: what the exports write as ``labeler`` (and the table's CSV carries), to join
 * the two. Leads only, as this whole page: annotators never see one another's ids. */
function labelerLine(labeler) {
  const line = el("p", "small labeler-line");
  if (!labeler) return line;
  const id = el("code", null, labeler);
  id.dataset.testid = "labeler-id";
  const copy = el("button", "copy-labeler", "Copy");
  copy.type = "button";
  copy.dataset.testid = "copy-labeler";
  copy.addEventListener("click", async () => {
    try {
      await navigator.clipboard.writeText(labeler);
      copy.textContent = "Copied";
    } catch {
      // No clipboard (an insecure origin): select the id for a manual copy.
      getSelection().selectAllChildren(id);
      copy.textContent = "Selected: copy it";
    }
  });
  line.append(el("span", "muted", "Labeler id in the exports: "), id, " ", copy);
  return line;
}

function showFigures(box, row) {
  box.replaceChildren(box.querySelector("h2"));
  if (!row) {
    box.append(el("p", "muted", "No figures in this project yet."));
    return;
  }
  const list = el("dl", "figure-list");
  const add = (term, value) => list.append(el("dt", null, term), el("dd", null, value));
  add("Gold score (rolling)", `${fmt(row.gold_score)} over ${row.gold_passes} gold passes`);
  add("flags", row.flags.length ? row.flags.join("; ") : "none: in line with the team");
  add("κ against the others' majority", row.kappa_majority === null ? `— (${row.kappa_majority_reason ?? "no data"})`
    : `${fmt(row.kappa_majority)}` + (row.kappa_majority_low === null ? "" : ` [${fmt(row.kappa_majority_low)}, ${fmt(row.kappa_majority_high)}]`) +
      ` on ${row.majority_items} steps`);
  add("mean κ per pair", `${fmt(row.kappa)} (${row.kappa_partners} partners)`);
  add("main-step ratings +1 / 0 / −1", `${pct(row.share_plus)} / ${pct(row.share_zero)} / ${pct(row.share_minus)} of ${row.ratings}`);
  add("passes, all ratings (alternatives too)", `${row.passes ?? 0}, ${row.steps ?? 0}`);
  // Seconds per step with a decimal: a careless 0.1 s must not read as "0 s".
  add("median time per step / pass", `${row.median_step_seconds === null ? "—" : `${fmt(row.median_step_seconds, 1)} s`} / ${duration(row.median_pass_seconds)}`);
  add("active time", row.active_hours == null ? "—" : duration(row.active_hours * 3600));
  box.append(list);
}

function passCard(pass, options, actions) {
  const card = el("article", "pass");
  card.dataset.pass = pass.id;
  card.dataset.solution = pass.solution;
  const head = el("div", "pass-head muted small");
  // A screening item is a gold item kept for newcomers: named as such, without the generation
  // number PRM800K gives all of them (-1), which means nothing to a lead.
  const served = pass.solution_is_screening ? " · screening item"
    : pass.solution_is_gold ? " · gold item" : (pass.is_quality_control ? " · served as gold" : "");
  const score = pass.gold_exact_share === null || pass.gold_exact_share === undefined ? ""
    : ` (${pct(pass.gold_exact_share)} agreement with the gold)`;
  const flags = pass.flagged_steps ? ` · ${pass.flagged_steps} flagged unsure` : "";
  head.textContent = `Solution ${pass.solution} · ${new Date(pass.submitted_at).toLocaleString()} · ` +
    `${pass.finish_reason}${served}${score}${flags} · ${fmt((pass.total_time || 0) / 1000, 0)} s` +
    (pass.generation !== null && !pass.solution_is_screening ? ` · generation ${pass.generation}` : "");
  const problem = renderMath(el("div", "pass-problem"), pass.problem, options);
  card.append(head, problem);
  if (pass.finish_note) {
    const note = el("p", "pass-note small");
    note.dataset.testid = "pass-note";
    note.append(el("b", null, "Their note: "), pass.finish_note);
    card.append(note);
  }
  const table = el("table", "dash-table steps");
  const header = el("tr");
  header.append(el("th", null, "#"), el("th", null, "Step"), el("th", null, "Theirs"), el("th", null, "Gold"),
    el("th", null, "Others: who rated what"));
  table.append(header);
  for (const step of pass.steps) {
    const row = el("tr");
    if (step.gold !== null && step.value !== null && step.gold !== step.value) row.classList.add("off-gold");
    // Who voted what: each other annotator's name beside their rating; a rating unlike theirs
    // is outlined, and the row says "disagree" in words.
    const others = el("td", "others");
    let differ = 0;
    for (const other of step.others) {
      const differs = step.value !== null && other.value !== step.value;
      differ += differs;
      const vote = el("span", `other-vote${differs ? " differs" : ""}`);
      vote.append(el("span", "other-name", `${other.label} `), rating(other.value));
      if (differs) vote.title = `${other.label} rated otherwise`;
      others.append(vote);
    }
    if (!step.others.length) others.append(el("span", "muted", "—"));
    if (differ) {
      row.classList.add("disagree");
      const tag = el("span", "tag disagree", `disagree (${differ} of ${step.others.length})`);
      tag.dataset.testid = "disagree";
      others.append(tag);
    }
    const theirs = el("td", "theirs");
    theirs.append(rating(step.value));
    if (step.flagged) {
      const flag = el("span", "tag unsure", "unsure");
      flag.dataset.testid = "unsure";
      flag.title = "They flagged this step unsure";
      theirs.append(" ", flag);
    }
    const gold = el("td", "gold");
    gold.append(step.gold === null ? el("span", "muted", "—") : rating(step.gold));
    row.append(
      el("td", null, step.alternative ? `${step.position + 1}.${step.alternative}` : step.position + 1),
      renderMath(el("td", "step-text"), step.text, options),
      theirs,
      gold,
      others,
    );
    table.append(row);
  }
  card.append(table, actions);
  return card;
}
