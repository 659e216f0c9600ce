// The page's copy of the submission rules (src/workspace/sequence.js) against the server's, through
// the shared test vectors in tests/vectors/submission_rules.json. tests/labeling/work/test_rule_vectors.py
// submits every scenario to the server and checks what it accepts; here sequence() must offer the
// finish reason the file says, and never one the server refuses. Run: cd frontend && node --test tests/
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";

import { HUMAN, latestChoice, ratingsFrom, sequence, stepKey } from "../src/workspace/sequence.js";

const { scenarios } = JSON.parse(
  readFileSync(new URL("../../tests/vectors/submission_rules.json", import.meta.url), "utf8"),
);

// The assignment payload the API would send for the scenario's ratings saved as a draft
// (test_rule_vectors.py checks the server sends this shape): model steps "step p.a"; the own step
// takes the alternative index after the model ones; a cleared model rating leaves no row.
function payloadOf(scenario) {
  const own = new Map(scenario.ratings.filter((r) => "human_text" in r).map((r) => [r.position, r]));
  const count = (position) => scenario.alternatives[String(position)] || 0;
  const steps = [];
  for (let position = 0; position < scenario.steps; position++) {
    const alternatives = [];
    for (let a = 0; a <= count(position); a++) {
      alternatives.push({ alternative: a, text: `step ${position}.${a}`, source: "model" });
    }
    if (own.has(position)) {
      alternatives.push({ alternative: count(position) + 1, text: own.get(position).human_text, source: "human" });
    }
    steps.push({ position, alternatives });
  }
  const ratings = [];
  for (const r of scenario.ratings) {
    if ("human_text" in r) {
      ratings.push({ position: r.position, alternative: count(r.position) + 1, value: r.value, flagged: false });
    } else if (r.value !== null) {
      ratings.push({ position: r.position, alternative: r.alternative, value: r.value, flagged: false });
    }
  }
  return { project: scenario.project, steps, ratings };
}

function refused(scenario, reason) {
  return Boolean(scenario.ratings_refused) || !scenario.accepts.includes(reason);
}

test("the vectors hold scenarios", () => {
  assert.ok(scenarios.length >= 20);
});

for (const scenario of scenarios) {
  test(scenario.name, () => {
    const assignment = payloadOf(scenario);
    const ratings = ratingsFrom(assignment);
    // The annotator's pick ("chosen") is kept in the browser, not in the payload: task.js sets it
    // on the rating again after a reload, as here.
    for (const r of scenario.ratings) {
      if (r.chosen) ratings.get(stepKey(r.position, r.alternative)).chosen = true;
    }
    const { finish, items } = sequence(assignment, ratings);
    assert.equal(finish, scenario.page);
    if (scenario.continues) {
      const going = Object.fromEntries(items.filter((i) => i.continues).map((i) => [String(i.position), i.alternative]));
      assert.deepEqual(going, scenario.continues);
    }
    if (finish !== null) assert.ok(!refused(scenario, finish), `the page offers ${finish}, which the server refuses`);
    if (scenario.accepts.length === 0) assert.equal(finish, null);
  });
}

test("an own step comes back under its HUMAN key with its text", () => {
  const scenario = scenarios.find((s) => s.name === "phase 1: own step rated +1 carries the pass on");
  const ratings = ratingsFrom(payloadOf(scenario));
  assert.deepEqual(ratings.get(stepKey(1, HUMAN)), { position: 1, value: 1, flagged: false, text: "my own step" });
});

test("the p key's choice is the latest step where two or more completions can carry the pass on", () => {
  // Phase 1: step 1 -1 with alternatives 0 and +1 (a choice), step 2 -1 with one alternative +1 (none).
  const assignment = payloadOf({
    project: { stop_at_first_error: false, allow_alternatives: true, allow_human_steps: false },
    steps: 3,
    alternatives: { 0: 2, 1: 1 },
    ratings: [],
  });
  const rated = [[0, 0, -1], [0, 1, 0], [0, 2, 1], [1, 0, -1], [1, 1, 1]];
  const ratings = new Map(rated.map(([p, a, value]) => [stepKey(p, a), { position: p, alternative: a, value }]));
  const choice = latestChoice(sequence(assignment, ratings));
  assert.equal(choice.position, 0);
  assert.deepEqual(choice.options.map((i) => i.alternative), [1, 2]);
  assert.equal(choice.going.alternative, 2); // the default: the +1 one
  ratings.get(stepKey(0, 1)).chosen = true; // picked: the pass goes on from alternative 1
  assert.equal(latestChoice(sequence(assignment, ratings)).going.alternative, 1);
  ratings.set(stepKey(0, 2), { position: 0, alternative: 2, value: -1 }); // one left: nothing to pick
  assert.equal(latestChoice(sequence(assignment, ratings)), null);
});
