// Entry of the lead pages: the dashboard and an annotator's drill-down (see
// labeling/templates/labeling/dashboard*.html); the root element says which.
//
// Like workspace.js it imports the main entry (which base.html loads anyway), so KaTeX and
// the shared styles stay in main's file: one copy per page.
import "./main.js";
import "./dashboard/dashboard.css";
import { el } from "./dom.js";
import { showAnnotator } from "./dashboard/drilldown.js";
import { showOverview } from "./dashboard/overview.js";

const root = document.getElementById("dashboard");
if (root) {
  const show = root.dataset.page === "annotator" ? showAnnotator : showOverview;
  show(root).catch((error) => {
    root.querySelector(".dash-loading")?.remove();
    root.append(el("p", "errors", `Could not load the figures: ${error.message}`));
    root.dataset.state = "error";
  });
}
