// The workspace's task and what each key does to it (src/workspace/task.js): ratings, the "unsure"
// mark, undo, the own step, picks, what a save and a submit send, and how refusals read.
// Run: cd frontend && node --test tests/
import assert from "node:assert/strict";
import { test } from "node:test";

import * as state from "../src/workspace/task.js";
import { HUMAN, stepKey } from "../src/workspace/sequence.js";
import { ACTIONS } from "../src/workspace/keys.js";

const PHASE_2 = { stop_at_first_error: true, allow_alternatives: false, allow_human_steps: false };
const PHASE_1 = { stop_at_first_error: false, allow_alternatives: true, allow_human_steps: true };

// An assignment payload as POST /next/ sends it: ``alternatives`` {position: count of model ones}.
function assignment({ project = PHASE_2, steps = 3, alternatives = {}, ratings = [], revision = "r1" } = {}) {
  return {
    id: 7,
    revision,
    project: { id: 1, name: "p", lease_seconds: 600, ...project },
    steps: Array.from({ length: steps }, (_, position) => ({
      position,
      alternatives: Array.from({ length: (alternatives[position] || 0) + 1 }, (_, a) => (
        { alternative: a, text: `step ${position}.${a}`, source: "model" })),
    })),
    ratings: ratings.map(([position, alternative, value]) => ({ position, alternative, value, flagged: false })),
  };
}

const NOTHING_STORED = { unsent: {}, writing: {}, picks: {} };

function taskOf(options, stored = NOTHING_STORED) {
  return state.newTask(assignment(options), stored, "key-1");
}

/** Apply a transition the way app.js does: run it, then walk the ratings again. */
function apply(task, transition, ...args) {
  const result = transition(task, ...args);
  state.walk(task);
  return result;
}

// Phase 1, step 0 rated -1 with both its alternatives -1: the page asks for the annotator's own step.
function atOwnStep() {
  return taskOf({ project: PHASE_1, steps: 2, alternatives: { 0: 2 }, ratings: [[0, 0, -1], [0, 1, -1], [0, 2, -1]] });
}

test("the keys are modeless: each names one action, and the digits always rate", () => {
  assert.equal(state.WORK_KEYS["1"], "good");
  assert.equal(state.WORK_KEYS["2"], "neutral");
  assert.equal(state.WORK_KEYS["3"], "bad");
  assert.deepEqual(state.RATING_VALUES, { good: 1, neutral: 0, bad: -1 });
  assert.equal(state.WORK_KEYS.p, "pickNext");
  // Every key the legend shows does something.
  for (const [action, keys] of ACTIONS) {
    for (const key of keys) assert.equal(state.WORK_KEYS[key], action, `the legend shows ${key} for ${action}`);
  }
});

test("a key other than Enter drops the question a second Enter answers; Esc leaves the editor", () => {
  const task = taskOf();
  assert.deepEqual(state.workKey(task, "3"), { action: "bad", disarm: false });
  task.armed = "Submit without it?";
  assert.deepEqual(state.workKey(task, "Enter"), { action: "submit", disarm: false });
  assert.deepEqual(state.workKey(task, "x"), { action: null, disarm: true });
  assert.equal(state.workKey(task, "Escape").action, null);
  task.editing = 1;
  assert.equal(state.workKey(task, "Escape").action, "leaveWriter");
});

test("rating the current step sends it as a draft item and moves on; the unsure mark rides on it once", () => {
  const task = taskOf();
  assert.equal(apply(task, state.flag), null); // marks the next rating, sends nothing
  assert.equal(task.pendingFlag, true);
  const change = apply(task, state.rate, -1);
  assert.deepEqual(change, { key: "0:0", rating: { position: 0, alternative: 0, value: -1, flagged: true } });
  assert.equal(task.pendingFlag, false);
  assert.equal(task.ratings.get("0:0").value, -1);
  // Phase 2: a -1 ends the pass there.
  assert.equal(task.seq.current, null);
  assert.equal(task.seq.finish, "found_error");
});

test("rating with every step rated changes nothing and says what Enter and u do", () => {
  const task = taskOf({ steps: 1, ratings: [[0, 0, 1]] });
  assert.equal(apply(task, state.rate, 1), null);
  assert.match(task.message, /Enter submits, u changes the last rating/);
  // f toggles the last rating's mark instead, and sends it.
  assert.deepEqual(apply(task, state.flag), {
    key: "0:0", rating: { position: 0, alternative: 0, value: 1, flagged: true },
  });
});

test("undo clears the last rating, and a cleared unsure mark waits for the next rating", () => {
  const task = taskOf();
  apply(task, state.flag);
  apply(task, state.rate, 1);
  apply(task, state.rate, 0);
  assert.deepEqual(apply(task, state.undo), {
    key: "1:0", rating: { position: 1, alternative: 0, value: null, flagged: false },
  });
  assert.equal(task.seq.current.position, 1);
  assert.equal(task.pendingFlag, false);
  apply(task, state.undo);
  assert.equal(task.seq.current.position, 0);
  assert.equal(task.pendingFlag, true); // step 0 was unsure: rated again, it is unsure again
  assert.equal(apply(task, state.undo), null); // nothing left to undo
});

test("a key at the prompt for an own step does not rate it before it is written", () => {
  const task = atOwnStep();
  assert.equal(task.seq.current.alternative, HUMAN);
  assert.equal(apply(task, state.rate, 1), null);
  assert.match(task.message, /Press w to write your own step first/);
});

test("the own step: written in the editor, sent with its text and no alternative, taken back with text null", () => {
  const task = atOwnStep();
  assert.equal(apply(task, state.openWriter), "");
  assert.equal(task.editing, 0);
  state.keepWriting(task, "half");
  assert.deepEqual(task.writing, { 0: "half" });
  assert.equal(apply(task, state.saveWritten, "   "), null);
  assert.match(task.message, /Write the step before saving it/);
  const change = apply(task, state.saveWritten, "x = 2");
  assert.deepEqual(change, { key: stepKey(0, HUMAN), rating: { position: 0, value: null, flagged: false, text: "x = 2" } });
  assert.deepEqual(task.writing, {});
  assert.equal(task.editing, null);
  // Written, it waits for its rating; u takes it back and keeps its text for w.
  assert.equal(task.seq.current.text, "x = 2");
  assert.deepEqual(apply(task, state.undo).rating, { position: 0, value: null, flagged: false, text: null });
  assert.deepEqual(task.writing, { 0: "x = 2" });
  assert.equal(apply(task, state.openWriter), "x = 2");
});

test("w where no own step is asked for opens nothing and says why", () => {
  const task = taskOf();
  assert.equal(apply(task, state.openWriter), null);
  assert.equal(task.editing, null);
  assert.match(task.message, /does not take steps written by annotators/);
});

test("the editor closes when its step is no longer the current one", () => {
  const task = atOwnStep();
  apply(task, state.openWriter);
  task.ratings.set("0:2", { position: 0, alternative: 2, value: 1 }); // an alternative now carries it on
  state.walk(task);
  assert.equal(task.editing, null);
});

test("Enter at the prompt for an own step asks first; the second Enter submits", () => {
  const task = atOwnStep();
  assert.equal(task.seq.finish, "found_error");
  assert.equal(state.mayFinish(task, task.seq.finish), false);
  assert.match(task.armed, /without a step of your own\? Enter again submits it/);
  assert.equal(state.mayFinish(task, task.seq.finish), true);
  // With a step typed and not saved, the question says so.
  task.armed = null;
  task.writing[0] = "typed";
  state.mayFinish(task, task.seq.finish);
  assert.match(task.armed, /Your own step 1 is not saved/);
  // give_up needs no second word.
  task.armed = null;
  assert.equal(state.mayFinish(task, "give_up"), true);
});

test("Enter before the pass can finish says what is left", () => {
  const task = taskOf();
  assert.equal(state.mayFinish(task, task.seq.finish), false);
  assert.match(task.message, /Rate step 1 first/);
});

test("the submit sends what is unsent, the picks as chosen, the timing and the revision", () => {
  // Phase 1: step 0 -1, its alternatives 0 and +1; the annotator picks alternative 1 (0) over the default.
  const task = taskOf({ project: PHASE_1, steps: 1, alternatives: { 0: 2 }, ratings: [[0, 0, -1], [0, 1, 0]] });
  apply(task, state.rate, 1); // alternative 2: +1, still unsent
  assert.equal(task.seq.items.find((i) => i.continues).alternative, 2); // the default: the +1 one
  assert.equal(apply(task, state.pick, 0, 1), true);
  assert.equal(task.seq.items.find((i) => i.continues).alternative, 1);
  // A pick that no longer holds is not sent as one (chosen false says nothing to the server).
  const outgoing = [{ position: 0, alternative: 2, value: 1, flagged: false, chosen: false }];
  const body = state.submitBody(task, { reason: "solution", note: "", outgoing, elapsedMs: 4200, revision: "r2" });
  assert.deepEqual(body, {
    finish_reason: "solution",
    note: "",
    ratings: [
      { position: 0, alternative: 2, value: 1, flagged: false },
      { position: 0, alternative: 1, value: 0, chosen: true },
    ],
    submit_key: "key-1",
    client_elapsed_ms: 4200,
    revision: "r2",
  });
  assert.notEqual(body.ratings[0], outgoing[0]); // a copy: the queue's items stay as they are
});

test("p cycles the completion the pass goes on from; a completion rated −1 cannot be picked", () => {
  const task = taskOf({ project: PHASE_1, steps: 2, alternatives: { 0: 3 }, ratings: [[0, 0, -1], [0, 1, 0], [0, 2, 1], [0, 3, -1]] });
  assert.deepEqual(state.nextPick(task), { position: 0, alternative: 1 });
  apply(task, state.pick, 0, 1);
  assert.deepEqual(state.nextPick(task), { position: 0, alternative: 2 });
  assert.equal(apply(task, state.pick, 0, 3), false);
  assert.match(task.message, /cannot carry the solution on/);
  assert.deepEqual(task.picks, { 0: 1 });
  const none = taskOf();
  assert.equal(state.nextPick(none), null);
  assert.match(none.message, /Nothing to pick/);
});

test("a pick holds on a rating stored anew after an undo", () => {
  // Alternative 1 is +1 (the default), alternative 2 is 0 and picked.
  const task = taskOf({ project: PHASE_1, steps: 2, alternatives: { 0: 2 }, ratings: [[0, 0, -1], [0, 1, 1], [0, 2, 0]] });
  apply(task, state.pick, 0, 2);
  assert.equal(apply(task, state.undo).key, "0:2");
  apply(task, state.rate, 0); // rated again: a new rating, without the pick on it
  assert.equal(task.seq.items.find((i) => i.continues).alternative, 2);
});

test("ratings this browser never got acknowledged lie over the payload's and go on the revision they were made on", () => {
  const stored = { unsent: { "0:0": { position: 0, alternative: 0, value: -1, flagged: false } }, revision: "old",
                   writing: {}, picks: {} };
  const task = taskOf({ ratings: [[0, 0, 1]], revision: "new" }, stored);
  assert.equal(task.ratings.get("0:0").value, -1);
  assert.equal(state.unsentBase(stored, task.assignment), "old");
  assert.equal(state.unsentBase(NOTHING_STORED, task.assignment), "new");
});

test("a submit's answer: 409 on the revision is a conflict, another 409 the lease, 5xx and no answer retried", () => {
  assert.equal(state.submitOutcome({ status: 200, body: {} }), "submitted");
  assert.equal(state.submitOutcome({ status: 409, body: { field: "revision", detail: "changed" } }), "conflict");
  assert.equal(state.submitOutcome({ status: 409, body: { detail: "lease" } }), "lost");
  assert.equal(state.submitOutcome({ status: 404, body: {} }), "gone");
  assert.equal(state.submitOutcome({ status: 403, body: {} }), "signedout");
  assert.equal(state.submitOutcome({ status: 400, body: { detail: "rule" } }), "refused");
  assert.equal(state.submitOutcome({ status: 429, body: {} }), "refused");
  assert.equal(state.submitOutcome({ status: 502, body: null }), "retry");
  assert.equal(state.submitOutcome(null), "retry");
});

test("a conflict names what this tab had not saved", () => {
  const unsent = [
    { position: 1, alternative: 0, value: -1, flagged: false },
    { position: 1, alternative: 2, value: 1, flagged: false },
    { position: 2, value: null, flagged: false, text: null },
    { position: 3, value: 0, flagged: false, text: "mine" },
  ];
  assert.equal(state.conflictText("Changed.", unsent),
    "Changed. Not saved from this tab: step 2 −1, step 2 alternative 2 +1, your own step 3 taken back, your own step 4 0.");
  assert.equal(state.conflictText("Changed.", []), "Changed.");
});

test("a save's answer differs from the page only where a rating not on its way says something else", () => {
  const task = taskOf({ ratings: [[0, 0, 1]] });
  apply(task, state.rate, -1);
  const server = (ratings) => assignment({ ratings });
  assert.equal(state.heldDiffers(server([[0, 0, 1], [1, 0, -1]]), task.ratings, []), false);
  assert.equal(state.heldDiffers(server([[0, 0, 1]]), task.ratings, ["1:0"]), false); // still on its way
  assert.equal(state.heldDiffers(server([[0, 0, 0], [1, 0, -1]]), task.ratings, []), true);
  // An undone rating and no rating say the same.
  apply(task, state.undo);
  assert.equal(state.heldDiffers(server([[0, 0, 1]]), task.ratings, []), false);
});

test("another tab's save or submit on the same assignment puts this one behind", () => {
  const task = taskOf();
  assert.equal(state.otherTabNews(task, "r1", { assignment: 8, submitted: true }), null);
  assert.equal(state.otherTabNews(task, "r1", { assignment: 7, revision: "r1" }), null);
  assert.match(state.otherTabNews(task, "r1", { assignment: 7, revision: "r2" }), /Another tab saved a change/);
  assert.match(state.otherTabNews(task, "r1", { assignment: 7, submitted: true }), /submitted in another tab/);
  assert.equal(state.otherTabNews(null, null, { assignment: 7, submitted: true }), null);
});

test("no key acts while a submit is on its way", () => {
  const task = taskOf();
  assert.equal(state.ready(task, 5), true);
  assert.equal(task.lastActivity, 5);
  task.busy = true;
  assert.equal(state.ready(task, 9), false);
  assert.equal(state.ready(null), false);
});

// Machine pre-labels (labeling/work/prelabels.py): shown per the project's mode; a accepts one in verify mode.
function withPrelabels(mode, prelabels) {
  const payload = { ...assignment({ steps: 3 }), prelabel_mode: mode, prelabels };
  return state.newTask(payload, NOTHING_STORED, "key-1");
}

test("in verify mode the accept key rates the current step with its pre-label, and never guesses", () => {
  const task = withPrelabels("verify", [{ position: 0, alternative: 0, value: 1, reason: "" },
    { position: 2, alternative: 0, value: -1, reason: "" }]);
  assert.equal(state.WORK_KEYS.a, "accept");
  const change = apply(task, state.accept);
  assert.deepEqual(change.rating, { position: 0, alternative: 0, value: 1, flagged: false });
  assert.equal(apply(task, state.accept), null); // step 2 has no pre-label: rated by hand only
  assert.match(task.message, /Step 2 has no pre-label/);
  assert.equal(task.ratings.size, 1);
  apply(task, state.rate, 0);
  assert.equal(apply(task, state.accept).rating.value, -1); // step 3's pre-label, as shown
});

test("suggestions and hidden pre-labels are never accepted by a key", () => {
  for (const mode of ["suggest", "hidden"]) {
    const task = withPrelabels(mode, [{ position: 0, alternative: 0, value: 1, reason: "ok" }]);
    assert.equal(apply(task, state.accept), null);
    assert.match(task.message, /rate the step yourself/);
    assert.equal(task.ratings.size, 0);
  }
  const hidden = withPrelabels("hidden", [{ position: 0, alternative: 0, value: 1, reason: "" }]);
  assert.equal(state.prelabelOf(hidden.assignment, hidden.seq.current), null);
  const shown = withPrelabels("suggest", [{ position: 0, alternative: 0, value: 1, reason: "" }]);
  assert.equal(state.prelabelOf(shown.assignment, shown.seq.current).value, 1);
});
