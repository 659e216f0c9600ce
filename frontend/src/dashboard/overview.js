// The dashboard page: headline figures, charts, the kappa matrix and the annotator table.
import { call } from "./api.js";
import { barChart, columnChart, lineChart } from "./charts.js";
import { el, table } from "../dom.js";
import { count, duration, fmt, pct, scroller, section } from "./dom.js";
import { settingsForm } from "./form.js";
import { annotatorTable, flagTags, MAJORITY_HELP } from "./table.js";

export async function showOverview(root) {
  let data;
  try {
    data = await call(root.dataset.apiUrl);
  } catch (error) {
    if (error.status !== 429 && error.status !== 503) throw error;
    return later(root, error);
  }
  live(data);
  const linkOf = (row) => root.dataset.annotatorUrl.replace(/\/0\/$/, `/${row.id}/`);
  root.querySelector(".dash-loading")?.remove();
  root.append(
    headline(data, root),
    charts(data, Number(root.dataset.goldThreshold)),
    paused(data.annotators, linkOf),
    flagged(data.annotators, linkOf),
    annotators(data, root, linkOf),
    perGeneration(data),
    prelabelModes(data),
    queue(data),
    kappa(data),
  );
  root.dataset.state = "ready";
}

// The live parts the API puts beside the cached figures: each annotator's standing, flags and
// labeler id (what the exports write as `labeler`).
function live(data) {
  for (const row of data.annotators) {
    Object.assign(row, data.statuses[row.id] || { status: "active", status_reason: "" });
    row.flags = data.flags[row.id] || [];
    row.labeler = data.labelers?.[row.id] ?? null;
  }
}

// No figures yet (labeling/stats/cache.py): the first compute still runs (503) or the person's
// compute budget is spent (429). Say so, then ask again when the server's Retry-After says.
async function later(root, error) {
  const seconds = Math.min(120, error.retryAfter || 10);
  const note = el("p", "notice", error.status === 503
    ? `The figures are being computed for the first time; a large project takes a while. This page asks again in ${seconds} s.`
    : `No figures for you right now: ${error.detail} This page asks again in ${seconds} s.`);
  note.dataset.testid = "dashboard-wait";
  note.dataset.status = error.status;
  note.setAttribute("role", "status");
  root.querySelector(".dash-loading")?.remove();
  root.append(note);
  root.dataset.state = "waiting";
  await new Promise((resolve) => setTimeout(resolve, seconds * 1000));
  note.remove();
  return showOverview(root);
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
    figure("same first error", fe.share === null ? "—" : `${pct(fe.share)} of ${count(fe.pairs)} pairs`),
    figure("step ratings", count(data.ratings), "ratings"),
    figure("passes today", count(data.throughput.done_today.passes)),
    figure(left(eta), `${count(eta.remaining_slots)} slot${eta.remaining_slots === 1 ? "" : "s"}` +
      (eta.seconds === null ? "" : ` ≈ ${duration(eta.seconds)}`), "eta"),
  );
  box.append(row);
  if (alpha.reason) box.append(el("p", "muted", alpha.reason));
  const cache = data.cache;
  const note = el("p", "muted small", `Computed ${new Date(data.computed_at).toLocaleString()} in ${fmt(cache.computed_seconds, 1)} s` +
    (cache.stale ? `; ${count(cache.behind)} pass(es) submitted since, refreshing shortly.` : "; up to date."));
  const csv = el("a", "action-link", "Download the annotator table (CSV)");
  csv.href = root.dataset.csvUrl;
  box.append(note, csv);
  return box;
}

// Colours mean one thing each: blue a figure, orange below the pause threshold, green / grey /
// red the ratings +1 / 0 / −1 (as in the drill-down), hollow dashed "no data".
function charts(data, threshold) {
  const box = el("div", "dash-grid");
  const time = section(`Agreement over time (α per ${data.agreement.bucket})`, "chart-agreement");
  const points = data.agreement.over_time.map((p) => ({
    label: p.period.slice(5), value: p.alpha.estimate, low: p.alpha.low, high: p.alpha.high,
  }));
  time.append(lineChart(points, {
    testid: "agreement-over-time", label: "Agreement over time", range: [0, 1],
    xTitle: data.agreement.bucket === "week" ? "week starting (month-day)" : "day (month-day)", yTitle: "α",
    legend: [["line", "Krippendorff's α"], ["band", "95% interval"],
      ...(points.some((p) => p.value === null) ? [["no-data", "too few ratings for α"]] : [])],
  }));

  const gold = section("Gold score per annotator", "chart-gold");
  const byGold = [...data.annotators].sort((a, b) => (a.gold_score ?? 2) - (b.gold_score ?? 2) || a.label.localeCompare(b.label));
  gold.append(barChart(byGold.map((a) => (a.gold_score === null
    ? { label: a.label, text: "no gold passes yet" }
    : {
      label: a.label, text: fmt(a.gold_score), title: `${fmt(a.gold_score)} over ${a.gold_passes} gold passes`,
      parts: [{ value: a.gold_score, kind: a.gold_score < threshold ? "below" : "accent" }],
    })), {
    // A threshold of 0 pauses nobody (labeling/models/projects.py): no line then.
    testid: "gold-chart", label: "Gold score per annotator", threshold: threshold > 0 ? threshold : null,
    yTitle: "annotator", xTitle: "rolling gold score",
    legend: [["accent", "gold score: share of gold steps rated alike"], ...(threshold > 0
      ? [["below", "below the pause threshold"], ["threshold", `pause threshold (${fmt(threshold)})`]]
      : [["", "no automatic pause (threshold 0)"]])],
  }));

  const daily = section("Throughput per day (passes)", "chart-throughput");
  daily.append(columnChart(everyDay(data.throughput.daily).map((d) => ({
    label: d.day.slice(5), value: d.passes, kind: "accent",
    title: `${count(d.passes)} passes, ${count(d.steps)} steps, ${d.annotators} annotators`,
  })), {
    testid: "throughput-chart", label: "Passes per day", xTitle: "day (month-day)", yTitle: "passes",
    format: (v) => count(v), legend: [["accent", "passes submitted that day"]],
  }));

  const dist = section("Rating distribution per annotator (main steps: −1 / 0 / +1)", "chart-distribution");
  const byPlus = [...data.annotators].sort((a, b) => (a.distribution["1"] ?? 2) - (b.distribution["1"] ?? 2));
  dist.append(barChart(byPlus.map((a) => (!a.distribution.ratings
    ? { label: a.label, text: "no ratings" }
    : {
      label: a.label, text: count(a.distribution.ratings),
      title: `+1 ${pct(a.distribution["1"])}, 0 ${pct(a.distribution["0"])}, −1 ${pct(a.distribution["-1"])} of ${count(a.distribution.ratings)} main-step ratings`,
      parts: [{ value: a.distribution["-1"], kind: "bad" }, { value: a.distribution["0"], kind: "neutral" },
        { value: a.distribution["1"], kind: "good" }],
    })), {
    testid: "distribution-chart", label: "Rating distribution", format: (v) => pct(v), yTitle: "annotator",
    xTitle: "share of their main-step ratings",
    legend: [["bad", "−1"], ["neutral", "0"], ["good", "+1"],
      ["", "number at the end: their ratings of main steps (alternatives not counted; the table's Steps counts all)"]],
  }));
  box.append(time, gold, daily, dist);
  return box;
}

/** The days from the first to the last with work; a day nobody submitted on is a 0, not a gap. */
function everyDay(days) {
  if (!days.length) return [];
  const byDay = new Map(days.map((d) => [d.day, d]));
  const out = [];
  const last = Date.parse(days[days.length - 1].day);
  for (let t = Date.parse(days[0].day); t <= last && out.length < 400; t += 86400000) {
    const day = new Date(t).toISOString().slice(0, 10);
    out.push(byDay.get(day) || { day, passes: 0, steps: 0, annotators: 0 });
  }
  return out;
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

function flagged(annotators, linkOf) {
  const found = annotators.filter((a) => a.flags.length);
  const box = section(`Flagged annotators (${found.length})`, "flagged");
  if (!found.length) box.append(el("p", "muted", "Nobody stands out from the team."));
  const list = el("ul", "flagged-list");
  for (const a of found) {
    const item = el("li", "flagged");
    item.dataset.annotator = a.id;
    const link = el("a", null, a.label);
    link.href = linkOf(a);
    const reasons = el("ul", "flag-reasons");
    for (const flag of a.flags) {
      const line = el("li");
      line.append(...flagTags([flag]), " ", el("span", "small", flag.text));
      reasons.append(line);
    }
    item.append(link, reasons);
    list.append(item);
  }
  box.append(list);
  return box;
}

const FLAG_FIELDS = [
  { name: "flag_fast_share", label: "Too fast under", step: "0.01",
    help: "Flag a median time per step under this share of the team's median, 0 to 1 (0.33: three times faster; 0: never)." },
  { name: "flag_gold_margin", label: "Gold score under", step: "0.01",
    help: "Flag a rolling gold score more than this under the team's median, 0 to 1 (0: never)." },
  { name: "flag_agreement_margin", label: "κ under", step: "0.01",
    help: "Flag a κ against the others' majority more than this under the team's median, with its interval's top " +
      "under the median too, 0 to 2 (0: never)." },
  { name: "flag_distribution_margin", label: "Rating share off by", step: "0.01",
    help: "Flag a share of +1, 0 or −1 more than this away from the team's median share, 0 to 1 (0: never)." },
];

function annotators(data, root, linkOf) {
  const box = section("Annotators (click a heading to sort)", "annotators");
  box.append(el("p", "muted small", `κ vs others' majority: ${MAJORITY_HELP} ` +
    "+1 / 0 / −1: shares of their main-step ratings; Steps: all their ratings, alternatives included. " +
    "The team of a figure is the median of everyone else who has it (three people at least)."));
  const holder = el("div");
  annotatorTable(holder, data.annotators, linkOf);
  box.append(holder);
  const details = el("details", "flag-settings");
  details.append(el("summary", null, "Flag thresholds"));
  box.append(details);
  settingsForm(details, {
    url: root.dataset.flagSettingsUrl, fields: FLAG_FIELDS, values: data.flag_settings, formClass: "q-form",
    saveLabel: "Save thresholds", ids: { prefix: "flag-", form: "flag-settings-form", error: "flag-error-", message: "flag-message" },
    group() {},
    control(field) {
      const input = el("input");
      input.type = "number";
      input.step = field.step;
      return input;
    },
    show(inputs, shown) {
      for (const [name, input] of Object.entries(inputs)) input.value = shown[name];
    },
    read: (name, input) => (input.value === "" ? "" : Number(input.value)),
    saved() {
      // Flags are worked out on every read (not cached): read again and redraw who is flagged.
      call(root.dataset.apiUrl).then((fresh) => {
        live(fresh);
        holder.replaceChildren();
        annotatorTable(holder, fresh.annotators, linkOf);
        root.querySelector('[data-testid="flagged"]').replaceWith(flagged(fresh.annotators, linkOf));
        root.dataset.flagsDrawn = String(Number(root.dataset.flagsDrawn || 0) + 1);
      });
      return "Saved: the flags below use the new thresholds.";
    },
  });
  return box;
}

function perGeneration(data) {
  const box = section("Agreement per generation", "per-generation");
  const t = table(["Generation", "α", "95% interval", "Ratings"], data.agreement.by_generation, (g) => [
    g.generation ?? "none", fmt(g.alpha.estimate), g.alpha.low === null ? "—" : `${fmt(g.alpha.low)} to ${fmt(g.alpha.high)}`,
    count(g.ratings),
  ]);
  t.classList.add("compact");
  box.append(t);
  return box;
}

// Time and agreement per pre-label mode (labeling/stats/prelabels.py): shown once pre-labels were.
function prelabelModes(data) {
  const box = section("Pre-labels: do they help?", "prelabel-modes");
  const modes = data.prelabels || [];
  if (!modes.length) {
    box.hidden = true;
    return box;
  }
  const t = table(["Passes shown", "Passes", "s / step (median)", "Agreement with the others' majority", "Ratings compared"],
    modes, (m) => [{ hidden: "no pre-labels", suggest: "suggestions", verify: "pre-labels to verify" }[m.mode] ?? m.mode,
      count(m.passes), fmt(m.seconds_per_step, 1), pct(m.agreement), count(m.compared)]);
  t.classList.add("compact");
  box.append(t, el("p", "muted small", "A rating agrees when it matches the majority of the other passes' ratings of " +
    "the same step. Faster with pre-labels and as much agreement: they help; agreement down: people follow the " +
    "machine. The Wrong pre-labels accepted column tells who just accepts them."));
  return box;
}

function queue(data) {
  const box = section("Queue", "queue");
  const t = table(["Generation", "Solutions", "Open", "Slots left"], data.throughput.queue_depth, (g) => [
    g.generation ?? "none", count(g.solutions), count(g.open), count(g.remaining_slots),
  ]);
  t.classList.add("compact");
  const eta = data.throughput.eta;
  box.append(t, el("p", "muted small", eta.seconds === null ? `No estimate: ${eta.reason || "no pace yet"}.` :
    `At the median ${duration(eta.median_pass_seconds)} per pass with ${eta.active_annotators} active annotators: ` +
    `about ${duration(eta.seconds)} of work ${left(eta)}.`));
  return box;
}

// Imported work outside any generation has no number to name.
function left(eta) {
  return eta.generation == null ? "left to rate" : `left in generation ${eta.generation}`;
}

/**
 * The kappa matrix as a table: annotators' names as row and column headers, each pair's κ as
 * text with a colour behind it (blue: agreement beyond chance, darker the more; purple: worse
 * than chance). It scrolls inside its own focusable region, so a keyboard can reach all of it.
 */
function kappa(data) {
  const box = section("Cohen's κ between annotators", "kappa-matrix");
  const matrix = data.kappa_matrix;
  const labels = new Map(data.annotators.map((a) => [a.id, a.label]));
  const names = matrix.annotators.map((id) => labels.get(id) ?? String(id));
  if (!names.length) {
    box.append(el("p", "muted", "No overlapping ratings yet."));
    return box;
  }
  const t = el("table", "kappa-table");
  t.dataset.testid = "kappa-table";
  t.createCaption().append(el("span", "sr-only", "κ of each pair of annotators"));
  box.append(el("p", "muted small", "Each pair's κ on the steps both rated (— : none shared). " +
    "Blue: agreement beyond chance, darker the more; purple: worse than chance."));
  const head = t.createTHead().insertRow();
  head.append(el("td"));
  for (const name of names) head.append(Object.assign(el("th", null, name), { scope: "col" }));
  const body = t.createTBody();
  matrix.kappa.forEach((row, i) => {
    const tr = body.insertRow();
    tr.append(Object.assign(el("th", null, names[i]), { scope: "row" }));
    row.forEach((k, j) => {
      const td = tr.insertCell();
      const shared = matrix.shared[i][j];
      td.textContent = k === null ? "—" : fmt(k);
      td.title = i === j ? names[i] : `${names[i]} × ${names[j]}: ${k === null ? "nothing shared" : `κ ${fmt(k)}`} on ${count(shared)} shared steps`;
      if (k !== null) {
        td.append(el("span", "sr-only", ` on ${count(shared)} shared steps`));
        td.style.background = shade(k);
        if (Math.abs(k) >= 0.7) td.classList.add("dark");
      }
    });
  });
  box.append(scroller(t, "Cohen's κ between annotators"));
  return box;
}

// Light shades under dark text up to |κ| 0.7, deep ones under white text from there: the text
// keeps a contrast of at least 4.5:1 either way.
function shade(k) {
  const s = Math.min(1, Math.abs(k));
  if (s >= 0.7) return k >= 0 ? `rgba(26, 63, 148, ${0.75 + 0.8 * (s - 0.7)})` : `rgba(100, 30, 125, ${0.75 + 0.8 * (s - 0.7)})`;
  return k >= 0 ? `rgba(36, 86, 199, ${0.08 + 0.6 * s})` : `rgba(128, 40, 160, ${0.15 + 0.55 * s})`;
}
