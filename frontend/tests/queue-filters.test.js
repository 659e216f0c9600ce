// The adjudication queue's filter (src/dashboard/queue-filters.js): the address says a step as
// people read it, the API takes its 0-based position; a collapsed disagreement's excerpt never
// cuts a formula in two.
import assert from "node:assert/strict";
import test from "node:test";

import { addressQuery, apiQuery, excerpt, filtersFrom, splitSteps } from "../src/dashboard/queue-filters.js";

test("the filter is read from the address: known keys with a value, a bad step or status left out", () => {
  assert.deepEqual(filtersFrom("?state=ruled&annotator=7&generation=2&step=3&other=1"),
    { state: "ruled", annotator: "7", generation: "2", step: "3" });
  assert.deepEqual(filtersFrom("?annotator=&step=0&state=closed"), {});
  assert.deepEqual(filtersFrom("?step=x"), {});
  assert.deepEqual(filtersFrom("?step=-1"), {});
});

test("the API gets the step as a position, open by default, with the page", () => {
  assert.equal(apiQuery({ step: "3", annotator: "7" }, 20, 40), "state=open&annotator=7&position=2&limit=20&offset=40");
  assert.equal(apiQuery({ state: "all", generation: "0" }, 20, 0), "state=all&generation=0&limit=20&offset=0");
});

test("the address keeps only a filter that narrows, and what else it held", () => {
  assert.equal(addressQuery("?state=ruled&step=2", { state: "open" }), "");
  assert.equal(addressQuery("?x=1", { state: "ruled", annotator: "7", step: "" }), "?x=1&state=ruled&annotator=7");
});

test("an excerpt folds whitespace, cuts at a word and never inside a formula", () => {
  assert.equal(excerpt("Find   $x$\nif $2x = 4$."), "Find $x$ if $2x = 4$.");
  const long = `Let ${"word ".repeat(12)}and $a^2 + b^2 = c^2$ be true`;
  // At 75 characters the cut falls inside "$a^2 + b^2 = c^2$": the formula goes whole.
  assert.equal(excerpt(long, 75), `Let ${"word ".repeat(12)}and…`);
  assert.equal(excerpt(long, 200), long);
  assert.ok(!excerpt(`${"ab ".repeat(20)}\\(x + y + z + w + v\\) more`, 70).includes("\\("));
  assert.equal(excerpt(""), "");
});

test("a collapsed disagreement names only the steps the passes disagree on", () => {
  const steps = [{ position: 0, disagree: false }, { position: 1, disagree: true }, { position: 2, disagree: true }];
  assert.deepEqual(splitSteps(steps).map((s) => s.position), [1, 2]);
});
