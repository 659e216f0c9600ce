// The checkpoint trend charts' figures (src/research/trend.js).
import assert from "node:assert/strict";
import test from "node:test";

import { gapLegend, trendPoints } from "../src/research/trend.js";

// #1 registered as the first champion (no held-out figures of its own), #2 failed, #3 beat #1
// (measuring it on its held-out problems), #4 lost to #3, #5 training.
const checkpoints = [
  { id: 3, status: "champion", is_champion: true,
    metrics: { heldout: { step_auroc: 0.81 }, champion_id: 1, champion_heldout: { step_auroc: 0.62 } } },
  { id: 1, status: "champion", is_champion: false, metrics: { registered: { requested_layout: "stepmark" } } },
  { id: 2, status: "failed", is_champion: false, metrics: { forced: true } },
  { id: 4, status: "rejected", is_champion: false,
    metrics: { heldout: { step_auroc: 0.7 }, champion_id: 3, champion_heldout: { step_auroc: 0.8 } } },
  { id: 5, status: "training", is_champion: false, metrics: {} },
];

test("a former champion is drawn with the figure its challenger measured, and named so", () => {
  const points = trendPoints(checkpoints, "step_auroc");
  assert.deepEqual(points.map((p) => p.label), ["#1", "#2", "#3", "#4", "#5"]);
  assert.deepEqual(points.map((p) => p.value), [0.62, null, 0.81, 0.7, null]);
  assert.equal(points[0].note, "former champion, measured when #3 challenged it");
  assert.equal(points[0].why, null);
  assert.equal(points[2].note, "champion");  // its own figure wins over #4's measure of it
  assert.deepEqual(points.map((p) => p.why), [null, "failed", null, null, "training"]);
});

test("the gaps' legend names only the reasons that occur", () => {
  assert.deepEqual(gapLegend(trendPoints(checkpoints, "step_auroc")), [["no-data", "no figure (failed; training)"]]);
  const unevaluated = [{ id: 9, status: "registered", is_champion: false, metrics: { registered: {} } }];
  assert.deepEqual(gapLegend(trendPoints([...checkpoints.slice(0, 2), ...unevaluated], "step_auroc")),
    [["no-data", "no figure (not evaluated on the held-out problems)"]]);
  assert.deepEqual(gapLegend(trendPoints(checkpoints.slice(0, 2), "step_auroc")), []);
});
