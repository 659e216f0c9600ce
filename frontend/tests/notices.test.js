// What the workspace tells an annotator about their own standing and their last finished pass
// (src/workspace/standing.js, src/workspace/view.js finishedText).
// Run: cd frontend && node --test tests/
import assert from "node:assert/strict";
import test from "node:test";

import { resultsNews, standingOf } from "../src/workspace/standing.js";
import { finishedText } from "../src/workspace/view.js";

test("a pause by hand shows the lead's reason; an automatic pause does not say why", () => {
  const byHand = standingOf({ state: "paused", reason: "please reread the guidelines on −1" }, null);
  assert.equal(byHand.text, "Paused by a lead: please reread the guidelines on −1");
  assert.equal(byHand.blocked, true);
  const automatic = standingOf({ state: "paused", reason: "" }, null);
  assert.equal(automatic.text, "Paused by quality control — a lead will review");
  assert.equal(standingOf({ state: "paused" }, null).text, automatic.text);
});

test("a give-up or a report is confirmed as what it was, with today's count once known", () => {
  assert.equal(finishedText("solution"), "Submitted.");
  assert.equal(finishedText("found_error", 7), "Submitted. 7 done today.");
  assert.equal(finishedText("give_up"), "Given up — the lead sees why.");
  assert.equal(finishedText("bad_problem", 0), "Problem reported — the lead sees it. 0 done today.");
  assert.ok(!finishedText("give_up", 3).startsWith("Submitted"));
});

test("checked results are news when they changed since this browser said so, not on a first visit", () => {
  assert.equal(resultsNews({ results: "0.1" }, "0.0"), true);
  assert.equal(resultsNews({ results: "0.1" }, "0.1"), false);
  assert.equal(resultsNews({ results: "0.1" }, null), false);
  assert.equal(resultsNews(null, "0.0"), false);
});
