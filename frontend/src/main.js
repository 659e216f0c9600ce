// Entry for every server-rendered page: styles, then math in elements marked data-math, and
// in the text of data-math-html elements (Markdown the server rendered and sanitized: the
// home page's project descriptions).
import "katex/dist/katex.min.css";
import "./style.css";
import { renderMathIn } from "./math.js";
import { renderMathInHtml } from "./workspace/instructions.js";

renderMathIn(document);
for (const element of document.querySelectorAll("[data-math-html]")) renderMathInHtml(element);
