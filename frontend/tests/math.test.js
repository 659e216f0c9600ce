// splitMath and prepareTex (src/math.js) on real lines of data/ (tests/vectors/rendering.json)
// and on the rules one by one. The same vectors are rendered in Chromium by
// tests/browser/test_rendering.py, with every other line of the data.
// Run: cd frontend && node --test tests/
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";
import { gunzipSync } from "node:zlib";

import { optionsFromData, prepareTex, renderOptions, splitMath } from "../src/math.js";

const vectors = JSON.parse(readFileSync(new URL("../../tests/vectors/rendering.json", import.meta.url), "utf8"));
const ON = { dollarMath: true };
const OFF = { dollarMath: false };

const formulas = (segments) => segments.filter((s) => s.kind === "inline" || s.kind === "display");
const shown = (segments) => segments.map((s) => (s.kind === "text" ? s.value : `[${s.kind}]`)).join("");
const kinds = (text, options) => splitMath(text, options).map((s) => [s.kind, s.value]);

test("real GSM8K and ProcessBench lines with prices stay text, with \"$\" math on or off", () => {
  assert.ok(vectors.prices.length >= 15);
  for (const { where, text, text_shown: expected } of vectors.prices) {
    for (const options of [ON, OFF]) {
      const segments = splitMath(text, options);
      assert.deepEqual(formulas(segments), [], `${where} ${JSON.stringify(options)}`);
      assert.equal(shown(segments), expected, where);
    }
  }
});

test("real MATH, PRM800K and ProcessBench lines give KaTeX the formulas they hold", () => {
  for (const { where, text, options, formulas: expected } of vectors.math) {
    assert.deepEqual(formulas(splitMath(text, options)).map((s) => prepareTex(s.value)), expected, where);
  }
});

test("the GSM8K lines where Pandoc's rule pairs dollars are exactly the listed ones", () => {
  // Why GSM8K imports turn "$" math off: over every line of both GSM8K files, "$" math on
  // reads money as math in these few lines ("$25-$30=$-5", "20$ ... 2700$") and no others.
  const read = (name) => gunzipSync(readFileSync(new URL(`../../data/gsm8k/${name}`, import.meta.url)))
    .toString("utf8").split("\n").filter(Boolean).map((line) => JSON.parse(line));
  const texts = [];
  const walk = (value) => {
    if (typeof value === "string") texts.push(...value.split("\n"));
    else if (value && typeof value === "object") Object.values(value).forEach(walk);
  };
  read("test.jsonl.gz").forEach(walk);
  read("example_model_solutions.jsonl.gz").forEach(walk);
  assert.ok(texts.length > 36000);
  const pairs = new Set(texts.filter((t) => formulas(splitMath(t, ON)).some((s) => s.raw.startsWith("$"))));
  assert.deepEqual([...pairs].sort(), [...new Set(vectors.gsm8k_dollar_pairs.map((v) => v.text))].sort());
  assert.ok(pairs.size > 0 && pairs.size < 10);
  assert.ok(texts.every((t) => formulas(splitMath(t, OFF)).length === 0), "with \"$\" math off GSM8K has no math");
});

test("Pandoc's rule for $: opens before a non-space, closes after a non-space and not before a digit", () => {
  assert.deepEqual(kinds("$x$", ON), [["inline", "x"]]);
  assert.deepEqual(kinds("$20,000 and $30,000", ON), [["text", "$20,000 and $30,000"]]);
  assert.deepEqual(kinds("costs $ x$ here", ON), [["text", "costs $ x$ here"]]);
  assert.deepEqual(kinds("$x $ and", ON), [["text", "$x $ and"]]);
  assert.deepEqual(kinds("$5$2", ON), [["text", "$5$2"]]);
  assert.deepEqual(kinds("$40 - 4 = 36$ minutes", ON), [["inline", "40 - 4 = 36"], ["text", " minutes"]]);
  assert.deepEqual(kinds("$a\n\nb$", ON), [["text", "$a\n\nb$"]]); // no blank line inside
  assert.deepEqual(kinds("$a\nb$", ON), [["inline", "a\nb"]]);
  assert.deepEqual(kinds("$$ x + 1 $$ after", ON), [["display", " x + 1 "], ["text", " after"]]);
  assert.deepEqual(kinds("\\(x\\) and \\[y\\]", ON), [["inline", "x"], ["text", " and "], ["display", "y"]]);
});

test("\\$ is a dollar sign, in text and in math; \\\\ escapes the backslash instead", () => {
  assert.deepEqual(kinds("it costs \\$5 and \\$6", ON), [["text", "it costs $5 and $6"]]);
  assert.deepEqual(kinds("$\\$5$", ON), [["inline", "\\$5"]]);
  // MATH's price: a formula that is only a dollar sign closes even before a digit.
  assert.deepEqual(kinds("costs $\\$$1500.", ON), [["text", "costs "], ["inline", "\\$"], ["text", "1500."]]);
  assert.deepEqual(kinds("a\\\\[2pt]b", ON), [["text", "a\\\\[2pt]b"]]);
});

test("a \"$\" inside braces does not close: \\text{...} and models' \\boxed{$8}", () => {
  assert.deepEqual(kinds("$\\text{costs $5 now}$", ON), [["inline", "\\text{costs $5 now}"]]);
  assert.deepEqual(kinds("is $\\boxed{$8.00}$.", ON), [["text", "is "], ["inline", "\\boxed{$8.00}"], ["text", "."]]);
  assert.deepEqual(kinds("$\\frac{1}{2$ x", ON), [["text", "$\\frac{1}{2$ x"]]); // never closed
});

test("with \"$\" math off, $ and $$ are text and \\(...\\), \\[...\\] still math", () => {
  assert.deepEqual(kinds("$x$ and $$y$$", OFF), [["text", "$x$ and $$y$$"]]);
  assert.deepEqual(kinds("so \\(x^2\\) and \\[y\\]", OFF), [["text", "so "], ["inline", "x^2"], ["text", " and "], ["display", "y"]]);
});

test("GSM8K calculator markup is left out unless shown, and never read as math", () => {
  const line = "She makes 9 * 2 = $<<9*2=18>>18 every day and pays $<<2*3=6>>6.";
  assert.deepEqual(kinds(line, ON), [["text", "She makes 9 * 2 = $18 every day and pays $6."]]);
  assert.deepEqual(kinds(line, { ...OFF, calculatorMarkup: true }), [
    ["text", "She makes 9 * 2 = $"], ["calc", "<<9*2=18>>"], ["text", "18 every day and pays $"],
    ["calc", "<<2*3=6>>"], ["text", "6."],
  ]);
  // A model's unclosed "<<" is no markup: it stays in the text.
  assert.deepEqual(kinds("half is <<14=14", OFF), [["text", "half is <<14=14"]]);
});

test("[asy] is a diagram segment, and its labels' dollars do not pair with the text's", () => {
  const text = "costs $5 [asy]label(\"$A$\", (0,0));[/asy] and $x$";
  assert.deepEqual(kinds(text, ON), [
    ["text", "costs $5 "], ["asy", "label(\"$A$\", (0,0));"], ["text", " and "], ["inline", "x"],
  ]);
});

test("prepareTex writes MATH's LaTeX that KaTeX lacks the way KaTeX reads it", () => {
  assert.equal(prepareTex("\\begin{array}{@{}c@{\\;}c} a & b \\end{array}"), "\\begin{array}{cc} a & b \\end{array}");
  assert.equal(prepareTex("a \\\\ \\cline{2-4} b"), "a \\\\ \\hline b");
  assert.equal(prepareTex("\\begin{array}{ccc}\\multicolumn{2}{r}{4} & x\\end{array}"),
    "\\begin{array}{ccc} & 4 & x\\end{array}");
  assert.equal(prepareTex("\\text{proj}_\\vec{a} b"), "\\text{proj}_{\\vec{a}} b");
  assert.equal(prepareTex("\\boxed{$8} + \\$2"), "\\boxed{\\$8} + \\$2");
  assert.equal(prepareTex("a &= 0 \\\\ b &= 1"), "\\begin{aligned}a &= 0 \\\\ b &= 1\\end{aligned}");
  assert.equal(prepareTex("\\begin{pmatrix} a & b \\\\ c & d \\end{pmatrix}"), "\\begin{pmatrix} a & b \\\\ c & d \\end{pmatrix}");
});

test("the project's settings become the renderer's options", () => {
  assert.deepEqual(renderOptions({ id: 4, dollar_math: false, show_calculator_markup: true }),
    { dollarMath: false, calculatorMarkup: true, projectId: 4 });
  assert.deepEqual(renderOptions(undefined), { dollarMath: true, calculatorMarkup: false });
  assert.deepEqual(optionsFromData({ dollarMath: "0", calculatorMarkup: "1", projectId: "7" }),
    { dollarMath: false, calculatorMarkup: true, projectId: 7 });
  assert.deepEqual(optionsFromData({}), { dollarMath: true, calculatorMarkup: false, projectId: null });
});

test("calculator markup inside an [asy] block stays: the code is drawn, and named, as written", () => {
  const code = 'label("<<x>>", (0,0));';
  assert.deepEqual(kinds(`a <<1+1=2>>2 [asy]${code}[/asy]`, OFF), [["text", "a 2 "], ["asy", code]]);
});
