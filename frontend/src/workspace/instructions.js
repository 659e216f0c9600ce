// Math inside the project's instructions.
//
// The server sends instructions_html already sanitized (Markdown through nh3). Its math is
// drawn here without ever parsing text as HTML: the text nodes are walked, and each one that
// holds math ($...$, \(...\), ...) is replaced by what renderMath makes of its text: text nodes
// and KaTeX output. Code and preformatted text keep their dollars.
//
// Instructions are the lead's own words, not imported data: they are read with "$" math on
// whatever the project's dollar_math, and "<<...>>" is shown as written (a lead may quote
// GSM8K's calculator markup to explain it).
import { renderMath, splitMath } from "../math.js";

const OPTIONS = { dollarMath: true, calculatorMarkup: true };

const LEAVE_ALONE = new Set(["CODE", "PRE", "KBD", "SAMP", "SCRIPT", "STYLE", "TEXTAREA"]);

function insideLeftAlone(node, root) {
  for (let el = node.parentElement; el && el !== root; el = el.parentElement) {
    if (LEAVE_ALONE.has(el.tagName) || el.classList.contains("katex")) return true;
  }
  return false;
}

/** Render the math in the text of ``root`` (sanitized HTML already in the page); returns root. */
export function renderMathInHtml(root) {
  root.normalize(); // one text node per run of text, so "$x" + "^2$" is seen whole
  const doc = root.ownerDocument;
  const walker = doc.createTreeWalker(root, NodeFilter.SHOW_TEXT);
  const nodes = [];
  while (walker.nextNode()) nodes.push(walker.currentNode);
  for (const node of nodes) {
    const text = node.nodeValue;
    if (!/[$\\]/.test(text) || insideLeftAlone(node, root)) continue;
    if (splitMath(text, OPTIONS).every((s) => s.kind === "text" || s.kind === "calc")) continue; // "$5" stays as it is
    const rendered = doc.createDocumentFragment();
    renderMath(rendered, text, OPTIONS);
    node.replaceWith(rendered);
  }
  return root;
}
