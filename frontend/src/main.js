// Entry for every server-rendered page: styles, then math in elements marked data-math.
import "katex/dist/katex.min.css";
import "./style.css";
import { renderMathIn } from "./math.js";

renderMathIn(document);
