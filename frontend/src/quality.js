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
import { section, tabCount } from "./dashboard/dom.js";
import { showDisagreements } from "./dashboard/adjudication.js";
import { showProposals } from "./dashboard/proposals.js";
import { showPeopleVsPrm } from "./research/people.js";
import { settingsSection, showSettings } from "./dashboard/settings.js";
import { showPrelabelSettings } from "./dashboard/prelabels.js";
import { showSources } from "./research/sources.js";

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
  // Labels from more than people: how the sources agree, and what annotators see of them.
  const sources = section("Label sources", "label-sources");
  const prelabelForm = el("div");
  const settings = settingsSection();
  // Tabs (the ARIA pattern: arrow keys, Home and End move between them; Tab goes into the panel):
  // one section at a time keeps the page short on a phone, and each tab is an address (#settings)
  // that can be shared or bookmarked, as the anchors before them were.
  const tabs = el("div", "q-tabs");
  tabs.setAttribute("role", "tablist");
  tabs.setAttribute("aria-label", "Sections of this page");
  const panels = [[proposals, "Gold proposals"], [disagreements, "Disagreements"], [versus, "People vs PRM"],
    [sources, "Label sources"], [settings, "Settings"]].map(([box, label]) => {
    box.id = box.dataset.testid;
    const tab = el("button", "q-tab", label);
    tab.type = "button";
    // How many the section lists (pending proposals, disagreements under the filter, steps
    // compared), told by the section itself as it loads and changes (dashboard/dom.js tellCount).
    const counted = el("span", "q-tab-count");
    counted.dataset.testid = `tab-count-${box.id}`;
    tab.append(counted);
    box.addEventListener("count", (event) => { counted.textContent = tabCount(event.detail); });
    tab.id = `tab-${box.id}`;
    tab.setAttribute("role", "tab");
    tab.setAttribute("aria-controls", box.id);
    box.setAttribute("role", "tabpanel");
    box.setAttribute("aria-labelledby", tab.id);
    tabs.append(tab);
    return { box, tab };
  });
  const show = (id, { focus = false, remember = true } = {}) => {
    const chosen = panels.find((p) => p.box.id === id) || panels[0];
    for (const { box, tab } of panels) {
      const on = box === chosen.box;
      tab.setAttribute("aria-selected", String(on));
      tab.tabIndex = on ? 0 : -1;
      box.hidden = !on;
    }
    if (focus) chosen.tab.focus();
    if (remember) history.replaceState(null, "", `${location.pathname}${location.search}#${chosen.box.id}`);
  };
  tabs.addEventListener("click", (event) => {
    const tab = event.target.closest('[role="tab"]');
    if (tab) show(tab.getAttribute("aria-controls"));
  });
  tabs.addEventListener("keydown", (event) => {
    const at = panels.findIndex((p) => p.tab === document.activeElement);
    const to = { ArrowRight: at + 1, ArrowLeft: at - 1, Home: 0, End: panels.length - 1 }[event.key];
    if (at < 0 || to === undefined) return;
    event.preventDefault();
    show(panels[(to + panels.length) % panels.length].box.id, { focus: true });
  });
  // A link to #settings (or the back button to one) opens that tab.
  window.addEventListener("hashchange", () => show(location.hash.slice(1), { remember: false }));
  show(location.hash.slice(1), { remember: false });
  root.append(tabs, proposals, disagreements, versus, sources, settings);
  const fail = (box) => (error) => box.append(el("p", "errors", `Could not load: ${error.message}`));
  Promise.all([
    showProposals(proposals, urls, options).catch(fail(proposals)),
    showDisagreements(disagreements, urls, options).catch(fail(disagreements)),
    showPeopleVsPrm(versus, data).catch(fail(versus)),
    showSources(sources, data).then(() => {
      sources.append(prelabelForm);
      return showPrelabelSettings(prelabelForm, data.prelabelSettingsUrl, data.sourceAgreementUrl);
    }).catch(fail(sources)),
    showSettings(settings, data.settingsUrl).catch(fail(settings)),
  ]).then(() => { root.dataset.state = "ready"; });
}
