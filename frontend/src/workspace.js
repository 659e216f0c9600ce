// Entry for the annotator workspace page (labeling/templates/labeling/workspace.html).
//
// It imports the main entry (which base.html loads on every page anyway: styles, KaTeX's
// stylesheet, math in data-math elements) so the bundler keeps math.js and KaTeX inside
// main's file and this entry imports them from there: one copy of KaTeX per page, and
// main's file stays whole on its own (tests/frontend loads it alone).
import "./main.js";
import "./workspace/workspace.css";
import { start } from "./workspace/app.js";

const root = document.getElementById("workspace");
if (root) start(root);
