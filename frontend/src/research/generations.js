// Generations: start one (live progress, cancel), the runs and what each selected, with the
// hit rate people found (labeling/stats/generations.py) and how long rating took.
import { call } from "../dashboard/api.js";
import { columnChart } from "../dashboard/charts.js";
import { duration, fmt, pct, scroller } from "../dashboard/dom.js";
import { el, table } from "../dom.js";
import { optionsFromData, renderMath } from "../math.js";
import { runText } from "./progress.js";
import { button, poll, rows, seconds, when } from "./util.js";

const OPEN = new Set(["queued", "scoring", "selecting"]);

export async function showGenerations(box, urls) {
  const body = el("div");
  box.append(startBar(urls, body), body);
  await render(body, urls);
}

function startBar(urls, body) {
  const bar = el("div", "job-bar");
  const size = el("input");
  // Empty: the project's generation_size, shown as the placeholder (read again on focus, as the
  // loop settings below may have changed it).
  Object.assign(size, { type: "number", min: 1, placeholder: "default", name: "size" });
  size.dataset.testid = "generation-size";
  size.setAttribute("aria-label", "solutions to select");
  const showDefault = async () => {
    try {
      const { generation_size: n } = await call(urls.loopSettingsUrl);
      size.placeholder = `${n} (default)`;
      size.title = `Empty: the project's generation size, ${n}.`;
    } catch {
      size.placeholder = "default";
    }
  };
  showDefault();
  size.addEventListener("focus", showDefault);
  const message = el("span", "job-status");
  const start = button("Start generation", "start-generation", async () => {
    message.className = "job-status";
    message.textContent = "";
    try {
      await call(urls.generationsUrl, { method: "POST", body: size.value ? { size: Number(size.value) } : {} });
      await render(body, urls);
    } catch (error) {
      message.className = "job-status failed";
      message.textContent = `Could not start: ${error.message}`;
    }
  });
  bar.append(el("label", null, "Select"), size, el("span", null, "solutions with the champion PRM"), start, message);
  return bar;
}

async function render(body, urls) {
  const [runs, stats] = await Promise.all([
    call(urls.generationsUrl).then(rows).catch((error) => error),
    call(urls.statsUrl),
  ]);
  body.replaceChildren();
  if (runs instanceof Error) {
    body.append(el("p", "section-error", `Generation runs are unavailable: ${runs.message}`));
  } else {
    body.append(scroller(runTable(runs, urls, body), "Generation runs"));
  }
  body.append(figures(stats.generations, optionsFromData(urls)));
}

function runTable(runs, urls, body) {
  if (!runs.length) return el("p", "muted", "No generation has been run yet.");
  return table(["run", "state", "progress", "generation", "checkpoint", "selected", "started", "finished", "strategy"],
    runs, (run, tr) => {
      tr.dataset.run = run.id;
      tr.dataset.state = run.state;
      return [String(run.id), stateCell(run), progress(run, urls, body, tr), numberOf(run.generation),
        run.checkpoint == null ? "—" : String(run.checkpoint?.id ?? run.checkpoint), String(run.selected ?? 0),
        when(run.started_at || run.created_at), when(run.finished_at), strategyText(run.strategy, run.selection_mix)];
    }, "generation-runs");
}

const STRATEGY_NAMES = { convincing_wrong: "convincing wrong", uncertainty: "uncertainty", random: "random",
  mixture: "mixture" };

/** A strategy in words, a mixture with its shares: "mixture (convincing wrong 50%, random 50%)"; "—" when not recorded. */
export function strategyText(strategy, mix) {
  if (!strategy) return "—";
  const name = STRATEGY_NAMES[strategy] ?? strategy;
  if (strategy !== "mixture" || !mix) return name;
  // In one fixed order: the database keeps a JSON object's keys in its own.
  const known = Object.keys(STRATEGY_NAMES);
  const parts = Object.keys(mix).sort((a, b) => (known.indexOf(a) + 1 || 99) - (known.indexOf(b) + 1 || 99));
  return `${name} (${parts.map((part) => `${STRATEGY_NAMES[part] ?? part} ${pct(mix[part])}`).join(", ")})`;
}

function numberOf(generation) {
  if (generation === null || generation === undefined) return "—";
  return String(typeof generation === "object" ? generation.number : generation);
}

function stateCell(run) {
  const cell = el("span", run.state === "failed" ? "failed" : null, run.state);
  cell.dataset.testid = "run-state";
  if (run.state === "failed" && run.error) {
    const why = el("div", "reason failed");
    why.dataset.testid = "run-error";
    why.textContent = run.error;
    return wrap(cell, why);
  }
  return cell;
}

function wrap(...nodes) {
  const box = el("div");
  box.append(...nodes);
  return box;
}

/** The run's progress in words with a bar, and Cancel while the run is open; polls until it ends. */
function progress(run, urls, body, tr) {
  const box = el("div", "job-status");
  box.dataset.testid = "run-progress";
  const draw = (r) => {
    if (!OPEN.has(r.state) && !r.total) {
      box.replaceChildren("—");
      return;
    }
    const bar = el("progress");
    bar.max = r.total || 1;
    bar.value = r.scored || 0;
    bar.setAttribute("aria-label", `run ${r.id} solutions scored`);
    box.replaceChildren(bar, document.createTextNode(runText(r)));
    if (r.state === "queued" || r.state === "scoring") {  // selecting can no longer be cancelled
      box.append(" ", button("Cancel", "cancel-generation", async () => {
        await call(`${runUrl(urls, r.id)}cancel/`, { method: "POST" });
      }));
    }
  };
  draw(run);
  if (OPEN.has(run.state)) {
    poll(box, async () => {
      const fresh = await call(runUrl(urls, run.id));
      if (OPEN.has(fresh.state)) {
        draw(fresh);
        tr.dataset.state = fresh.state;
        // The state column follows too (it said "queued" while the bar moved).
        const state = tr.querySelector('[data-testid="run-state"]');
        if (state) state.textContent = fresh.state;
        return false;
      }
      await render(body, urls);
      return true;
    });
  }
  return box;
}

function runUrl(urls, id) {
  return urls.runUrl.replace(/\/0\/$/, `/${id}/`);
}

// ``options``: the project's rendering settings (the page's data attributes) for the problems.
function figures(generations, options) {
  const box = el("div");
  box.append(el("h3", null, "What people found in each generation"));
  if (!generations.length) {
    box.append(el("p", "muted", "No generation yet."));
    return box;
  }
  if (generations.every((g) => g.hit_rate === null)) {
    // An empty chart reads as "people found nothing"; say instead that nothing is rated yet.
    box.append(el("p", "muted", "Nobody has rated a pick yet: the hit rate (the share of rated picks people " +
      "found wrong) appears per generation once they do."));
  } else box.append(columnChart(generations.map((g) => ({
    label: `g${g.generation}`, value: g.hit_rate, kind: "accent",
    title: g.hit_rate === null ? "not rated yet" : `${pct(g.hit_rate)} of ${g.rated} rated found wrong`,
  })), {
    testid: "hit-rate-chart", label: "Hit rate per generation", max: 1, format: (v) => pct(v),
    xTitle: "generation", yTitle: "hit rate",
    legend: [["accent", "share of rated picks people found wrong"], ["no-data", "not rated yet"]],
  }));
  box.append(scroller(table(
    ["generation", "selected", "wrong answer", "rated", "found wrong", "hit rate", "people: wrong", "PRM expected wrong",
      "median per pass", "people's time", "rated from", "to", "chosen by"],
    generations,
    (g, tr) => {
      tr.dataset.generation = g.generation;
      return [String(g.generation), String(g.selected), String(g.wrong_answer), String(g.rated), String(g.found_wrong),
        pct(g.hit_rate), wrongShare(g), expectedShare(g), seconds(g.median_seconds), duration(g.person_hours == null ? null : g.person_hours * 3600), when(g.first_submitted_at),
        when(g.last_submitted_at), strategyText(g.strategy, g.selection?.mix)];
    },
    "generation-stats",
  ), "What people found in each generation"));
  box.append(el("p", "muted", "people: wrong — the share of rated picks people found wrong (a pass stopped at a " +
    "wrong step) or whose final answer is graded wrong. PRM expected wrong — the mean over the same rated picks of " +
    "1 − the PRM's score when it selected them (its probability that the solution is wrong). Well above " +
    "what it expected: the PRM picked wrong solutions it believed right."));
  const mixed = generations.filter((g) => (g.by_strategy ?? []).length > 1);
  if (mixed.length) box.append(scroller(byStrategy(mixed), "Hit rate per strategy"));
  for (const g of generations.filter((x) => x.picks.length)) {
    box.append(el("h4", null, `Generation ${g.generation}: first picks`), picks(g.picks, options));
  }
  return box;
}

// The strategies of each mixed generation side by side: which one's picks people found wrong more often.
function byStrategy(generations) {
  const rows = generations.flatMap((g) => g.by_strategy.map((row) => ({ generation: g.generation, ...row })));
  return table(["generation", "picked by", "selected", "rated", "found wrong", "hit rate", "people: wrong",
    "PRM expected wrong"], rows, (row, tr) => {
    tr.dataset.generation = row.generation;
    tr.dataset.strategy = row.strategy;
    return [String(row.generation), strategyText(row.strategy), String(row.selected), String(row.rated),
      String(row.found_wrong), pct(row.hit_rate), wrongShare(row), expectedShare(row)];
  }, "strategy-stats");
}

/** People's share of wrong picks: "50% (2 of 4)"; "—" before any is rated. */
function wrongShare(figures) {
  return figures.people_wrong_share == null ? "—" : `${pct(figures.people_wrong_share)} (${figures.people_wrong} of ${figures.rated})`;
}

/** What the PRM expected of the same picks: "27% (of 3 scored)"; "—" when none had a score. */
function expectedShare(figures) {
  return figures.expected_wrong_share == null ? "—" : `${pct(figures.expected_wrong_share)} (of ${figures.expected_of} scored)`;
}

/** Why a pick was chosen, in words: "picked by uncertainty (0.12)"; "" when not recorded. */
function why(reason) {
  if (!reason) return "";
  const spread = reason.uncertainty == null ? "" : ` (uncertainty ${fmt(reason.uncertainty)})`;
  return ` · picked by ${strategyText(reason.strategy)}${spread}`;
}

function picks(items, options) {
  const list = el("ol", "picks");
  for (const p of items) {
    const li = el("li");
    const verdict = !p.rated ? "not rated yet" : p.found_wrong ? "people found an error" : "people found no error";
    li.append(
      el("span", "muted", `#${p.rank ?? "—"} · PRM ${fmt(p.verifier_score)}${why(p.reason)} · answer ` +
        `${p.final_answer ?? "—"} (${p.is_correct === null ? "ungraded" : p.is_correct ? "right" : "wrong"}) · ${verdict}: `),
      renderMath(el("span"), p.problem, options),
    );
    list.append(li);
  }
  return list;
}
