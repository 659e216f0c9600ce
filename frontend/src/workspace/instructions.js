// Math inside the project's instructions.
//
// The server sends instructions_html already sanitized (Markdown through nh3). Its math is
// drawn here without ever parsing text as HTML: the text nodes are walked, and each one that
// holds $...$ (or $$...$$) is replaced by what renderMath makes of its text: text nodes and
// KaTeX output. Code and preformatted text keep their dollars.
import { renderMath, splitMath } from "../math.js";

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
    if (!text.includes("$") || insideLeftAlone(node, root)) continue;
    if (splitMath(text).every((s) => s.kind === "text")) continue; // a lone "$5" stays as it is
    const rendered = doc.createDocumentFragment();
    renderMath(rendered, text);
    node.replaceWith(rendered);
  }
  return root;
}
