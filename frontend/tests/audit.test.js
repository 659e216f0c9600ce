// How the audit page words an entry's before and after (src/audit/changes.js).
import assert from "node:assert/strict";
import test from "node:test";

import { changes } from "../src/audit/changes.js";

test("a change reads old → new per field, with what was only made or only removed", () => {
  assert.deepEqual(changes({ state: null, reason: "" }, { state: "paused", reason: "too fast" }), [
    { key: "state", kind: "changed", was: "—", now: "paused" },
    { key: "reason", kind: "changed", was: "—", now: "too fast" },
  ]);
  assert.deepEqual(changes(null, { ratings: { "0.0": 1 } }), [
    { key: "ratings", kind: "set", was: null, now: '{"0.0":1}' }]);
  assert.deepEqual(changes({ username: "cal" }, null), [
    { key: "username", kind: "removed", was: "cal", now: null }]);
  assert.deepEqual(changes({ gold_threshold: 0 }, { gold_threshold: 0.75 }), [
    { key: "gold_threshold", kind: "changed", was: "0", now: "0.75" }]);
  assert.deepEqual(changes(null, null), []);
});
