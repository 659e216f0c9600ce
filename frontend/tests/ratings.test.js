// The quality page's votes (src/dashboard/ratings.js): counts in reading order and who gave each.
import assert from "node:assert/strict";
import test from "node:test";

import { ballots } from "../src/dashboard/ratings.js";

test("votes read +1, 0, −1 with the names of who gave each", () => {
  assert.deepEqual(ballots({ "-1": 2, 1: 1 }, { "-1": ["bea", "cal"], 1: ["ann"] }), [
    { value: 1, count: 1, names: ["ann"] },
    { value: -1, count: 2, names: ["bea", "cal"] },
  ]);
});

test("without names (the gold proposals) the counts stand alone, and a value nobody gave is left out", () => {
  assert.deepEqual(ballots({ 0: 3, 1: 0 }), [{ value: 0, count: 3, names: [] }]);
});
