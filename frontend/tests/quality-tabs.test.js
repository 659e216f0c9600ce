// The quality page's tab counts (src/quality.js, src/dashboard/dom.js): each section tells its
// count with a bubbling "count" event; the tab writes it after its label.
import assert from "node:assert/strict";
import test from "node:test";

import { tabCount, tellCount } from "../src/dashboard/dom.js";

test("a tab's count follows its label, grouped; nothing while unknown", () => {
  assert.equal(tabCount(12), " (12)");
  assert.equal(tabCount(0), " (0)");
  assert.equal(tabCount(5276), " (5,276)");
  assert.equal(tabCount(null), "");
  assert.equal(tabCount(undefined), "");
});

test("a section tells its count with an event that bubbles to the section", () => {
  const section = new EventTarget();
  const told = [];
  section.addEventListener("count", (event) => told.push([event.detail, event.bubbles]));
  tellCount(section, 3);
  tellCount(section, null);
  assert.deepEqual(told, [[3, true], [null, true]]);
});
