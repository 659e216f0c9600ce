// Exports: the scheduled snapshots (download, "Snapshot now" with the job's state) and the
// on-demand export of the whole project in each format.
import { call } from "../dashboard/api.js";
import { scroller } from "../dashboard/dom.js";
import { el, table } from "../dom.js";
import { bytes, button, poll, when } from "./util.js";

// [format, label, gzip, provenance]: Parquet is compressed inside, so it is not gzipped again;
// only the TRL formats take the provenance columns (a PRM800K record names its labeler and
// generation already, and the API refuses ?provenance=1 for it: labeling/api/exports.py).
const FORMATS = [
  ["prm800k", "PRM800K JSONL (every pass)", true, false],
  ["prm800k-consensus", "PRM800K JSONL (consensus of overlapping passes)", true, false],
  ["trl", "TRL stepwise supervision", true, true],
  ["trl-parquet", "TRL stepwise supervision as Parquet (datasets.load_dataset)", false, true],
];
const RUNNING = new Set(["queued", "running"]);

export async function showExports(box, urls) {
  const status = el("div", "job-status");
  status.dataset.testid = "snapshot-status";
  const list = el("div");
  const bar = el("div", "job-bar");
  bar.append(button("Snapshot now", "snapshot-now", async () => {
    try {
      draw(await call(urls.snapshotsUrl, { method: "POST" }), list, status, urls);
    } catch (error) {
      status.className = "job-status failed";
      status.textContent = `Could not start: ${error.message}`;
    }
  }), status);
  box.append(bar, list, onDemand(urls));
  draw(await call(urls.snapshotsUrl), list, status, urls);
}

function draw(data, list, status, urls) {
  list.replaceChildren(snapshotTable(data), retention(data));
  const job = data.job;
  status.className = `job-status ${job?.state === "failed" ? "failed" : ""}`;
  status.dataset.state = job?.state ?? "";
  status.textContent = job ? describe(job) : "";
  if (job && RUNNING.has(job.state)) {
    poll(status, async () => {
      const fresh = await call(urls.snapshotsUrl);
      if (fresh.job && RUNNING.has(fresh.job.state)) return false;
      draw(fresh, list, status, urls);
      return true;
    });
  }
}

function describe(job) {
  switch (job.state) {
    case "queued": return `Snapshot queued ${when(job.at)}; waiting for a worker…`;
    case "running": return `Writing a snapshot (started ${when(job.at)})…`;
    case "done": return `Latest snapshot job finished ${when(job.at)}: ${job.name}` +
      (job.deleted ? ` (${job.deleted} older removed by the retention rule)` : "");
    case "failed": return `The snapshot failed ${when(job.at)}: ${job.error}`;
    default: return job.state;
  }
}

function snapshotTable(data) {
  if (!data.snapshots.length) {
    const none = el("p", "muted", "No snapshot yet. They are written on the schedule (see the admin's periodic tasks) or with the button above.");
    none.dataset.testid = "snapshot-list";
    return none;
  }
  return scroller(table(["snapshot", "written", "size"], data.snapshots, (s, tr) => {
    tr.dataset.name = s.name;
    const link = el("a", null, s.name);
    link.href = s.url;
    link.setAttribute("download", s.name);
    return [link, when(s.created), bytes(s.size)];
  }, "snapshot-list"), "Snapshots");
}

function retention(data) {
  const rules = [];
  if (data.keep_last) rules.push(`the newest ${data.keep_last}`);
  if (data.max_age_days) rules.push(`those younger than ${data.max_age_days} days`);
  return el("p", "muted small", rules.length ? `Kept: ${rules.join(" and ")} (the newest always stays).` :
    "Every snapshot is kept.");
}

// One generation number or several separated by commas, as the export API's ?generation= takes.
const GENERATIONS = /^\s*-?\d+(\s*,\s*-?\d+)*\s*$/;

/**
 * The export's URL for a format, with the generation filter when one is given and
 * ``provenance=1`` (the labeler and generation columns of a TRL format) when asked for.
 */
export function exportHref(exportUrl, format, gzip, generations = "", provenance = false) {
  const wanted = generations.split(",").map((g) => g.trim()).filter(Boolean);
  return `${exportUrl}?format=${encodeURIComponent(format)}${gzip ? "&gzip=1" : ""}` +
    (wanted.length ? `&generation=${wanted.map(encodeURIComponent).join(",")}` : "") +
    (provenance ? "&provenance=1" : "");
}

function onDemand(urls) {
  const box = el("div");
  box.dataset.testid = "on-demand-exports";
  box.append(el("h3", null, "Export now (streamed)"));
  const filter = el("label", "export-filter", "Generations ");
  const input = el("input");
  input.type = "text";
  input.inputMode = "numeric";
  input.placeholder = "all (or e.g. 3, or 2,3)";
  input.dataset.testid = "export-generation";
  const problem = el("span", "section-error");
  problem.setAttribute("role", "alert");
  filter.append(input, problem);
  // The TRL rows' provenance: who labelled the pass and which generation the solution came from.
  const withProvenance = el("label", "export-filter");
  const provenance = el("input");
  provenance.type = "checkbox";
  provenance.dataset.testid = "export-provenance";
  withProvenance.append(provenance, " include labeler and generation columns (TRL formats)");
  const list = el("ul");
  const links = [];
  for (const [format, label, gzip, takesProvenance] of FORMATS) {
    const link = el("a", null, label);
    link.dataset.format = format;
    links.push([link, format, gzip, takesProvenance]);
    const li = el("li");
    li.append(link);
    list.append(li);
  }
  const update = () => {
    const value = input.value.trim();
    const valid = !value || GENERATIONS.test(value);
    problem.textContent = valid ? "" : "Generations: whole numbers separated by commas (e.g. 2,3).";
    input.setAttribute("aria-invalid", String(!valid));
    for (const [link, format, gzip, takesProvenance] of links) {
      // A bad filter leaves no link to follow rather than a download of the whole project.
      if (valid) link.href = exportHref(urls.exportUrl, format, gzip, value, takesProvenance && provenance.checked);
      else link.removeAttribute("href");
    }
  };
  input.addEventListener("input", update);
  provenance.addEventListener("change", update);
  update();
  box.append(filter, withProvenance, list);
  return box;
}
