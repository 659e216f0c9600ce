// The researcher page: sections that load (and fail) independently.
import { section } from "../dashboard/dom.js";
import { el } from "../dom.js";
import { showCheckpoints } from "./checkpoints.js";
import { showExports } from "./exports.js";
import { showGenerations } from "./generations.js";
import { showImports } from "./imports.js";
import { showJudge } from "./judge.js";
import { showPeopleVsPrm } from "./people.js";
import { showLoopSettings } from "./settings.js";
import { showSimulations } from "./simulations.js";
import { showSources } from "./sources.js";
import { guarded } from "./util.js";

export async function showResearch(root) {
  const urls = root.dataset;
  // [title, anchor (the address's #fragment), test id, what draws it]
  const parts = [
    ["Import", "import", "imports", showImports],
    ["Generations", "generations", "generations", showGenerations],
    ["People vs PRM", "people-vs-prm", "people-vs-prm", showPeopleVsPrm],
    ["Label sources", "label-sources", "label-sources", showSources],
    ["LLM judge", "judge", "judge", showJudge],
    ["Checkpoints", "checkpoints", "checkpoints", showCheckpoints],
    ["Does the selection pay off?", "selection", "simulations", showSimulations],
    ["Exports", "exports", "snapshots", showExports],
    ["Loop settings", "loop-settings", "loop-settings", showLoopSettings],
  ].map(([title, anchor, testid, show]) => {
    const box = section(title, testid);
    box.id = anchor;
    return { title, box, show };
  });
  root.querySelector(".dash-loading")?.remove();
  // Nine sections make a page of several screens (about 4,400 px at 1280 wide, 7,900 on a
  // phone): a line of links to each, which also gives each an address to share.
  const contents = el("nav", "research-contents");
  contents.setAttribute("aria-label", "Sections of this page");
  contents.dataset.testid = "research-contents";
  const list = el("ul");
  for (const { title, box } of parts) {
    const link = el("a", null, title);
    link.href = `#${box.id}`;
    const item = el("li");
    item.append(link);
    list.append(item);
  }
  contents.append(list);
  // Appended before the first wait, so the sections exist as the page loads and the browser can
  // take an address's #fragment to its section (it keeps it in view while the page loads).
  root.append(contents, ...parts.map((part) => part.box));
  await Promise.all(parts.map(({ box, show }) => guarded(box, () => show(box, urls))));
  root.dataset.state = "ready";
}
