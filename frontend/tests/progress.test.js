// The research page's progress in words (src/research/progress.js): a run and a retrain.
import assert from "node:assert/strict";
import test from "node:test";

import { phaseText, runText } from "../src/research/progress.js";

test("a run says what it does: waiting, scoring at a rate with the time left, selecting", () => {
  assert.equal(runText({ state: "queued", scored: 0, total: 0 }), "waiting for the PRM worker");
  assert.equal(runText({ state: "scoring", scored: 0, total: 0 }), "scoring: counting the candidate pool");
  assert.equal(runText({ state: "scoring", scored: 3328, total: 5272, rate: 16.64, eta_s: 116.8 }),
    "3,328 / 5,272 scored at 17/s, about 2 min left");
  assert.equal(runText({ state: "scoring", scored: 12, total: 40, rate: 2.5, eta_s: 11.2 }),
    "12 / 40 scored at 2.5/s, about 11 s left");
  assert.equal(runText({ state: "scoring", scored: 12, total: 40, rate: null, eta_s: null }), "12 / 40 scored");
  assert.equal(runText({ state: "selecting", scored: 40, total: 40 }), "40 / 40 scored; selecting the generation");
  assert.equal(runText({ state: "cancelled", scored: 12, total: 40 }), "12 / 40 scored");
});

test("a run scored in shards says how many are done and how many workers hold one", () => {
  const shards = { shards: 10, done: 3, claimed: 2, scored: 12, total: 40 };
  assert.equal(runText({ state: "scoring", scored: 12, total: 40, rate: 2.5, eta_s: 11.2, shards }),
    "12 / 40 scored at 2.5/s, about 11 s left; shards: 3 of 10 done, 2 being scored");
  assert.equal(runText({ state: "scoring", scored: 12, total: 40, shards: { ...shards, shards: 1 } }), "12 / 40 scored");
});

test("a retrain says its phase, and its step, loss and time left while it trains", () => {
  assert.equal(phaseText({}), "training: waiting for the GPU worker");
  assert.equal(phaseText({ phase: "exporting" }), "exporting the ratings");
  assert.equal(phaseText({ phase: "training", step: 0, total_steps: null }), "training: loading the base model");
  assert.equal(phaseText({ phase: "training", step: 40, total_steps: 100, loss: 0.41234, eta_s: 1500 }),
    "training: step 40 of 100, loss 0.412, about 25 min left");
  assert.equal(phaseText({ phase: "evaluating" }), "evaluating against the champion on the held-out problems");
  assert.equal(phaseText({ phase: "saving" }), "saving the checkpoint");
});
