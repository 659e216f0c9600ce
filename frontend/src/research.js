// Entry of the researcher page (labeling/templates/labeling/research.html): generations,
// checkpoints and snapshots of one project, with the buttons that start their jobs.
// Through main.js (which every page loads anyway), so the shared styles and the math
// renderer stay in main's chunk.
import "./main.js";
import "./dashboard/dashboard.css";
import "./research/research.css";
import { showResearch } from "./research/page.js";

const root = document.getElementById("research");
if (root) showResearch(root);
