// One assignment as the workspace holds it, and what each key does to it: no DOM, no requests.
//
// A task is a plain object: the assignment payload, this browser's ratings (a Map keyed by
// sequence.stepKey), the own steps as typed (``writing``), the picks of where a phase-1 pass goes
// on (``picks``), the "unsure" mark waiting for the next rating, the question a second Enter
// answers (``armed``), the position in the editor (``editing``) and the line the hint shows next
// (``message``). The transitions below change it and return what must go to the server: a
// ``{key, rating}`` change for the draft queue (drafts.js), or null when the key changed nothing
// that is saved. app.js sends the changes, keeps the queue and the clock on the same object, and
// draws the task (view.js) after each transition; node --test (frontend/tests/task.test.js) runs
// these directly. The server is the judge of the rules; sequence.js only keeps the page from
// offering what it would refuse.
import { DEFAULT_KEYS, keyMap, keyName } from "./keys.js";
import { HUMAN, humanRating, lastRated, latestChoice, ratingsFrom, sequence, stepKey } from "./sequence.js";

/**
 * The default work keys and the action each one names (app.js maps names to transitions; a
 * person's own keys are keys.js's ``keyMap`` of what they changed). Modeless: a key means the
 * same whatever the page showed before it (3 is always −1 on the current step).
 */
export const WORK_KEYS = keyMap();

/** The value each rating action gives. */
export const RATING_VALUES = { good: 1, neutral: 0, bad: -1 };

/**
 * A task for ``assignment`` with what this browser kept of it (local.load's ``stored``): ratings
 * the server never acknowledged lie over the payload's, as the latest word. ``keys``: the
 * person's keys ({action: [keys]}, keys.js ``keysOf``), which the messages name.
 */
export function newTask(assignment, stored, submitKey, keys = DEFAULT_KEYS) {
  const ratings = ratingsFrom(assignment);
  for (const [key, rating] of Object.entries(stored.unsent || {})) ratings.set(key, { ...rating });
  const task = {
    assignment,
    ratings,
    submitKey,
    keys,
    pendingFlag: false,
    busy: false,
    message: "",
    lastActivity: Date.now(),
    writing: { ...stored.writing }, // own steps typed, not saved yet: {position: text}
    picks: { ...stored.picks }, // {position: alternative} the solution goes on from after a -1
    editing: null, // the position whose own step is in the editor
    armed: null, // what Enter once more submits, as asked (where the prompt asked for something else)
    seq: null,
  };
  walk(task);
  return task;
}

/**
 * The revision unsent ratings from before a reload are sent on: the one they were made on, so that
 * if the assignment changed since (another device, this browser's other tab) the server refuses
 * them and the page says so, rather than laying them over ratings this page never showed.
 */
export function unsentBase(stored, assignment) {
  return Object.keys(stored.unsent || {}).length && stored.revision ? stored.revision : assignment.revision;
}

/** The positions where the server holds a step this annotator wrote. */
export function ownStepPositions(assignment) {
  return assignment.steps.filter((s) => s.alternatives.some((a) => a.source === "human")).map((s) => s.position);
}

/**
 * Walk the ratings again (``task.seq``, sequence.js) after a change; the editor closes when the
 * step it holds is no longer the current one.
 */
export function walk(task) {
  applyPicks(task);
  task.seq = sequence(task.assignment, task.ratings);
  const current = task.seq.current;
  if (task.editing !== null && !(current && current.human && current.position === task.editing)) {
    task.editing = null;
  }
  return task.seq;
}

// The pick rides on the ratings as ``chosen`` (sequence.js reads it there); a rating stored
// anew after an undo comes without it, so it is set again from ``picks`` before each walk.
function applyPicks(task) {
  for (const [key, rating] of task.ratings) {
    const [position, alternative] = key.split(":");
    const chosen = String(task.picks[position]) === alternative;
    if (chosen) task.ratings.set(key, { ...rating, chosen: true });
    else if (rating.chosen) task.ratings.set(key, { ...rating, chosen: false });
  }
}

/** Whether a key may act now (not while a submit is on its way); a key is activity for the lease. */
export function ready(task, now = Date.now()) {
  if (!task || task.busy) return false;
  task.lastActivity = now;
  return true;
}

// The key of ``action`` as the messages name it: the person's own.
function key(task, action) {
  return keyName(task.keys, action);
}

// Rating ------------------------------------------------------------------------------

/** Rate ``item``; the own step keeps its text unless ``text`` is given (null withdraws it). */
function store(task, item, value, flagged, text = item.text) {
  const rating = item.human
    ? humanRating(item.position, value, flagged, text)
    : { position: item.position, alternative: item.alternative, value, flagged };
  const key = stepKey(item.position, item.alternative);
  task.ratings.set(key, rating);
  task.armed = null;
  return { key, rating };
}

/** 1, 2, 3: rate the current step ``value`` (with the "unsure" mark if f was pressed before). */
export function rate(task, value) {
  const current = task.seq.current;
  if (!current) {
    task.message = `Every step here is rated: ${key(task, "submit")} submits, ${key(task, "undo")} changes the last rating.`;
    return null;
  }
  if (current.human && !current.text) {
    task.message = `Every completion at step ${current.position + 1} is −1. Press ${key(task, "write")} to write your own step first.`;
    return null;
  }
  const change = store(task, current, value, task.pendingFlag);
  task.pendingFlag = false;
  return change;
}

/**
 * The pre-label shown on ``item`` (the payload's ``prelabels``, labeling/work/prelabels.py), or null:
 * none where the project hides them.
 */
export function prelabelOf(assignment, item) {
  if (!item || assignment.prelabel_mode === "hidden") return null;
  return (assignment.prelabels || []).find((p) => p.position === item.position && p.alternative === item.alternative) || null;
}

/**
 * a (verify mode): rate the current step with its pre-label's value, as the annotator's own
 * rating. Only where the project asks to verify pre-labels, and only a step that has one: the key
 * never guesses, and in suggestion mode the annotator rates every step themselves.
 */
export function accept(task) {
  const current = task.seq.current;
  if (task.assignment.prelabel_mode !== "verify") {
    task.message = "This project does not ask you to verify pre-labels: rate the step yourself.";
    return null;
  }
  if (!current) return rate(task, null); // every step is rated: rate says what the keys do now
  const shown = prelabelOf(task.assignment, current);
  if (!shown) {
    task.message = `Step ${current.position + 1} has no pre-label: rate it yourself.`;
    return null;
  }
  return rate(task, shown.value);
}

/** f: mark the next rating "unsure" (again: not); with every step rated, toggle the last rating's mark. */
export function flag(task) {
  if (task.seq.current) {
    task.pendingFlag = !task.pendingFlag;
    return null;
  }
  const last = lastRated(task.seq.items, task.ratings);
  if (!last) return null;
  const rating = task.ratings.get(stepKey(last.position, last.alternative));
  return store(task, last, rating.value, !rating.flagged);
}

/** u: clear the last rating (its "unsure" mark waits for the next one), or take the written step back. */
export function undo(task) {
  const current = task.seq.current;
  if (current && current.human && current.text) {
    // Take the written step back (the server allows it only with every completion there
    // -1, so it goes before those ratings); its text stays for w.
    task.writing[current.position] = current.text;
    const change = store(task, current, null, false, null);
    task.pendingFlag = false;
    return change;
  }
  const last = lastRated(task.seq.items, task.ratings);
  if (!last) return null;
  const rating = task.ratings.get(stepKey(last.position, last.alternative));
  const change = store(task, last, null, false);
  task.pendingFlag = Boolean(rating.flagged); // re-rating keeps the "unsure" mark
  return change;
}

/**
 * Pick the alternative at ``position`` the solution goes on from (one rated 0 or +1); returns
 * whether it was picked (else the message says why). A pick is kept in this browser and sent
 * with the submit only.
 */
export function pick(task, position, alternative) {
  const item = task.seq.items.find((i) => i.position === position && i.alternative === alternative);
  if (!item || !item.choosable) {
    task.message = `Completion ${alternative + 1} at step ${position + 1} cannot carry the solution on: pick one`
      + " rated 0 or +1.";
    return false;
  }
  task.picks[position] = alternative;
  task.armed = null;
  return true;
}

/**
 * p: the item the solution would go on from next, {position, alternative}: the next completion that
 * can carry it at the latest step with a choice; null (and a message) where there is none.
 */
export function nextPick(task) {
  const choice = latestChoice(task.seq);
  if (!choice) {
    task.message = `Nothing to pick: ${key(task, "pickNext")} picks the completion`
      + " the solution goes on from after a −1, where two or"
      + " more are rated 0 or +1.";
    return null;
  }
  const at = choice.options.indexOf(choice.going);
  const next = choice.options[(at + 1) % choice.options.length];
  return { position: next.position, alternative: next.alternative };
}

// Writing one's own step -------------------------------------------------------------

/** w: open the editor on the current own step; returns the text it opens with, or null (and a message). */
export function openWriter(task) {
  const current = task.seq.current;
  if (!(current && current.human)) {
    task.message = task.assignment.project.allow_human_steps
      ? "You may write your own step where every completion is rated −1."
      : "This project does not take steps written by annotators.";
    return null;
  }
  task.editing = current.position;
  task.armed = null;
  return current.text || task.writing[current.position] || "";
}

/** What is typed in the editor, kept until it is saved. */
export function keepWriting(task, text) {
  task.writing[task.editing] = text;
}

/**
 * Ctrl+Enter in the editor: store the own step with ``text`` (its rating and mark kept where it had
 * been written before); null, with a message, when nothing is written.
 */
export function saveWritten(task, text) {
  const current = task.seq.current;
  if (!text.trim()) {
    task.message = "Write the step before saving it (Esc leaves the editor).";
    return null;
  }
  const rating = task.ratings.get(stepKey(current.position, HUMAN));
  const written = Boolean(rating && rating.text);
  const change = store(task, current, written ? rating.value : null, written ? rating.flagged : task.pendingFlag, text);
  delete task.writing[current.position];
  task.editing = null;
  return change;
}

// Keys --------------------------------------------------------------------------------

/**
 * What ``key`` does on the work with the key map ``keys`` ({key: action}, keys.js ``keyMap``):
 * ``action`` (an action's name, "leaveWriter", or null) and ``disarm``: any key but submit's drops
 * the question a second submit answers (only the next key may confirm a submit that was asked about).
 */
export function workKey(task, key, keys = WORK_KEYS) {
  // The editor shown after a reload has no focus yet: Esc leaves it as in the editor.
  if (key === "Escape" && task.editing !== null) return { action: "leaveWriter", disarm: false };
  const action = Object.hasOwn(keys, key) ? keys[key] : null;
  return { action, disarm: action !== "submit" && Boolean(task.armed) };
}

// Finishing ---------------------------------------------------------------------------

/**
 * Whether a submit with ``reason`` (null: the pass cannot finish yet) goes to the server now. Else
 * the message says why not, or ``armed`` asks first: Enter at the prompt for an own step says what
 * it would submit (nothing a person wrote goes without a second word from them either).
 */
export function mayFinish(task, reason) {
  const current = task.seq.current;
  if (!reason) {
    task.message = current
      ? `Rate step ${current.position + 1} first (or ${key(task, "giveUp")} to give up, ${key(task, "badProblem")}`
        + " for a bad problem)."
      : "Nothing to submit yet.";
    return false;
  }
  const unwritten = current && current.human && !current.text;
  if (unwritten && !task.armed && reason === task.seq.finish) {
    const unsaved = (task.writing[current.position] || "").trim();
    const [write, submit] = [key(task, "write"), key(task, "submit")];
    task.armed = unsaved
      ? `Your own step ${current.position + 1} is not saved: ${write} opens it. ${submit} again submits without it.`
      : `Submit as "found an error" at step ${current.position + 1}, without a step of your own? ${submit} again`
        + ` submits it; ${write} writes your own step.`;
    return false;
  }
  return true;
}

/**
 * The submit's body: what is still unsent (``outgoing``, the draft queue's) and the picks the pass
 * goes on from (a draft does not keep them); the server merges it all before checking.
 */
export function submitBody(task, { reason, note, outgoing, elapsedMs, revision }) {
  return {
    finish_reason: reason,
    note,
    ratings: withPicks(task, outgoing),
    submit_key: task.submitKey,
    client_elapsed_ms: elapsedMs,
    revision,
  };
}

// The picks that still hold (the alternative is the one the walk goes on from), as rating
// items with ``chosen: true``, merged into the submit's items.
function withPicks(task, items) {
  const out = items.map((r) => ({ ...r }));
  for (const item of task.seq.items) {
    if (!item.continues || String(task.picks[item.position]) !== String(item.alternative)) continue;
    const rating = task.ratings.get(stepKey(item.position, item.alternative));
    const sent = out.find((r) => r.position === item.position && r.alternative === item.alternative);
    if (sent) sent.chosen = true;
    else out.push({ position: item.position, alternative: item.alternative, value: rating.value, chosen: true });
  }
  for (const r of out) if (r.chosen === false) delete r.chosen;
  return out;
}

/**
 * What a submit's answer (null: no answer, offline) means: "submitted"; "conflict" (409 on the
 * revision: changed elsewhere), "lost" (409: the lease), "gone" (404), "signedout" (401/403);
 * "refused" (another 4xx: a rule refused it, the server kept the ratings as a draft); "retry"
 * (no answer or 5xx: sent again until answered, with the same submit key).
 */
export function submitOutcome(answer) {
  if (!answer) return "retry";
  if (answer.status === 200) return "submitted";
  if (answer.status === 409) return (answer.body || {}).field === "revision" ? "conflict" : "lost";
  if (answer.status === 404) return "gone";
  if (answer.status === 401 || answer.status === 403) return "signedout";
  return answer.status < 500 ? "refused" : "retry";
}

// States ------------------------------------------------------------------------------

/** A rating item as the page names it: "step 2 −1", "step 2 alternative 1 +1", "your own step 2". */
export function describe(item) {
  const value = { 1: "+1", 0: "0", "-1": "−1" }[item.value] || "unrated";
  if ("text" in item) return `your own step ${item.position + 1}${item.text === null ? " taken back" : ` ${value}`}`;
  const alternative = item.alternative ? ` alternative ${item.alternative}` : "";
  return `step ${item.position + 1}${alternative} ${value}`;
}

/** The conflict panel's text: the server's ``detail`` and what this tab had not saved (``unsent``), named. */
export function conflictText(detail, unsent) {
  const lost = unsent.length ? ` Not saved from this tab: ${unsent.map(describe).join(", ")}.` : "";
  return `${detail}${lost}`;
}

/**
 * Whether the ratings a save's answer holds (``body``, an assignment payload) differ from what the
 * page shows, apart from ``pending`` keys still on their way. The server takes a change on an older
 * revision when it stores nothing new (a save sent again after its answer was lost); had another
 * device made the same change meanwhile, the rest of what it changed shows here.
 */
export function heldDiffers(body, ratings, pending) {
  const held = ratingsFrom(body);
  const waiting = new Set(pending);
  for (const key of new Set([...held.keys(), ...ratings.keys()])) {
    if (!waiting.has(key) && !sameRating(held.get(key), ratings.get(key))) return true;
  }
  return false;
}

// Two ratings say the same (no rating, an undone one and a withdrawn own step all say nothing).
function sameRating(a, b) {
  const said = (r) => (r && (isSet(r.value) || isSet(r.text)) ? [r.value ?? null, Boolean(r.flagged), r.text ?? null] : null);
  return JSON.stringify(said(a)) === JSON.stringify(said(b));
}

function isSet(x) {
  return x !== null && x !== undefined;
}

/**
 * What a message from this browser's other tab ({assignment, revision, submitted}) means for
 * ``task`` at ``revision``: the conflict panel's detail, or null when it does not concern it.
 */
export function otherTabNews(task, revision, message) {
  if (!task || task.assignment.id !== message.assignment) return null;
  if (message.submitted) return "This solution was submitted in another tab.";
  if (message.revision !== revision) {
    return "Another tab saved a change to this solution: this page no longer shows what is saved.";
  }
  return null;
}
