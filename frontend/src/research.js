// Entry of the researcher page (labeling/templates/labeling/research.html): generations,
// checkpoints and snapshots of one project, with the buttons that start their jobs.
import "katex/dist/katex.min.css";
import "./style.css";
import "./dashboard/dashboard.css";
import "./research/research.css";
import { showResearch } from "./research/page.js";

const root = document.getElementById("research");
if (root) showResearch(root);
