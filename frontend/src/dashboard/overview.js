// The dashboard page: headline figures, charts, the kappa matrix and the annotator table.
import { call } from "./api.js";
import { columnChart, lineChart } from "./charts.js";
import { el, table } from "../dom.js";
import { fmt, pct, section } from "./dom.js";
import { annotatorTable } from "./table.js";

export async function showOverview(root) {
  const data = await call(root.dataset.apiUrl);
  for (const row of data.annotators) Object.assign(row, data.statuses[row.id] || { status: "active", status_reason: "" });
  const linkOf = (row) => root.dataset.annotatorUrl.replace(/\/0\/$/, `/${row.id}/`);
  root.querySelector(".dash-loading")?.remove();
  root.append(
    headline(data, root),
    charts(data),
    paused(data.annotators, linkOf),
    annotators(data, root, linkOf),
    perGeneration(data),
    queue(data),
    kappa(data),
  );
  root.dataset.state = "ready";
}

function figure(label, value, testid) {
  const box = el("div", "figure");
  box.append(el("div", "value", value), el("div", "muted", label));
  if (testid) box.dataset.testid = testid;
  return box;
}

function headline(data, root) {
  const box = section("Overview", "overview");
  const alpha = data.agreement.alpha;
  const fe = data.agreement.first_error;
  const eta = data.throughput.eta;
  const row = el("div", "figures");
  row.append(
    figure("Krippendorff's α (ordinal)", alpha.estimate === null ? "—" : `${fmt(alpha.estimate)} [${fmt(alpha.low)}, ${fmt(alpha.high)}]`, "alpha"),
    figure("same first error", fe.share === null ? "—" : `${pct(fe.share)} of ${fe.pairs} pairs`),
    figure("step ratings", data.ratings.toLocaleString()),
    figure("passes today", data.throughput.done_today.passes.toLocaleString()),
    figure(left(eta), eta.seconds === null ? `${eta.remaining_slots} slots` :
      `${eta.remaining_slots} slots ≈ ${fmt(eta.seconds / 3600, 1)} h`),
  );
  box.append(row);
  if (alpha.reason) box.append(el("p", "muted", alpha.reason));
  const cache = data.cache;
  const note = el("p", "muted small", `Computed ${new Date(data.computed_at).toLocaleString()} in ${fmt(cache.computed_seconds, 1)} s` +
    (cache.stale ? `; ${cache.behind} pass(es) submitted since, refreshing shortly.` : "; up to date."));
  const csv = el("a", null, "Download the annotator table (CSV)");
  csv.href = root.dataset.csvUrl;
  box.append(note, csv);
  return box;
}

function charts(data) {
  const box = el("div", "dash-grid");
  const time = section(`Agreement over time (α per ${data.agreement.bucket})`, "chart-agreement");
  time.append(lineChart(data.agreement.over_time.map((p) => ({
    label: p.period.slice(5), value: p.alpha.estimate, low: p.alpha.low, high: p.alpha.high,
  })), { testid: "agreement-over-time", label: "Agreement over time", range: [-0.2, 1] }));

  const byGold = [...data.annotators].filter((a) => a.gold_score !== null).sort((a, b) => a.gold_score - b.gold_score);
  const gold = section("Gold score per annotator", "chart-gold");
  gold.append(columnChart(byGold.map((a) => ({
    label: a.label, title: `${fmt(a.gold_score)} over ${a.gold_passes} gold passes`,
    parts: [{ value: a.gold_score, kind: a.status === "active" ? "good" : "bad" }],
  })), { testid: "gold-chart", label: "Gold score per annotator", max: 1, format: (v) => v.toFixed(1), labels: byGold.length <= 12 }));

  const daily = section("Throughput per day (passes)", "chart-throughput");
  daily.append(columnChart(data.throughput.daily.map((d) => ({
    label: d.day.slice(5), title: `${d.passes} passes, ${d.steps} steps, ${d.annotators} annotators`,
    parts: [{ value: d.passes, kind: "accent" }],
  })), { testid: "throughput-chart", label: "Passes per day" }));

  const rated = data.annotators.filter((a) => a.distribution.ratings > 0)
    .sort((a, b) => a.distribution["1"] - b.distribution["1"]);
  const dist = section("Rating distribution per annotator (−1 / 0 / +1)", "chart-distribution");
  dist.append(columnChart(rated.map((a) => ({
    label: a.label,
    title: `+1 ${pct(a.distribution["1"])}, 0 ${pct(a.distribution["0"])}, −1 ${pct(a.distribution["-1"])} of ${a.distribution.ratings}`,
    parts: [{ value: a.distribution["-1"], kind: "bad" }, { value: a.distribution["0"], kind: "neutral" },
      { value: a.distribution["1"], kind: "good" }],
  })), { testid: "distribution-chart", label: "Rating distribution", max: 1, format: (v) => v.toFixed(1), labels: rated.length <= 12 }));
  box.append(time, gold, daily, dist);
  return box;
}

function paused(annotators, linkOf) {
  const blocked = annotators.filter((a) => a.status === "paused" || a.status === "failed_screening");
  const box = section(`Paused annotators (${blocked.length})`, "paused");
  if (!blocked.length) box.append(el("p", "muted", "Nobody is paused."));
  const list = el("ul", "paused-list");
  for (const a of blocked) {
    const item = el("li", "blocked");
    const link = el("a", null, a.label);
    link.href = linkOf(a);
    item.append(link, " — ", el("span", "reason", a.status_reason || a.status));
    list.append(item);
  }
  box.append(list);
  return box;
}

function annotators(data, root, linkOf) {
  const box = section("Annotators (click a heading to sort)", "annotators");
  annotatorTable(box, data.annotators, linkOf);
  return box;
}

function perGeneration(data) {
  const box = section("Agreement per generation", "per-generation");
  const t = table(["Generation", "α", "95% interval", "Ratings"], data.agreement.by_generation, (g) => [
    g.generation ?? "none", fmt(g.alpha.estimate), g.alpha.low === null ? "—" : `${fmt(g.alpha.low)} to ${fmt(g.alpha.high)}`,
    String(g.ratings),
  ]);
  t.classList.add("compact");
  box.append(t);
  return box;
}

function queue(data) {
  const box = section("Queue", "queue");
  const t = table(["Generation", "Solutions", "Open", "Slots left"], data.throughput.queue_depth, (g) => [
    g.generation ?? "none", String(g.solutions), String(g.open), String(g.remaining_slots),
  ]);
  t.classList.add("compact");
  const eta = data.throughput.eta;
  box.append(t, el("p", "muted small", eta.seconds === null ? "No estimate: nobody submitted in the last 24 hours." :
    `At the median ${fmt(eta.median_pass_seconds, 0)} s per pass with ${eta.active_annotators} active annotators: ` +
    `about ${fmt(eta.seconds / 3600, 1)} hours of work ${left(eta)}.`));
  return box;
}

// Imported work outside any generation has no number to name.
function left(eta) {
  return eta.generation == null ? "left to rate" : `left in generation ${eta.generation}`;
}

function kappa(data) {
  const box = section("Cohen's κ between annotators", "kappa-matrix");
  const matrix = data.kappa_matrix;
  const labels = new Map(data.annotators.map((a) => [a.id, a.label]));
  const n = matrix.annotators.length;
  if (!n) {
    box.append(el("p", "muted", "No overlapping ratings yet."));
    return box;
  }
  const cell = Math.max(2, Math.min(14, Math.floor(560 / n)));
  const canvas = el("canvas", "heatmap");
  canvas.width = canvas.height = cell * n;
  const ctx = canvas.getContext("2d");
  matrix.kappa.forEach((row, i) => row.forEach((k, j) => {
    // Blue for agreement, red for worse than chance, grey where nothing is shared.
    ctx.fillStyle = k === null ? "#eceef2" : k >= 0 ? `rgba(36,86,199,${0.1 + 0.9 * k})` : `rgba(190,40,40,${Math.min(1, -k)})`;
    ctx.fillRect(j * cell, i * cell, cell, cell);
  }));
  const readout = el("p", "muted small", "Point at a cell to read it.");
  canvas.addEventListener("mousemove", (event) => {
    const box = canvas.getBoundingClientRect();
    const j = Math.floor(((event.clientX - box.left) / box.width) * n);
    const i = Math.floor(((event.clientY - box.top) / box.height) * n);
    if (i < 0 || j < 0 || i >= n || j >= n) return;
    const a = labels.get(matrix.annotators[i]);
    const b = labels.get(matrix.annotators[j]);
    readout.textContent = `${a} × ${b}: κ ${fmt(matrix.kappa[i][j])} on ${matrix.shared[i][j]} shared steps`;
  });
  box.append(canvas, readout);
  return box;
}
