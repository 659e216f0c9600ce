// The researcher page: sections that load (and fail) independently.
import { section } from "../dashboard/dom.js";
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
  const parts = [
    [section("Import", "imports"), showImports],
    [section("Generations", "generations"), showGenerations],
    [section("People vs PRM", "people-vs-prm"), showPeopleVsPrm],
    [section("Label sources", "label-sources"), showSources],
    [section("LLM judge", "judge"), showJudge],
    [section("Checkpoints", "checkpoints"), showCheckpoints],
    [section("Does the selection pay off?", "simulations"), showSimulations],
    [section("Exports", "snapshots"), showExports],
    [section("Loop settings", "loop-settings"), showLoopSettings],
  ];
  root.querySelector(".dash-loading")?.remove();
  for (const [box] of parts) root.append(box);
  await Promise.all(parts.map(([box, show]) => guarded(box, () => show(box, urls))));
  root.dataset.state = "ready";
}
