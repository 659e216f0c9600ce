// The workspace's DOM: built once, then updated in place as ratings change; the buttons and keys
// call app.js's actions (what they do to the task is task.js's).
//
// Imported text (problem, answer, steps) only ever reaches the page through renderMath,
// which writes text nodes and KaTeX output; the one HTML string inserted is the project's
// instructions_html, which the server sanitized (nh3). Step cards are made once per step
// and kept, so KaTeX renders each step once however often the list changes (the
// annotator's own step again when its text changes).
import { el } from "../dom.js";
import { renderMath, renderOptions } from "../math.js";
import { renderMathInHtml } from "./instructions.js";
import { ACTIONS, DEFAULT_KEYS, LABELS, keyLabel, keyName } from "./keys.js";
import { latestChoice, stepKey } from "./sequence.js";
import { prelabelOf } from "./task.js";

const RATING_LABEL = { 1: "+1", 0: "0", "-1": "−1" };
const RATING_CLASS = { 1: "good", 0: "neutral", "-1": "bad" };
const SAVE_LABELS = { saved: "All changes saved", saving: "Saving…", retrying: "Not saved yet — retrying" };

function kbd(key) {
  return el("kbd", null, key);
}

// The person's key of ``action`` (ui.keys, set by showKeys), as the page writes it.
function actionKbd(ui, action) {
  return kbd(keyName(ui.keys, action));
}

/** Build the empty workspace inside ``root`` with the person's ``keys``; returns the parts the app updates. */
export function buildShell(root, actions, keys = DEFAULT_KEYS) {
  root.replaceChildren();
  const banner = el("div", "ws-banner");
  banner.setAttribute("role", "status");
  banner.dataset.testid = "offline-banner";
  banner.hidden = true;
  // The annotator's standing (screening progress, outcome); neutral, no scores.
  const standing = el("div", "ws-standing");
  standing.setAttribute("role", "status");
  standing.dataset.testid = "standing";
  standing.hidden = true;

  // "Submitted. 7 today": says the last submit went through, over the next solution or panel.
  const confirm = el("div", "ws-confirm");
  confirm.setAttribute("role", "status");
  confirm.dataset.testid = "submit-confirmation";
  confirm.hidden = true;
  // The submit's undo, offered beside its confirmation for a few seconds (app.js ``undoSubmit``).
  const undoOffer = el("button", "ws-button ws-undo-offer");
  undoOffer.type = "button";
  undoOffer.dataset.testid = "undo-submit";
  undoOffer.textContent = "undo (z)";
  undoOffer.hidden = true;
  undoOffer.addEventListener("click", () => actions.undoSubmit && actions.undoSubmit());

  const task = el("section", "ws-task");
  task.setAttribute("aria-label", "Problem");
  const title = el("div", "ws-project muted");
  // The annotator's day and the cue that a new solution began (the next one can look alike).
  const day = el("div", "ws-day");
  const fresh = el("span", "ws-new", "New solution");
  fresh.hidden = true;
  const done = el("span", "ws-done muted");
  done.dataset.testid = "done-today";
  const timer = el("span", "ws-timer muted");
  timer.dataset.testid = "timer";
  timer.hidden = true;
  day.append(fresh, done, timer);
  const problemHead = el("h2", null, "Problem");
  const problem = el("div", "ws-problem ws-text");
  const answerBox = el("div", "ws-answer");
  answerBox.append(el("span", "ws-answer-label", "Current guess of the correct answer: "));
  const answer = el("span", "ws-answer-value ws-text");
  answerBox.append(answer);
  const progress = el("div", "ws-progress muted");
  // The keys in use (showKeys writes them), and the way to change them (keysform.js).
  const legend = el("ul", "ws-legend");
  legend.dataset.testid = "key-legend";
  for (const [action] of ACTIONS) {
    const item = el("li");
    item.dataset.action = action;
    legend.append(item);
  }
  const changeKeys = el("button", "ws-button secondary ws-change-keys", "change keys");
  changeKeys.type = "button";
  changeKeys.dataset.testid = "change-keys";
  changeKeys.addEventListener("click", () => actions.changeKeys && actions.changeKeys());
  task.append(title, day, problemHead, problem, answerBox, progress, legend, changeKeys);

  const stepsPane = el("section", "ws-steps");
  stepsPane.setAttribute("aria-label", "Solution steps");
  const steps = el("div", "ws-step-list");
  stepsPane.append(steps);

  // The instructions beside the work (not a modal): ? or i opens and closes it.
  const side = el("aside", "ws-side");
  side.setAttribute("aria-label", "Instructions");
  side.hidden = true;
  const sideHead = el("div", "ws-side-head");
  const sideTitle = el("h2", null, "Instructions");
  const sideClose = el("button", "ws-button", "Close");
  sideClose.type = "button";
  sideClose.addEventListener("click", () => actions.help());
  sideHead.append(sideTitle, sideClose);
  const sideBody = el("div", "ws-instructions-body");
  side.append(sideHead, sideBody);

  const bar = el("footer", "ws-bar");
  const hint = el("div", "ws-hint");
  hint.setAttribute("aria-live", "polite");
  const saveState = el("span", "ws-save muted");
  saveState.dataset.testid = "save-state";
  const buttons = el("div", "ws-buttons");
  // On a small screen the bar keeps the rating buttons and submit; "more" shows the rest.
  const button = (name, key, label, className) => {
    const b = el("button", "ws-button " + (className || "secondary"));
    b.type = "button";
    b.dataset.action = name;
    b.kbd = kbd(key);
    b.append(b.kbd, " " + label);
    b.addEventListener("click", () => actions[name]());
    buttons.append(b);
    return b;
  };
  const rateButtons = [
    button("good", "1", "+1", "rate good"),
    button("neutral", "2", "0", "rate neutral"),
    button("bad", "3", "−1", "rate bad"),
  ];
  const flagButton = button("flag", "f", "unsure");
  button("undo", "u", "undo");
  const submitButton = button("submit", "Enter", "submit", "primary");
  button("giveUp", "g", "give up");
  button("badProblem", "b", "bad problem");
  const writeButton = button("write", "w", "write own step");
  const helpButton = button("help", "?", "instructions");
  helpButton.setAttribute("aria-expanded", "false");
  button("timer", "t", "timer");
  const more = el("button", "ws-button ws-more", "more");
  more.type = "button";
  more.setAttribute("aria-expanded", "false");
  more.addEventListener("click", () => {
    const open = bar.classList.toggle("more-open");
    more.setAttribute("aria-expanded", String(open));
    more.textContent = open ? "less" : "more";
    // The taller bar (it sticks to the bottom of a phone's screen) must not cover the current step.
    barHeight(ui);
    reveal(ui);
  });
  buttons.append(more);
  bar.append(hint, saveState, buttons);

  const body = el("div", "ws-body");
  body.append(task, stepsPane, side);
  const panel = el("div", "ws-panel card");
  panel.hidden = true;
  root.append(banner, standing, confirm, undoOffer, body, bar, panel);
  const ui = {
    root, banner, standing, confirm, undoOffer, body, bar, panel, title, fresh, done, timer, problem, answer, progress, legend,
    stepsPane, steps, hint, side, sideTitle, sideBody, helpButton, saveState, rateButtons, flagButton, submitButton,
    writeButton, buttons, actions, cards: new Map(),
  };
  showKeys(ui, keys);
  new ResizeObserver(() => barHeight(ui)).observe(bar);
  return ui;
}

/**
 * Write the person's keys ({action: [keys]}, keys.js ``keysOf``) on the legend, the buttons and
 * the undo offer; the hint names them from ``ui.keys`` when it is drawn next.
 */
export function showKeys(ui, keys) {
  ui.keys = keys;
  for (const item of ui.legend.children) {
    const action = item.dataset.action;
    const bound = keys[action] || [];
    item.dataset.key = bound[0] || "";
    const parts = [];
    for (const key of bound) parts.push(kbd(keyLabel(key)), " ");
    item.replaceChildren(...parts, LABELS[action]);
  }
  for (const b of ui.buttons.querySelectorAll("button[data-action]")) {
    if (b.kbd && keys[b.dataset.action]) b.kbd.textContent = keyName(keys, b.dataset.action);
  }
  ui.undoOffer.textContent = `undo (${keyName(keys, "undoSubmit")})`;
}

// The sticky bar's height, for the steps' scroll margin (a step is never shown under it). Set
// only when it changed: the property is inherited, and a new value restyles the whole workspace.
function barHeight(ui) {
  const height = `${ui.bar.offsetHeight}px`;
  if (ui.barHeight !== height) {
    ui.barHeight = height;
    ui.root.style.setProperty("--ws-bar-h", height);
  }
}

/** Open or close the instructions beside the work; returns whether they are open now. */
export function toggleInstructions(ui, project, open = ui.side.hidden) {
  if (open && ui.sideBody.dataset.project !== String(project.id)) {
    ui.sideTitle.textContent = `Instructions · ${project.name}`;
    if (project.instructions_html) {
      ui.sideBody.innerHTML = project.instructions_html; // sanitized by nh3 on the server
      renderMathInHtml(ui.sideBody);
    } else ui.sideBody.textContent = "This project has no written instructions.";
    ui.sideBody.dataset.project = String(project.id);
  }
  ui.side.hidden = !open;
  ui.body.classList.toggle("with-side", open);
  ui.helpButton.setAttribute("aria-expanded", String(open));
  // On a phone the instructions stack above the problem, far above a step down the solution:
  // opened, they come into view (else pressing "instructions" seemed to do nothing); closed,
  // the current step comes back. Beside the work on a wide screen, neither scrolls anything.
  if (open) ui.side.scrollIntoView({ block: "nearest" });
  else reveal(ui);
  return open;
}

/** The day line: solutions done today, the timer (null hides it). */
export function showDay(ui, doneToday, timerMs) {
  ui.done.textContent = doneToday === null ? "" : `${doneToday} done today`;
  ui.timer.hidden = timerMs === null;
  if (timerMs !== null) {
    const seconds = Math.floor(timerMs / 1000);
    ui.timer.textContent = `${Math.floor(seconds / 60)}:${String(seconds % 60).padStart(2, "0")} on this solution`;
  }
}

/** "Submitted. 7 today" (null hides it). */
export function showConfirmation(ui, text) {
  ui.confirm.hidden = !text;
  if (ui.confirm.textContent !== (text || "")) ui.confirm.textContent = text || ""; // every key calls this: write only a change
  if (!text) {
    delete ui.confirm.dataset.finished;
    showUndoOffer(ui, false);
  }
}

/** Offer the last submit's undo (z), or take the offer away. */
export function showUndoOffer(ui, shown) {
  if (ui.undoOffer.hidden === !shown) return;
  ui.undoOffer.hidden = !shown;
}

/** Whether the undo is on offer now. */
export function offersUndo(ui) {
  return !ui.undoOffer.hidden;
}

// What a finished pass is called: a give-up or a report is not "Submitted." to the person who sent it.
const FINISHED = {
  give_up: "Given up — the lead sees why.",
  bad_problem: "Problem reported — the lead sees it.",
};

/** The confirmation of a pass finished with ``reason``, with today's ``count`` when known (null: not yet). */
export function finishedText(reason, count = null) {
  const said = FINISHED[reason] || "Submitted.";
  return count === null || count === undefined ? said : `${said} ${count} done today.`;
}

/** Confirm a pass finished with ``reason``; its count follows (``showSubmittedCount``). */
export function showFinished(ui, reason, count = null) {
  showConfirmation(ui, finishedText(reason, count));
  ui.confirm.dataset.finished = reason;
}

/** Today's count once it comes, while the last finish's confirmation is still shown (null: unknown). */
export function showSubmittedCount(ui, count) {
  const reason = ui.confirm.dataset.finished;
  if (ui.confirm.hidden || !reason) return;
  showFinished(ui, reason, count);
}

/** A rating was given: the "New solution" cue and the last submit's confirmation go. */
export function showRated(ui) {
  if (!ui.fresh.hidden) ui.fresh.hidden = true;
  showConfirmation(ui, null);
}

/**
 * Show a new task: the problem and its answer, at the top, with the "New solution" cue until its
 * first rating (``rated``: it has ratings already); keep the project's rendering options for the steps.
 */
export function showTask(ui, assignment, rated) {
  hidePanel(ui);
  ui.title.textContent = assignment.project.name;
  ui.renderOptions = renderOptions(assignment.project);
  // The pre-labels this pass shows (none where the project hides them), with how it asks for them.
  ui.prelabels = { mode: assignment.prelabel_mode || "hidden", find: (item) => prelabelOf(assignment, item) };
  const writes = Boolean(assignment.project.allow_human_steps);
  ui.writeButton.hidden = !writes;
  ui.legend.querySelector('[data-action="write"]').hidden = !writes;
  ui.legend.querySelector('[data-action="accept"]').hidden = ui.prelabels.mode !== "verify";
  renderMath(ui.problem, assignment.problem.problem, ui.renderOptions);
  const guess = assignment.problem.ground_truth_answer;
  if (guess === null || guess === undefined || guess === "") {
    ui.answer.textContent = "none given";
  } else {
    // Answers are LaTeX without delimiters ("40,\!000"); ones that carry their own stay as they
    // are. "\(...\)" rather than "$...$": it is math whether or not the project reads "$" as math.
    renderMath(ui.answer, /\$|\\\(|\\\[/.test(guess) ? guess : `\\(${guess}\\)`, ui.renderOptions);
  }
  ui.cards.clear();
  // The next solution can look like the last one: each starts at the top with the cue.
  ui.fresh.hidden = rated;
  window.scrollTo(0, 0);
  ui.stepsPane.scrollTop = 0;
}

/**
 * Show the revealed steps with their ratings. ``writer`` (writer.js) is placed in the own step's
 * card while ``editing`` is its position.
 *
 * Drawn incrementally: a key changes one or two cards (the one rated, the next current one), and
 * a card is written to only where what it shows differs from what it showed (``card.shown``), and
 * the list only where its order differs. Writing every card on every key (and laying the whole
 * list out again) made key-to-paint grow with the solution: a median of 219 ms at 145 ratings
 * (issue #30; bench/key_latency.py measures it).
 */
function showSteps(ui, seq, ratings, pendingFlag, editing = null, writer = null) {
  const wanted = [];
  let prev = null;
  for (const item of seq.items) {
    const key = stepKey(item.position, item.alternative);
    let card = ui.cards.get(key);
    if (!card) {
      card = stepCard(item, ui.renderOptions, ui.actions, ui.prelabels);
      ui.cards.set(key, card);
    }
    if (item.human) showOwnStep(card, item, editing === item.position ? writer : null, ui.renderOptions);
    const rating = ratings.get(key);
    const value = rating ? rating.value : null;
    const current = seq.current === item;
    const asks = item.human && !item.text ? "to write" : "rate this step";
    showCard(card, {
      value: value === null || value === undefined ? null : value,
      current,
      flagged: current ? pendingFlag : Boolean(rating && rating.flagged),
      badge: value === null || value === undefined ? (current ? asks : "") : RATING_LABEL[value],
      continues: Boolean(item.continues),
      choosable: Boolean(item.choosable),
    });
    if (!item.human && item.alternative > 0 && !(prev && prev.position === item.position && prev.alternative > 0)) {
      wanted.push(alternativesHeading(ui, item.position));
    }
    prev = item;
    wanted.push(card);
  }
  placeInOrder(ui.steps, wanted);
}

// What one card shows; each part is written only when it changed since the card last showed it.
function showCard(card, wants) {
  const shown = card.shown || {};
  if (shown.value !== wants.value) {
    const rated = wants.value !== null;
    card.dataset.rating = rated ? String(wants.value) : "";
    card.classList.toggle("rated", rated);
    card.badge.className = "ws-badge " + (rated ? RATING_CLASS[wants.value] : "");
  }
  if (shown.current !== wants.current) card.classList.toggle("current", wants.current);
  if (shown.flagged !== wants.flagged) {
    card.classList.toggle("flagged", wants.flagged);
    card.flag.hidden = !wants.flagged;
  }
  if (shown.badge !== wants.badge) card.badge.textContent = wants.badge;
  if (shown.continues !== wants.continues) {
    card.continues.hidden = !wants.continues;
    card.classList.toggle("continues", wants.continues);
  }
  if (card.pick && (shown.continues !== wants.continues || shown.choosable !== wants.choosable)) {
    card.pick.hidden = !wants.choosable || wants.continues;
  }
  card.shown = wants;
}

/**
 * Make ``list``'s children exactly ``nodes``, in order, moving only what is out of place: the
 * nodes already in order stay where they are (a rating appends a card or none; an undo past a
 * -1 or a changed rating removes the cards after it).
 */
export function placeInOrder(list, nodes) {
  let next = list.firstChild;
  for (const node of nodes) {
    if (node === next) next = next.nextSibling;
    else list.insertBefore(node, next);
  }
  while (next) {
    const after = next.nextSibling;
    next.remove();
    next = after;
  }
}

/** Draw ``task`` (task.js) after a change: its steps, the hint line, the current step in view. */
export function showWork(ui, task, writer) {
  showSteps(ui, task.seq, task.ratings, task.pendingFlag, task.editing, writer);
  showHint(ui, task.seq, task.assignment, task.message, task.editing, task.armed);
  revealCurrent(ui, task.seq);
}

/** Scroll the current step (else the last card) into view, clear of the sticky bar. */
function revealCurrent(ui, seq) {
  barHeight(ui);
  reveal(ui, seq.current ? ui.cards.get(stepKey(seq.current.position, seq.current.alternative)) : null);
}

// Scroll ``focus`` (by default the card shown as current, else the last one) into view.
function reveal(ui, focus = ui.steps.querySelector(".ws-step.current")) {
  const node = focus || ui.steps.lastElementChild;
  if (node) node.scrollIntoView({ block: "nearest" });
}

// The own step's card: its text (drawn again when it changed), or the editor.
function showOwnStep(card, item, writer, options) {
  const text = card.querySelector(".ws-step-text");
  if (card.shownText !== (item.text || "")) {
    card.shownText = item.text || "";
    if (item.text) renderMath(text, item.text, options);
    else text.replaceChildren(el("span", "muted", "Every completion here is rated −1: you may write the step yourself."));
  }
  card.classList.toggle("editing", Boolean(writer));
  text.hidden = Boolean(writer);
  if (writer && writer.root.parentNode !== card) card.append(writer.root);
  const stale = !writer && card.querySelector(".ws-writer");
  if (stale) stale.remove();
}

function alternativesHeading(ui, position) {
  const key = `alternatives:${position}`;
  if (!ui.cards.has(key)) {
    ui.cards.set(key, el("div", "ws-alt-heading", `Other completions at step ${position + 1}: rate each one`));
  }
  return ui.cards.get(key);
}

function stepCard(item, options, actions, prelabels) {
  const card = el("article", "ws-step" + (item.alternative ? " alternative" : "") + (item.human ? " own" : ""));
  card.dataset.position = item.position;
  card.dataset.alternative = item.alternative;
  const head = el("header", "ws-step-head");
  let label = `Step ${item.position + 1}`;
  if (item.human) label += " · your own step";
  else if (item.alternative) label += ` · alternative ${item.alternative}`;
  head.append(el("span", "ws-step-label", label));
  const flag = el("span", "ws-flag", "unsure");
  flag.hidden = true;
  // Phase 1: the alternative the solution goes on with after a -1 on its own step.
  const continues = el("span", "ws-continues", "the solution goes on from this one");
  continues.hidden = true;
  const badge = el("span", "ws-badge");
  head.append(flag, continues, badge);
  const text = el("div", "ws-step-text ws-text");
  if (!item.human) renderMath(text, item.text, options);
  card.append(head, text);
  const shown = prelabels && prelabels.find(item);
  if (shown) card.append(prelabelLine(shown, prelabels.mode));
  // The parts showCard writes to, found once.
  Object.assign(card, { flag, continues, badge, pick: null });
  if (!item.human && item.alternative > 0) {
    // Another alternative rated 0 or +1 may carry the solution on instead: the mouse picks it here,
    // the p key moves to the next one (no digit key: digits always rate).
    const pick = el("button", "ws-button ws-pick secondary-pick");
    pick.type = "button";
    pick.append("go on from this one");
    pick.hidden = true;
    pick.addEventListener("click", () => actions.pick(item.position, item.alternative));
    card.append(pick);
    card.pick = pick;
  }
  return card;
}

// A machine pre-label under the step's text: its value and reason as text; in verify mode it asks
// for a confirmation (the accept key) or a correction (any rating key).
function prelabelLine(shown, mode) {
  const line = el("p", `ws-prelabel ${RATING_CLASS[shown.value] || ""}`);
  line.dataset.value = String(shown.value);
  line.append(el("span", "ws-prelabel-tag", mode === "verify" ? "pre-label to check" : "suggestion"), " ",
    el("strong", null, RATING_LABEL[shown.value] ?? String(shown.value)));
  if (shown.reason) line.append(" · ", el("span", "ws-prelabel-reason", shown.reason));
  return line;
}

/**
 * The line under the steps that says what the keys do now. ``armed``: the question a second
 * Enter answers (task.mayFinish asks it where the prompt asked for something else).
 */
function showHint(ui, seq, assignment, message, editing = null, armed = null) {
  const parts = [];
  const current = seq.current;
  const writing = Boolean(current && current.human && !current.text);
  if (message) {
    parts.push(el("strong", "ws-message", message));
  } else if (armed) {
    parts.push(el("strong", "ws-message ws-confirm-submit", armed));
  } else if (current && current.human && editing === current.position) {
    parts.push(`Write your own step ${current.position + 1}: `, kbd("Ctrl"), "+", kbd("Enter"), " saves it (",
      kbd("Enter"), " is a new line), ", kbd("Esc"), " leaves it for later.");
  } else if (writing) {
    parts.push(`Every completion at step ${current.position + 1} is −1. Press `, actionKbd(ui, "write"),
      " to write your own step; to submit \"found an error\" without one, press ", actionKbd(ui, "submit"), " twice.");
  } else if (current && current.human) {
    parts.push(`Rate your own step ${current.position + 1}: `, actionKbd(ui, "good"), " +1 ", actionKbd(ui, "neutral"),
      " 0 ", actionKbd(ui, "bad"), " −1 · ", actionKbd(ui, "write"), " edits it · ", actionKbd(ui, "undo"),
      " takes it back");
  } else if (current) {
    const { position, alternative } = seq.current;
    const what = alternative ? `alternative ${alternative} at step ${position + 1}` : `step ${position + 1}`;
    parts.push(`Rate ${what}: `, actionKbd(ui, "good"), " +1 ", actionKbd(ui, "neutral"), " 0 ", actionKbd(ui, "bad"),
      " −1");
    if (ui.prelabels && ui.prelabels.mode === "verify" && ui.prelabels.find(current)) {
      parts.push(" · ", actionKbd(ui, "accept"), " accepts the pre-label if you checked it is right");
    }
  } else if (seq.finish === "found_error") {
    parts.push("Found an error. Press ", actionKbd(ui, "submit"), " to submit.");
  } else if (seq.finish === "solution") {
    parts.push("Every step is rated. Press ", actionKbd(ui, "submit"), " to submit.");
  }
  // Where the solution goes on from after a -1 is a choice of its own: shown, and changed only by p.
  const choice = editing === null ? latestChoice(seq) : null;
  if (choice) {
    const line = el("span", "ws-choice");
    line.dataset.testid = "continuation";
    const next = choice.options[(choice.options.indexOf(choice.going) + 1) % choice.options.length];
    line.append(`Step ${choice.position + 1} goes on from alternative ${choice.going.alternative} · `,
      actionKbd(ui, "pickNext"),
      ` switches to alternative ${next.alternative}`);
    parts.push(line);
  }
  ui.hint.replaceChildren(...parts);
  ui.submitButton.disabled = !seq.finish || editing !== null;
  for (const b of ui.rateButtons) b.disabled = !current || writing;
  ui.writeButton.disabled = !(current && current.human);
  const main = assignment.steps.length;
  const rated = seq.items.filter((i) => i.alternative === 0 && i !== seq.current).length;
  const progress = `${rated} of ${main} steps rated`;
  if (ui.progress.textContent !== progress) ui.progress.textContent = progress;
}

/** Replace the workspace with a full-page state: {title, text, actions: [[key, label, fn]]}. */
export function showPanel(ui, state, { title, text, keys = [] }) {
  ui.root.dataset.state = state;
  ui.body.hidden = ui.bar.hidden = true;
  ui.banner.hidden = true;
  ui.panel.hidden = false;
  const parts = [el("h2", null, title)];
  if (text) parts.push(el("p", null, text));
  for (const [key, label, onClick, href] of keys) {
    const b = el(href ? "a" : "button", "ws-button");
    if (href) b.href = href;
    else {
      b.type = "button";
      b.addEventListener("click", onClick);
    }
    b.append(kbd(key), " " + label);
    parts.push(b, " ");
  }
  ui.panel.replaceChildren(...parts);
}

/** The standing line ({kind, text} from standing.js); hidden when there is nothing to say. */
export function showStanding(ui, { kind, text, href, link }) {
  ui.standing.hidden = !kind;
  ui.standing.dataset.standing = kind || "";
  ui.standing.textContent = text || "";
  if (href) {
    const a = el("a", "ws-standing-link");
    a.href = href;
    a.textContent = link || href;
    ui.standing.append(" ", a);
  }
}

/**
 * The save state beside the buttons ("saved", "saving", "retrying": ``detail`` ratings kept in this
 * browser, ``note`` said instead of the usual banner); root's data-save names it for tests.
 */
export function showSaveState(ui, state, detail, note) {
  ui.root.dataset.save = state;
  if (!(state in SAVE_LABELS)) return; // the lease lost, a conflict...: a panel says it
  const failing = state === "retrying";
  ui.banner.hidden = !failing;
  if (failing) {
    const count = detail === 1 ? "1 rating is" : `${detail} ratings are`;
    ui.banner.textContent =
      note ||
      `Offline or the server is unreachable — retrying. ${count} kept in this browser and will be saved when the connection is back.`;
  }
  ui.saveState.classList.toggle("retrying", failing);
  ui.saveState.textContent = SAVE_LABELS[state];
}

/**
 * Call ``onKey(key)`` for each key press meant for the workspace: one press (a held key repeats, and
 * one press is one rating, never a run of them), without Ctrl, Alt or Meta, outside a dialog and a
 * text field. ``onKey`` returns whether it used the key (its default action is then prevented).
 */
export function listenKeys(onKey) {
  document.addEventListener("keydown", (event) => {
    if (event.ctrlKey || event.metaKey || event.altKey || event.isComposing || event.repeat) return;
    if (document.querySelector("dialog[open]")) return;
    if (event.target.closest && event.target.closest("input, textarea, select, [contenteditable]")) return;
    if (onKey(event.key)) event.preventDefault();
  });
}

function hidePanel(ui) {
  ui.root.dataset.state = "working";
  ui.body.hidden = ui.bar.hidden = false;
  ui.panel.hidden = true;
}
