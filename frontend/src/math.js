// renderMath: show problem and step text with its LaTeX rendered, safely. The one renderer of
// every page: problem, steps, alternatives, own steps, instructions, dashboards, research.
//
// Imported text is untrusted. It only ever enters the page as text nodes; KaTeX builds the
// math itself with trust off (no \href, \url, \htmlClass and friends), and LaTeX it cannot
// read is shown as written (renderSegment), so nothing here throws.
// Recognised segments (docs/formats.md, "How text is rendered"):
//   $$...$$ and \[...\]   display math
//   $...$ and \(...\)     inline math; "$" by Pandoc's rule (see dollarInline), so "$2 per egg
//                         ... $112" stays text
//   [asy]...[/asy]        an Asymptote diagram, drawn by the server (diagram.js)
//   \$                    a literal dollar sign outside math
//   <<16*7=112>>          GSM8K calculator markup, left out unless calculatorMarkup is set
// An opening delimiter without its closing partner is kept as plain text.
//
// Options (the project's settings, see renderOptions): dollarMath (default true) false makes
// "$" and "$$" plain text, for plain-text data sets such as GSM8K; calculatorMarkup (default
// false) true shows "<<...>>" annotations instead of leaving them out; projectId, passed on to
// the diagram renderer.
import katex from "katex";

import { diagramNode } from "./diagram.js";

const KATEX_OPTIONS = { throwOnError: true, trust: false, strict: "ignore", maxExpand: 1000 };

// One GSM8K calculator annotation: "<<" expression ">>" on one line (the expression is usually
// "a*b=c"; model-written ones may lack the "=" and are markup all the same).
const CALCULATOR = /<<[^<>\n]*>>/g;

const DEFAULTS = { dollarMath: true, calculatorMarkup: false };

/**
 * The renderer's options from a project's settings as the API sends them
 * (``{dollar_math, show_calculator_markup, id}``); missing settings keep the defaults.
 */
export function renderOptions(project) {
  if (!project) return { ...DEFAULTS };
  return {
    dollarMath: project.dollar_math ?? DEFAULTS.dollarMath,
    calculatorMarkup: project.show_calculator_markup ?? DEFAULTS.calculatorMarkup,
    projectId: project.id ?? null,
  };
}

/**
 * ``renderOptions`` from an element's ``dataset``: data-dollar-math and data-calculator-markup
 * ("1" or "0", as the server's templates write the project's settings), data-project-id.
 */
export function optionsFromData(data = {}) {
  const flag = (value) => (value === undefined ? undefined : value === "1");
  return renderOptions({
    dollar_math: flag(data.dollarMath),
    show_calculator_markup: flag(data.calculatorMarkup),
    id: data.projectId ? Number(data.projectId) : null,
  });
}

/**
 * Split ``text`` into segments ``{kind, value}`` with kind "text", "inline", "display", "asy"
 * or "calc" (a calculator annotation, only when ``calculatorMarkup`` is set); all but "text"
 * also carry ``raw``, the segment as written, delimiters included. Exported for tests.
 */
export function splitMath(text, options = {}) {
  const { dollarMath, calculatorMarkup } = { ...DEFAULTS, ...options };
  // Hidden markup goes first, so "$<<9*2=18>>18" reads "$18" to the "$" rule as it does to a person.
  const source = calculatorMarkup ? text : withoutMarkup(text);
  const segments = [];
  let plain = "";
  let i = 0;
  const flush = () => {
    if (plain) segments.push({ kind: "text", value: plain });
    plain = "";
  };
  while (i < source.length) {
    if (source.startsWith("\\\\", i)) {
      // An escaped backslash: the "\[" of "\\[2pt]" or the "$" of "\\$x$" is not escaped by it.
      plain += "\\\\";
      i += 2;
      continue;
    }
    if (source.startsWith("\\$", i)) {
      plain += "$";
      i += 2;
      continue;
    }
    const match = (calculatorMarkup && matchCalculator(source, i)) || matchSegment(source, i, dollarMath);
    if (match) {
      flush();
      segments.push({ kind: match.kind, value: match.value, raw: source.slice(i, match.next) });
      i = match.next;
      continue;
    }
    plain += source[i];
    i += 1;
  }
  flush();
  return segments;
}

// ``text`` without its calculator markup, except inside [asy] blocks: a diagram's code is
// drawn as written, and its sha256 names the drawing (diagram.js, labeling/diagrams/blocks.py).
const MARKUP_OUTSIDE_DIAGRAMS = new RegExp(String.raw`\[asy\][\s\S]*?\[\/asy\]|` + CALCULATOR.source, "g");

function withoutMarkup(text) {
  return text.replace(MARKUP_OUTSIDE_DIAGRAMS, (found) => (found.startsWith("[asy]") ? found : ""));
}

function matchCalculator(text, i) {
  if (!text.startsWith("<<", i)) return null;
  CALCULATOR.lastIndex = i;
  const found = CALCULATOR.exec(text);
  if (!found || found.index !== i) return null;
  return { kind: "calc", value: found[0], next: i + found[0].length };
}

// Delimiters in the order they are tried at one position: longer ones first.
const DELIMITED = [
  { open: "[asy]", close: "[/asy]", kind: "asy", dollar: false },
  { open: "$$", close: "$$", kind: "display", dollar: true },
  { open: "\\[", close: "\\]", kind: "display", dollar: false },
  { open: "\\(", close: "\\)", kind: "inline", dollar: false },
];

// The first segment that opens at ``i`` and is closed, or null.
function matchSegment(text, i, dollarMath) {
  for (const opener of DELIMITED) {
    if ((opener.dollar && !dollarMath) || !text.startsWith(opener.open, i)) continue;
    const start = i + opener.open.length;
    const end = findClose(text, opener.close, start);
    if (end > start) return { kind: opener.kind, value: text.slice(start, end), next: end + opener.close.length };
  }
  if (dollarMath && text[i] === "$") {
    const end = dollarInline(text, i + 1);
    if (end > 0) return { kind: "inline", value: text.slice(i + 1, end), next: end + 1 };
  }
  return null;
}

// The index of ``close`` at or after ``from``, skipping backslash-escaped characters
// (so "\$" inside math does not end it); -1 when there is none.
function findClose(text, close, from) {
  const escapes = close === "$$";
  for (let j = from; j < text.length; j++) {
    if (text.startsWith(close, j)) return j;
    if (escapes && text[j] === "\\") j += 1;
  }
  return -1;
}

const SPACE = /\s/;
const DIGIT = /[0-9]/;

// Pandoc's tex_math_dollars rule for inline math opened by the "$" just before ``from``: the
// opening "$" is followed by a non-space; the first unescaped "$" after it closes, and then
// only if it is preceded by a non-space and not followed by a digit (so "$20,000 and $30,000"
// is text); no blank line inside. Returns the closing "$"'s index, or -1: then the opening "$"
// is a plain dollar sign. Two readings for MATH's and models' LaTeX, which Pandoc lacks:
// - a "$" inside braces does not close (Pandoc's own exception for "\text{costs $5}",
//   widened to every group: "$\boxed{$8.00}$" is one formula);
// - a closing "$" before a digit still closes a formula that ends in an escaped dollar:
//   MATH writes a price "$\$$1500".
function dollarInline(text, from) {
  if (from >= text.length || SPACE.test(text[from]) || text[from] === "$") return -1;
  let depth = 0;
  let dollarSign = false; // what came last was "\$"
  for (let j = from; j < text.length; ) {
    const c = text[j];
    if (c === "$" && depth === 0) {
      return DIGIT.test(text[j + 1] ?? "") && !dollarSign ? -1 : j;
    }
    if (c === "[" && text.startsWith("[asy]", j)) return -1; // a diagram's labels hold "$" of their own
    dollarSign = c === "\\" && text[j + 1] === "$";
    if (c === "\\") {
      j += 2;
    } else if (SPACE.test(c)) {
      let k = j;
      while (k < text.length && SPACE.test(text[k])) k += 1;
      const run = text.slice(j, k);
      if (run.indexOf("\n") !== run.lastIndexOf("\n")) return -1; // a blank line
      if (text[k] === "$" && depth === 0) return -1; // a space before the closing "$"
      j = k;
    } else {
      if (c === "{") depth += 1;
      else if (c === "}") depth = Math.max(0, depth - 1);
      j += 1;
    }
  }
  return -1;
}

/**
 * Replace the children of ``element`` with ``text`` rendered: prose as text nodes, math by
 * KaTeX, [asy] blocks by drawDiagram. ``options`` as for splitMath (see renderOptions).
 * Returns ``element``.
 */
export function renderMath(element, text, options = {}) {
  element.replaceChildren();
  const doc = element.ownerDocument;
  for (const segment of splitMath(String(text ?? ""), options)) {
    element.appendChild(renderSegment(doc, segment, options));
  }
  return element;
}

function renderSegment(doc, { kind, value, raw }, options) {
  if (kind === "text") return doc.createTextNode(value);
  if (kind === "asy") return drawDiagram(doc, value, options);
  if (kind === "calc") {
    const calc = doc.createElement("span");
    calc.className = "calc";
    calc.textContent = value;
    return calc;
  }
  const holder = doc.createElement(kind === "display" ? "div" : "span");
  holder.className = kind === "display" ? "math-display" : "math-inline";
  try {
    katex.render(prepareTex(value), holder, {
      ...KATEX_OPTIONS, displayMode: kind === "display", macros: { ...MACROS },
    });
  } catch (error) {
    // LaTeX that LaTeX itself would refuse (a double superscript, a misspelt command, an
    // unclosed brace: models write such steps) is shown as it was written, delimiters and
    // all, with KaTeX's reason on hover: the person rating the step sees what the model wrote.
    holder.className = "math-source";
    holder.textContent = raw ?? value;
    holder.title = `Not valid LaTeX: ${error?.message ?? error}`;
  }
  return holder;
}

// LaTeX that MATH and PRM800K use and KaTeX lacks, as KaTeX's nearest equivalent. Every render
// gets a fresh copy: a "\gdef" in one step must not reach the next.
const MACROS = {
  "\\mbox": "\\text{#1}",
  "\\cancelto": "\\cancel{#2}^{#1}",
  "\\overarc": "\\overgroup{#1}",
};

// One-argument commands that LaTeX takes bare after "_" or "^" ("\text{proj}_\vec{a}") and
// KaTeX only in braces.
const BARE_SCRIPT =
  /([_^])\s*(\\(?:vec|hat|bar|tilde|widehat|widetilde|overline|underline|dot|ddot|mathbf|mathrm|mathit|mathbb|mathcal|boldsymbol|text|operatorname)\s*\{[^{}]*\})/g;
const ARRAY_SPEC = /\\begin\{array\}\{((?:[^{}]|\{[^{}]*\})*)\}/g;
const MULTICOLUMN = /\\multicolumn\{(\d+)\}\{([^{}]*)\}\{((?:[^{}]|\{[^{}]*\})*)\}/g;

/**
 * ``tex`` with what KaTeX cannot read written the way it can (exported for tests): "@{...}"
 * column separators dropped from array specs, "\cline{a-b}" drawn as "\hline", "\multicolumn"
 * as its content in the first (right-aligned: the last) of its columns, a bare "\vec{a}" after
 * "_" or "^" braced, a "$" inside math (a model's price: "\boxed{$8}") read as a dollar sign,
 * and rows split by "&" and "\\" outside any environment set as an aligned block.
 */
export function prepareTex(tex) {
  let out = tex
    .replace(ARRAY_SPEC, (_, spec) => `\\begin{array}{${spec.replace(/@\{[^{}]*\}/g, "")}}`)
    .replace(/\\cline\s*\{[^{}]*\}/g, "\\hline")
    .replace(MULTICOLUMN, (_, n, spec, content) => {
      const pad = " &".repeat(Math.max(0, Number(n) - 1));
      return spec.includes("r") ? `${pad} ${content}` : `${content}${pad}`;
    })
    .replace(BARE_SCRIPT, "$1{$2}")
    .replace(/\\[\s\S]|\$/g, (m) => (m === "$" ? "\\$" : m));
  if (/(^|[^\\])&/.test(out) && out.includes("\\\\") && !/\\begin\s*\{/.test(out)) {
    out = `\\begin{aligned}${out}\\end{aligned}`;
  }
  return out;
}

// [asy] diagrams: the server's drawing, or the code folded (diagram.js). ``options.projectId``
// says whose drawings to ask for; without it the code is shown.
function drawDiagram(doc, code, options) {
  return diagramNode(code, { projectId: options.projectId ?? null, document: doc });
}

/**
 * Render every element under ``root`` that carries ``data-math``: its text content (which
 * the server wrote escaped) is taken as the source, with the options of its data attributes
 * (``optionsFromData``).
 */
export function renderMathIn(root) {
  for (const element of root.querySelectorAll("[data-math]")) {
    if (element.dataset.mathRendered) continue;
    renderMath(element, element.textContent, optionsFromData(element.dataset));
    element.dataset.mathRendered = "1";
  }
}
