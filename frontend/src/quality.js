// Entry of the lead's quality page (labeling/templates/labeling/quality.html): the quality
// settings, the gold-proposal queue, the adjudication queue and the steps where people and the
// champion PRM disagree most (the researcher page's section, frontend/src/research/people.js) of one project.
// Through main.js (which every page loads anyway), so the shared styles and the math renderer
// stay in main's chunk.
import "./main.js";
import "./dashboard/dashboard.css";
import "./dashboard/quality.css";
import { el } from "./dom.js";
import { optionsFromData } from "./math.js";
import { section } from "./dashboard/dom.js";
import { showDisagreements } from "./dashboard/adjudication.js";
import { showProposals } from "./dashboard/proposals.js";
import { showPeopleVsPrm } from "./research/people.js";
import { settingsSection, showSettings } from "./dashboard/settings.js";

const root = document.getElementById("quality");
if (root) {
  root.querySelector(".dash-loading")?.remove();
  const data = root.dataset;
  const options = optionsFromData(data);
  const urls = {
    proposals: data.proposalsUrl, approve: data.approveUrl, reject: data.rejectUrl,
    disagreements: data.disagreementsUrl, consensus: data.consensusUrl, export: data.exportUrl,
  };
  const proposals = section("Gold proposals", "proposals");
  proposals.append(el("p", "muted small",
    "Gold drawn from the majority of the trusted annotators' passes. Approve to make it the solution's gold."));
  const disagreements = section("Disagreements to rule on", "disagreements");
  disagreements.append(el("p", "muted small",
    "Solutions whose passes gave a step different ratings. Your ruling replaces the majority in the consensus."));
  const versus = section("People vs PRM", "people-vs-prm");
  const settings = settingsSection();
  // The page runs long (every disagreement expanded): a bar of links at the top, kept in view,
  // reaches each section, and each section's address can be shared (#disagreements).
  const nav = el("nav", "q-nav small");
  nav.setAttribute("aria-label", "Sections of this page");
  for (const [box, label] of [[proposals, "Gold proposals"], [disagreements, "Disagreements"],
    [versus, "People vs PRM"], [settings, "Settings"]]) {
    box.id = box.dataset.testid;
    const link = el("a", null, label);
    link.href = `#${box.id}`;
    nav.append(link);
  }
  root.append(nav, proposals, disagreements, versus, settings);
  const fail = (box) => (error) => box.append(el("p", "errors", `Could not load: ${error.message}`));
  Promise.all([
    showProposals(proposals, urls, options).catch(fail(proposals)),
    showDisagreements(disagreements, urls, options).catch(fail(disagreements)),
    showPeopleVsPrm(versus, data).catch(fail(versus)),
    showSettings(settings, data.settingsUrl).catch(fail(settings)),
  ]).then(() => { root.dataset.state = "ready"; });
}
