// A person's own workspace keys (keys.js) and what a key does with them (task.js workKey), with
// the messages naming them. The server judges a remapping (labeling/workspace_keys.py, tested
// in tests/labeling/test_workspace_keys.py, which also checks its defaults are ACTIONS here).
import assert from "node:assert/strict";
import { test } from "node:test";

import * as keys from "../src/workspace/keys.js";
import * as state from "../src/workspace/task.js";

function assignment() {
  const steps = [0, 1].map((position) => ({
    position,
    alternatives: [{ alternative: 0, text: `Step ${position}.`, source: "model", rating: null }],
  }));
  return {
    id: 7, revision: "r0", project: { id: 1, name: "p", phase: 2, stop_at_first_error: true, rate_alternatives: false,
      allow_human_steps: false, lease_seconds: 600 }, problem: { problem: "x", ground_truth_answer: "1" }, steps,
  };
}

function taskWith(changed) {
  const task = state.newTask(assignment(), { unsent: {}, writing: {}, picks: {} }, "k", keys.keysOf(changed));
  return { task, map: keys.keyMap(changed) };
}

test("with nothing changed, the keys are the defaults, each key naming one action", () => {
  assert.deepEqual(keys.keyMap({}), state.WORK_KEYS);
  assert.equal(state.WORK_KEYS["1"], "good");
  assert.equal(state.WORK_KEYS["+"], "good");
  assert.equal(state.WORK_KEYS.z, "undoSubmit");
  const all = keys.ACTIONS.flatMap(([, bound]) => bound);
  assert.equal(new Set(all).size, all.length, "no default key is bound twice");
});

test("a changed action has its one key in place of all its defaults; the others keep theirs", () => {
  const map = keys.keyMap({ good: "j" });
  assert.equal(map.j, "good");
  assert.equal(map["1"], undefined);
  assert.equal(map["+"], undefined);
  assert.equal(map["2"], "neutral");
  assert.deepEqual(keys.keysOf({ good: "j" }).good, ["j"]);
  assert.deepEqual(keys.keysOf({ good: "j" }).bad, ["3", "-"]);
});

test("a remapped key rates through workKey, and the old key does nothing", () => {
  const { task, map } = taskWith({ good: "j", submit: "s" });
  assert.deepEqual(state.workKey(task, "j", map), { action: "good", disarm: false });
  assert.deepEqual(state.workKey(task, "1", map), { action: null, disarm: false });
  assert.equal(state.rate(task, state.RATING_VALUES[state.workKey(task, "j", map).action]).rating.value, 1);
  // Only the submit key confirms a submit that was asked about: Enter is no longer it.
  task.armed = "Submit without it?";
  assert.deepEqual(state.workKey(task, "s", map), { action: "submit", disarm: false });
  assert.deepEqual(state.workKey(task, "Enter", map), { action: null, disarm: true });
  // Keys that only look like an action's name are not bound.
  assert.equal(state.workKey(task, "constructor", map).action, null);
});

test("the messages name the person's keys", () => {
  const { task } = taskWith({ giveUp: "G", badProblem: "B", submit: "s", undo: "Delete" });
  state.mayFinish(task, null);
  assert.equal(task.message, "Rate step 1 first (or G to give up, B for a bad problem).");
  const fresh = taskWith({}).task;
  state.mayFinish(fresh, null);
  assert.equal(fresh.message, "Rate step 1 first (or g to give up, b for a bad problem).");
  for (const t of [task, fresh]) {
    state.rate(t, 1);
    state.walk(t);
    state.rate(t, 1);
    state.walk(t);
    state.rate(t, 1);
  }
  assert.equal(task.message, "Every step here is rated: s submits, Delete changes the last rating.");
  assert.equal(fresh.message, "Every step here is rated: Enter submits, u changes the last rating.");
});

test("the form stores only changes: a key pressed back to an action's single default drops it", () => {
  assert.deepEqual(keys.rebind({}, "flag", "x"), { flag: "x" });
  assert.deepEqual(keys.rebind({ flag: "x" }, "flag", "f"), {});
  // +1 has two defaults: binding 1 alone is a change (+ no longer rates).
  assert.deepEqual(keys.rebind({}, "good", "1"), { good: "1" });
});

test("keys are written as the page writes them", () => {
  assert.equal(keys.keyLabel("-"), "−");
  assert.equal(keys.keyLabel("Backspace"), "⌫");
  assert.equal(keys.keyLabel("ArrowUp"), "↑");
  assert.equal(keys.keyName(keys.keysOf({}), "bad"), "3");
  assert.equal(keys.keyName(keys.keysOf({ bad: "-" }), "bad"), "−");
});

test("the keys the page carries: {} where it carries none or nothing readable", () => {
  const doc = (text) => ({ getElementById: () => (text === null ? null : { textContent: text }) });
  assert.deepEqual(keys.pageKeys(doc('{"good": "j"}')), { good: "j" });
  assert.deepEqual(keys.pageKeys(doc(null)), {});
  assert.deepEqual(keys.pageKeys(doc("[1]")), {});
  assert.deepEqual(keys.pageKeys(doc("{")), {});
});
