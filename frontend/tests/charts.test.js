// The chart axes (src/dashboard/charts.js) and the dashboard's units (src/dashboard/dom.js).
import assert from "node:assert/strict";
import test from "node:test";

import { axis } from "../src/dashboard/charts.js";
import { count, duration } from "../src/dashboard/dom.js";

test("an axis widens to whole steps that hold the data", () => {
  const a = axis(-0.24, 1);
  assert.ok(a.lo <= -0.24 && a.hi >= 1, JSON.stringify(a));
  assert.deepEqual(a.ticks, [-0.5, 0, 0.5, 1]);
  assert.equal(a.digits, 1);
  assert.deepEqual(axis(0, 1).ticks, [0, 0.2, 0.4, 0.6, 0.8, 1]);
  assert.deepEqual(axis(0, 11).ticks, [0, 5, 10, 15]);
  assert.deepEqual(axis(0, 0).ticks.slice(0, 2), [0, 0.2]); // nothing to show still gives an axis
  assert.equal(axis(0, 5276).hi >= 5276, true);
});

test("times and counts read as people say them", () => {
  assert.equal(duration(0), "0 s");
  assert.equal(duration(40), "40 s");
  assert.equal(duration(0.04 * 3600), "2 min");
  assert.equal(duration(25 * 60), "25 min");
  assert.equal(duration(3.5 * 3600), "3.5 h");
  assert.equal(duration(3 * 86400), "3.0 days");
  assert.equal(duration(null), "—");
  assert.equal(count(5276), "5,276");
  assert.equal(count(null), "—");
});
