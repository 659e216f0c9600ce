// A checkpoint's evaluation beside the champion's on the same held-out problems
// (GET /api/checkpoints/{id}/report/, stored by scoring/retrain.py): the decision and its reason,
// the promotion gate's figures (metrics.gate, scoring/prm/gate.py), the figures side by side, and the plots: step ROC, reliability, best-of-N, and ProcessBench F1
// against the threshold where it was evaluated.
import { call } from "../dashboard/api.js";
import { count, fmt, scroller } from "../dashboard/dom.js";
import { el, table } from "../dom.js";
import { xyChart } from "./plots.js";

const last = (values) => (values?.length ? values[values.length - 1] : null);

// [label, the retrain metric it is (or null), value from (report sections, held-out figures), higher is better]
const FIGURES = [
  ["step AUROC, finding wrong steps", "step_auroc", (s) => s.steps?.auroc, true],
  ["step F1 on wrong steps (at 0.5)", "step_f1", (s) => s.steps?.f1_negative, true],
  ["log loss per labelled step", "log_loss", (s, f) => f?.log_loss, false],
  ["calibration error (ECE)", null, (s) => s.steps?.calibration?.ece, false],
  ["best-of-N: solved by the PRM's pick at the largest N", null, (s) => last(s["best-of-n"]?.solved?.prm), true],
  ["ProcessBench F1 (threshold from validation)", null, (s) => s.processbench?.test?.f1, true],
];

/** The evaluation panel: a picker of the evaluated checkpoints (newest first) and the chosen one's report. */
export function evaluationPanel(checkpoints, urls) {
  const box = el("div", "evaluation");
  box.dataset.testid = "evaluation";
  box.append(el("h3", null, "Evaluation: why a checkpoint was promoted or refused"));
  const judged = checkpoints.filter((c) => c.has_report);
  if (!judged.length) {
    box.append(el("p", "muted", "No retrained checkpoint has been evaluated yet: a retrain judges its checkpoint " +
      "against the champion on held-out problems, and the plots appear here."));
    return box;
  }
  const bar = el("div", "job-bar");
  const pick = el("select");
  pick.id = "evaluation-checkpoint";
  pick.dataset.testid = "evaluation-checkpoint";
  for (const c of judged) {
    const option = el("option", null, `#${c.id} (${c.status === "champion" ? "promoted" : c.status})`);
    option.value = c.id;
    pick.append(option);
  }
  const label = el("label", null, "Checkpoint");
  label.htmlFor = pick.id;
  bar.append(label, pick);
  const body = el("div");
  const show = async () => {
    box.dataset.state = "loading";
    try {
      const data = await call(urls.reportUrl.replace(/\/0\/report\/$/, `/${pick.value}/report/`));
      body.replaceChildren(...report(data));
      box.dataset.checkpoint = pick.value;
      box.dataset.state = "ready";
    } catch (error) {
      body.replaceChildren(el("p", "section-error", `The evaluation is unavailable: ${error.message}`));
      box.dataset.state = "failed";
    }
  };
  pick.addEventListener("change", show);
  box.append(bar, body);
  show();
  return box;
}

function report({ checkpoint, champion, report: r }) {
  const mine = r.challenger || {};
  const theirs = r.champion || {};
  const me = `#${checkpoint.id}`;
  const them = champion ? `champion #${champion.id}` : "champion";
  const hasChampion = Object.keys(theirs).length > 0;
  const verdict = checkpoint.status === "champion" ? "was promoted" : checkpoint.status === "rejected" ? "was refused"
    : `is ${checkpoint.status}`;
  const decision = el("p", `decision ${checkpoint.status}`);
  decision.dataset.testid = "decision";
  decision.append(el("strong", null, `Checkpoint ${me} ${verdict}.`), ` ${checkpoint.reason || ""}`);
  const how = el("p", "muted", `Judged on ${r.heldout_problems ?? "?"} held-out problems (never trained on) by ` +
    `${r.metric ?? "the project's metric"}, beside ${hasChampion ? `${them} on the same problems` : "no champion figures"}.`);

  const figures = [checkpoint.metrics?.heldout, checkpoint.metrics?.champion_heldout];
  const rows = FIGURES.map(([name, metric, value, higher]) => ({
    name, metric, higher, mine: value(mine, figures[0]) ?? null, theirs: value(theirs, figures[1]) ?? null,
  })).filter((row) => row.mine !== null || row.theirs !== null);
  const numbers = table(["figure", me, them, "better is"], rows, (row, tr) => {
    if (row.metric && row.metric === r.metric) {
      tr.className = "decides";
      tr.dataset.decides = "1";
    }
    const name = row.metric === r.metric ? `${row.name} (decides promotion)` : row.name;
    return [name, fmt(row.mine, 3), fmt(row.theirs, 3), row.higher ? "higher" : "lower"];
  }, "evaluation-figures");
  const gate = checkpoint.metrics?.gate;
  return [decision, how, ...(gate ? [gatePanel(gate, me, them)] : []), scroller(numbers, "Evaluation figures"),
    plots(mine, theirs, me, them)];
}

const GUARDS = { log_loss: "log loss", ece: "calibration error (ECE)" };
const signed = (value) => (value === null || value === undefined ? "—" : `${value >= 0 ? "+" : "−"}${fmt(Math.abs(value), 3)}`);

/** The promotion gate's decision: the metric's two figures, the difference's one-sided interval, the guards. */
function gatePanel(gate, me, them) {
  const box = el("div", `gate ${gate.decision}`);
  box.dataset.testid = "gate";
  box.dataset.decision = gate.decision;
  const [low, high] = gate.interval || [null, null];
  const confidence = `${Math.round(100 * gate.confidence)}%`;
  const interval = gate.resamples
    ? `${confidence} one-sided interval [${low === null ? "−∞" : signed(low)}, ${high === null ? "+∞" : signed(high)}] ` +
      `from ${count(gate.resamples)} paired resamples of the problems`
    : "no interval: too few held-out problems to resample";
  const summary = el("p", null, `Promotion gate on ${gate.metric} (${gate.higher_is_better ? "higher" : "lower"} is ` +
    `better): ${me} ${fmt(gate.challenger, 3)}, ${them} ${fmt(gate.champion, 3)}, difference ${signed(gate.difference)}; ` +
    `${interval}. ${count(gate.problems)} held-out problems (${count(gate.steps)} steps); at least ` +
    `${count(gate.min_problems)} needed.`);
  summary.dataset.testid = "gate-summary";
  const guards = Object.entries(gate.guards || {}).map(([key, pair]) => ({ key, ...pair }));
  const limits = table(["guard", me, them, "at most", "within"], guards, (g, tr) => {
    tr.dataset.guard = g.key;
    const allowed = g.champion === null ? null : g.champion + gate.guard_tolerance;
    const within = g.challenger === null || allowed === null ? "—" : g.challenger <= allowed ? "yes" : "no";
    return [GUARDS[g.key] || g.key, fmt(g.challenger, 3), fmt(g.champion, 3), fmt(allowed, 3), within];
  }, "gate-guards");
  box.append(summary, scroller(limits, "Promotion gate guards"),
    el("p", "muted", `Guards (lower is better) may be worse than the champion's by ${fmt(gate.guard_tolerance, 3)} at most.`));
  return box;
}

function plots(mine, theirs, me, them) {
  const grid = el("div", "plots");
  const pair = (key, draw) => [[mine[key], me, "challenger"], [theirs[key], them, "champion"]]
    .filter(([section]) => section).map(([section, name, kind]) => draw(section, name, kind));
  const add = (title, chart) => {
    const holder = el("div", "plot");
    holder.append(el("h4", null, title), chart);
    grid.append(holder);
  };
  if (mine.steps || theirs.steps) {
    add("Step ROC: finding the wrong steps", xyChart([
      ...pair("steps", (s, name, kind) => ({ name: `${name}, AUROC ${fmt(s.auroc, 3)}`, kind, points: s.roc })),
      { name: "chance", kind: "reference", points: [[0, 0], [1, 1]] },
    ], { testid: "plot-roc", label: "Step ROC curves", xTitle: "correct steps flagged (false positive rate)",
      yTitle: "wrong steps found" }));
    add("Calibration: predicted against observed", xyChart([
      ...pair("steps", (s, name, kind) => ({
        name: `${name}, ECE ${fmt(s.calibration.ece, 3)}`, kind, dots: true,
        points: s.calibration.bins.filter((b) => b.count).map((b) => [b.mean_predicted, b.observed]),
      })),
      { name: "perfectly calibrated", kind: "reference", points: [[0, 0], [1, 1]] },
    ], { testid: "plot-calibration", label: "Reliability diagram", xTitle: "predicted P(correct)",
      yTitle: "share of steps correct" }));
  }
  const best = mine["best-of-n"] || theirs["best-of-n"];
  if (best) {
    const percent = (values) => values.map((v) => (v === null ? null : 100 * v));
    const curve = (ns, values) => ns.map((n, i) => [n, values[i]]);
    add("Best-of-N: problems solved", xyChart([
      ...pair("best-of-n", (s, name, kind) => ({ name: `${name}'s pick`, kind, dots: true,
        points: curve(s.ns, percent(s.solved.prm)) })),
      { name: "majority vote", kind: "vote", dots: true, points: curve(best.ns, percent(best.solved.majority_vote)) },
      { name: "any correct (oracle)", kind: "reference", points: curve(best.ns, percent(best.solved.oracle)) },
    ], { testid: "plot-best-of-n", label: "Best-of-N curves", xTitle: "N (candidates per problem)",
      yTitle: "% problems solved", y: [0, 100], log2: true }));
  }
  if (mine.processbench || theirs.processbench) {
    add("ProcessBench: F1 against the threshold", xyChart(
      pair("processbench", (s, name, kind) => ({ name: `${name}, test F1 ${fmt(s.test.f1, 3)} at ${fmt(s.threshold, 2)}`,
        kind, points: s.by_threshold.test.map((row) => [row.threshold, row.f1]) })),
      { testid: "plot-processbench", label: "ProcessBench F1 against the threshold",
        xTitle: "threshold (first step below it is the error)", yTitle: "F1 (test items)" },
    ));
  }
  return grid;
}
