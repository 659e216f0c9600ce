// The page's copy of the submission rules (src/workspace/sequence.js) against the server's, through
// the shared test vectors in tests/vectors/submission_rules.json. tests/labeling/work/test_rule_vectors.py
// submits every scenario to the server and checks what it accepts; here sequence() must offer the
// finish reason the file says, and never one the server refuses. Run: cd frontend && node --test tests/
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";

import { HUMAN, ratingsFrom, sequence, stepKey } from "../src/workspace/sequence.js";

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
    // The annotator's pick ("chosen") is kept in the browser, not in the payload: app.js sets it
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
