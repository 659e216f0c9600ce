// The step list is put in order by moving only what is out of place (src/workspace/view.js
// placeInOrder): a key that appends a card, or an undo that drops the cards after a -1, leaves
// every other card where it is. A list of plain nodes here counts the moves; the browser test
// tests/browser/test_workspace_redraw.py checks the cards' own DOM on the page.
// Run: cd frontend && node --test tests/
import assert from "node:assert/strict";
import { test } from "node:test";

import { placeInOrder } from "../src/workspace/view.js";

// A parent with the DOM calls placeInOrder makes; ``moves`` records each insert and removal.
function list(...names) {
  const parent = { moves: [], firstChild: null };
  const children = () => {
    const out = [];
    for (let n = parent.firstChild; n; n = n.nextSibling) out.push(n);
    return out;
  };
  const relink = (kids) => {
    parent.firstChild = kids[0] || null;
    kids.forEach((k, i) => { k.parentNode = parent; k.nextSibling = kids[i + 1] || null; });
  };
  const detach = (node) => {
    const kids = children().filter((k) => k !== node);
    node.parentNode = null;
    node.nextSibling = null;
    relink(kids);
  };
  parent.insertBefore = (node, before) => {
    parent.moves.push(`insert ${node.name}`);
    if (node.parentNode === parent) detach(node);
    const kids = children();
    const at = before ? kids.indexOf(before) : kids.length;
    kids.splice(at, 0, node);
    relink(kids);
  };
  const make = (name) => {
    const node = { name, parentNode: null, nextSibling: null };
    node.remove = () => {
      parent.moves.push(`remove ${node.name}`);
      detach(node);
    };
    return node;
  };
  const nodes = names.map(make);
  relink(nodes);
  parent.names = () => children().map((n) => n.name);
  return { parent, nodes, make };
}

test("a card appended at the end is the one move", () => {
  const { parent, nodes, make } = list("a", "b", "c");
  placeInOrder(parent, [...nodes, make("d")]);
  assert.deepEqual(parent.names(), ["a", "b", "c", "d"]);
  assert.deepEqual(parent.moves, ["insert d"]);
});

test("the same cards in the same order move nothing", () => {
  const { parent, nodes } = list("a", "b", "c");
  placeInOrder(parent, nodes);
  assert.deepEqual(parent.moves, []);
});

test("cards after an undone -1 leave; the ones before stay put", () => {
  const { parent, nodes } = list("s1", "s2", "heading", "alt1");
  placeInOrder(parent, nodes.slice(0, 2));
  assert.deepEqual(parent.names(), ["s1", "s2"]);
  assert.deepEqual(parent.moves, ["remove heading", "remove alt1"]);
});

test("a card dropped from the middle is removed, not the rest moved", () => {
  const { parent, nodes } = list("a", "b", "c", "d");
  placeInOrder(parent, [nodes[0], nodes[1], nodes[3]]);
  assert.deepEqual(parent.names(), ["a", "b", "d"]);
  assert.equal(parent.moves.length, 2); // d moved before c, then c removed
  assert.ok(parent.moves.includes("remove c"));
});
