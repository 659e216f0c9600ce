// renderMath: show problem and step text with its LaTeX rendered, safely.
//
// Imported text is untrusted. It only ever enters the page as text nodes; KaTeX builds the
// math itself with trust off (no \href, \url, \htmlClass and friends) and never throws.
// Recognised segments, as they appear in MATH and PRM800K:
//   $$...$$ and \[...\]   display math
//   $...$ and \(...\)     inline math
//   [asy]...[/asy]        Asymptote source, shown as code (we do not draw it)
//   \$                    a literal dollar sign outside math
// An opening delimiter without its closing partner is kept as plain text.
import katex from "katex";

const KATEX_OPTIONS = { throwOnError: false, trust: false, strict: "ignore", maxExpand: 1000 };

// Openers in the order they are tried at one position: longer ones first.
const OPENERS = [
  { open: "[asy]", close: "[/asy]", kind: "asy" },
  { open: "$$", close: "$$", kind: "display" },
  { open: "\\[", close: "\\]", kind: "display" },
  { open: "\\(", close: "\\)", kind: "inline" },
  { open: "$", close: "$", kind: "inline" },
];

/**
 * Split ``text`` into segments ``{kind, value}`` with kind "text", "inline", "display" or
 * "asy". Exported for tests.
 */
export function splitMath(text) {
  const segments = [];
  let plain = "";
  let i = 0;
  const flush = () => {
    if (plain) segments.push({ kind: "text", value: plain });
    plain = "";
  };
  while (i < text.length) {
    if (text.startsWith("\\$", i)) {
      plain += "$";
      i += 2;
      continue;
    }
    const match = matchSegment(text, i);
    if (match) {
      flush();
      segments.push({ kind: match.kind, value: match.value });
      i = match.next;
      continue;
    }
    plain += text[i];
    i += 1;
  }
  flush();
  return segments;
}

// The first delimited segment that opens at ``i`` and is closed, or null.
function matchSegment(text, i) {
  for (const opener of OPENERS) {
    if (!text.startsWith(opener.open, i)) continue;
    const start = i + opener.open.length;
    const end = findClose(text, opener.close, start);
    if (end > start) return { kind: opener.kind, value: text.slice(start, end), next: end + opener.close.length };
  }
  return null;
}

// The index of ``close`` at or after ``from``, skipping backslash-escaped characters
// (so "\$" inside math does not end it); -1 when there is none.
function findClose(text, close, from) {
  for (let j = from; j < text.length; j++) {
    if (text.startsWith(close, j)) return j;
    if (text[j] === "\\" && close !== "\\]" && close !== "\\)" && close !== "[/asy]") j += 1;
  }
  return -1;
}

/**
 * Replace the children of ``element`` with ``text`` rendered: prose as text nodes, math by
 * KaTeX, [asy] blocks as <pre><code>. Returns ``element``.
 */
export function renderMath(element, text) {
  element.replaceChildren();
  for (const segment of splitMath(String(text ?? ""))) {
    element.appendChild(renderSegment(element.ownerDocument, segment));
  }
  return element;
}

function renderSegment(doc, { kind, value }) {
  if (kind === "text") return doc.createTextNode(value);
  if (kind === "asy") {
    const pre = doc.createElement("pre");
    pre.className = "asy";
    const code = doc.createElement("code");
    code.textContent = value;
    pre.appendChild(code);
    return pre;
  }
  const holder = doc.createElement(kind === "display" ? "div" : "span");
  holder.className = kind === "display" ? "math-display" : "math-inline";
  try {
    katex.render(value, holder, { ...KATEX_OPTIONS, displayMode: kind === "display" });
  } catch {
    // throwOnError=false covers parse errors; anything else still shows the source.
    holder.textContent = value;
  }
  return holder;
}

/**
 * Render every element under ``root`` that carries ``data-math``: its text content (which
 * the server wrote escaped) is taken as the source.
 */
export function renderMathIn(root) {
  for (const element of root.querySelectorAll("[data-math]")) {
    if (element.dataset.mathRendered) continue;
    renderMath(element, element.textContent);
    element.dataset.mathRendered = "1";
  }
}
