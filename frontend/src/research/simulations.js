// Does the selection pay off? The replay simulator on the project's own labels (scoring/simulations.py):
// start a run, follow its state, and for a done run its learning curves per strategy and the labels each
// strategy saves against random. Every text goes in as text.
import { call } from "../dashboard/api.js";
import { fmt, scroller } from "../dashboard/dom.js";
import { el, table } from "../dom.js";
import { strategyText } from "./generations.js";
import { xyChart } from "./plots.js";
import { button, poll, rows, when } from "./util.js";

const STRATEGIES = ["random", "convincing_wrong", "uncertainty"];
const OPEN = new Set(["queued", "running"]);

/** The section's body: ``urls.simulationsUrl`` lists and starts runs (``data-simulations-url``). */
export async function showSimulations(box, urls) {
  const body = el("div");
  box.append(el("p", "muted", "Replays the selection strategies on the labels people already gave this project: " +
    "a random seed set trains the first PRM, then each round every strategy picks the next solutions, their " +
    "ratings are revealed and the PRM retrained from the base model; each round is evaluated on held-out " +
    "problems. The saving is the labels a strategy needs to reach random's final step AUROC."),
  form(urls, body), body);
  await render(body, urls);
}

function number(name, label, value, min, max) {
  const input = el("input");
  Object.assign(input, { type: "number", name, value: String(value), min: String(min), max: String(max) });
  input.dataset.testid = `simulation-${name}`;
  const wrap = el("label", null, `${label} `);
  wrap.append(input);
  return [wrap, input];
}

function form(urls, body) {
  const bar = el("div", "job-bar");
  const boxes = STRATEGIES.map((name) => {
    const input = el("input");
    Object.assign(input, { type: "checkbox", name: "strategies", value: name, checked: name !== "uncertainty" });
    const wrap = el("label", null, ` ${strategyText(name)}`);
    wrap.prepend(input);
    return [wrap, input];
  });
  const [roundsLabel, rounds] = number("rounds", "rounds", 2, 1, 10);
  const [perRoundLabel, perRound] = number("per_round", "per round", 8, 1, 1000);
  const [seedLabel, seed] = number("seed", "seed", 0, 0, 2147483647);
  const message = el("span", "job-status");
  const start = button("Start simulation", "start-simulation", async () => {
    message.className = "job-status";
    message.textContent = "";
    try {
      await call(urls.simulationsUrl, { method: "POST", body: {
        strategies: boxes.filter(([, input]) => input.checked).map(([, input]) => input.value),
        rounds: Number(rounds.value), per_round: Number(perRound.value), seed: Number(seed.value),
      } });
      await render(body, urls);
    } catch (error) {
      message.className = "job-status failed";
      message.textContent = `Could not start: ${error.message}`;
    }
  });
  bar.append(...boxes.map(([wrap]) => wrap), roundsLabel, perRoundLabel, seedLabel, start, message);
  return bar;
}

async function render(body, urls) {
  const runs = rows(await call(`${urls.simulationsUrl}?limit=20`));
  body.replaceChildren();
  if (!runs.length) {
    body.append(el("p", "muted", "No simulation has been run yet."));
    return;
  }
  body.append(scroller(table(["run", "state", "strategies", "rounds", "per round", "seed", "started", "finished"],
    runs, (run, tr) => {
      tr.dataset.simulation = run.id;
      tr.dataset.state = run.state;
      const settings = run.settings ?? {};
      return [String(run.id), stateCell(run), (settings.strategies ?? []).map((name) => strategyText(name)).join(", "),
        String(settings.rounds ?? "—"), String(settings.per_round ?? "—"), String(settings.seed ?? "—"),
        when(run.started_at || run.created_at), when(run.finished_at)];
    }, "simulation-runs"), "Simulations"));
  const done = runs.find((run) => run.state === "done" && run.result);
  if (done) body.append(report(done));
  if (runs.some((run) => OPEN.has(run.state))) {
    poll(body, async () => {
      await render(body, urls);
      return true;  // render polls again while a run is open
    }, 3000);
  }
}

function stateCell(run) {
  const cell = el("span", run.state === "failed" ? "failed" : null, run.state);
  cell.dataset.testid = "simulation-state";
  if (run.state === "failed" && run.error) cell.append(el("div", "reason failed", run.error));
  return cell;
}

function report(run) {
  const result = run.result;
  const box = el("div");
  box.dataset.testid = "simulation-report";
  box.append(el("h3", null, `Simulation ${run.id}: learning curves`),
    el("p", "muted", `Pool ${result.pool} solutions; evaluated on ${result.heldout_solutions} held-out solutions ` +
      `of ${result.heldout_problems} problems.`));
  // In the order asked (the database keeps a JSON object's keys in its own).
  const names = (result.strategies ?? Object.keys(result.curves ?? {})).filter((name) => result.curves?.[name]);
  const points = names.flatMap((name) => result.curves[name].map((p) => [name, p]));
  // Step AUROC against labelled steps spent, a line per strategy (random dashed grey, the baseline).
  const kinds = ["challenger", "champion", "vote"];
  const most = Math.max(1, ...points.map(([, p]) => p.steps || 0));
  box.append(xyChart(names.map((name, i) => ({
    name: strategyText(name), kind: name === "random" ? "reference" : kinds[i % kinds.length], dots: true,
    points: result.curves[name].map((p) => [p.steps, p.auroc ?? null]),
  })), { testid: "plot-simulation", label: "Learning curves: step AUROC against labelled steps",
    xTitle: "labelled steps spent", yTitle: "step AUROC (held out)", x: [0, most] }));
  box.append(scroller(table(["strategy", "round", "solutions", "labelled steps", "step AUROC", "F1"], points,
    ([name, p], tr) => {
      tr.dataset.strategy = name;
      tr.dataset.round = p.round;
      return [strategyText(name), String(p.round), String(p.solutions), String(p.steps), fmt(p.auroc, 3), fmt(p.f1, 3)];
    }, "simulation-curves"), "Learning curves"));
  const savings = names.filter((name) => result.savings?.[name]).map((name) => [name, result.savings[name]]);
  if (!savings.length) {
    box.append(el("p", "muted", "No saving measured: random was not run, or its final AUROC is undefined."));
    return box;
  }
  box.append(el("h3", null, "Labels saved against random"), scroller(table(
    ["strategy", "steps to reach random's final AUROC", "solutions", "saved (steps)", "saved (solutions)"], savings,
    ([name, row], tr) => {
      tr.dataset.strategy = name;
      if (!row.reached) return [strategyText(name), "not reached", "not reached", "—", "—"];
      if (row.by_seed_set) return [strategyText(name), `${fmt(row.steps_needed, 0)} (the seed set already)`,
        fmt(row.solutions_needed, 1), "none measurable", "none measurable"];
      return [strategyText(name), fmt(row.steps_needed, 0), fmt(row.solutions_needed, 1), saved(row, "steps"),
        saved(row, "solutions")];
    }, "simulation-savings"), "Savings"));
  return box;
}

function saved(row, key) {
  const share = row[`${key}_saved_share`];
  return `${fmt(row[`${key}_saved`], key === "steps" ? 0 : 1)}${share == null ? "" : ` (${Math.round(share * 100)}%)`}`;
}
