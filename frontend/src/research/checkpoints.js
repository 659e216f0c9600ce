// Checkpoints: every PRM of the project, its held-out metrics over time (SVG), "Retrain now"
// with the retrain's phase, step, loss and time left, why a retrain failed or was not promoted,
// and each checkpoint's evaluation beside the champion's (./evaluation.js). A PRM registered from a
// directory (./registry.js) shows its layout and validation here, with "Make champion" and "Evaluate vs champion".
import { call } from "../dashboard/api.js";
import { lineChart } from "../dashboard/charts.js";
import { fmt, scroller } from "../dashboard/dom.js";
import { el, table } from "../dom.js";
import { evaluationPanel } from "./evaluation.js";
import { phaseText } from "./progress.js";
import { gapLegend, heldout, trendPoints } from "./trend.js";
import { checkpointActions, registerForm } from "./registry.js";
import { button, poll, rows, when } from "./util.js";

const METRICS = [["step_auroc", "AUROC"], ["step_f1", "F1"], ["log_loss", "log loss"], ["auroc", "AUROC"],
  ["f1_negative", "F1 (errors)"]];

export async function showCheckpoints(box, urls) {
  const body = el("div");
  const message = el("span", "job-status");
  message.dataset.testid = "retrain-status";
  const bar = el("div", "job-bar");
  bar.append(button("Retrain now", "retrain-now", async () => {
    message.className = "job-status";
    try {
      const before = Math.max(0, ...rows(await call(urls.checkpointsUrl)).map((c) => c.id));
      // "Now": skip the due check (enough new passes) that the hourly schedule applies.
      await call(urls.retrainUrl, { method: "POST", body: { force: true } });
      message.textContent = "Retraining queued; waiting for the GPU worker…";
      message.dataset.state = "queued";
      poll(message, async () => {
        const fresh = rows(await call(urls.checkpointsUrl)).find((c) => c.id > before);
        if (!fresh || fresh.status === "training") {
          if (fresh) message.textContent = `Checkpoint #${fresh.id}: ${phaseText(fresh.progress)}`;
          return false;
        }
        message.dataset.state = fresh.status;
        message.className = `job-status ${fresh.status === "failed" ? "failed" : ""}`;
        message.textContent = `Checkpoint #${fresh.id}: ${fresh.status}${fresh.reason ? ` (${fresh.reason})` : ""}`;
        await render(body, urls);
        return true;
      }, 3000);
    } catch (error) {
      message.className = "job-status failed";
      message.textContent = `Could not start: ${error.message}`;
    }
  }), message);
  box.append(bar, registerForm(urls, () => render(body, urls)), body);
  await render(body, urls);
}

async function render(body, urls) {
  const checkpoints = rows(await call(urls.checkpointsUrl));
  body.replaceChildren();
  if (!checkpoints.length) {
    body.append(el("p", "muted", "No checkpoint yet: the first generation starts from a registered PRM, or builds "
      + "one from the base model."));
    return;
  }
  const metrics = METRICS.filter(([key]) => checkpoints.some((c) => heldout(c)?.[key] != null)).slice(0, 3);
  const charts = el("div", "dash-grid");
  for (const [key, label] of metrics) {
    const holder = el("div");
    const points = trendPoints(checkpoints, key);
    holder.append(el("h3", null, `${label} on the held-out problems`), lineChart(points,
      { testid: `checkpoint-chart-${key}`, label: `${label} per checkpoint`, xTitle: "checkpoint, oldest first", yTitle: label,
        legend: [["line", `${label} on the held-out problems`], ...gapLegend(points)] },
    ));
    charts.append(holder);
  }
  body.append(charts);
  body.append(scroller(table(["checkpoint", "status", "layout", "generation", "passes", ...metrics.map(([, l]) => l), "started",
    "finished", "why", ""],
    checkpoints, (c, tr) => {
      tr.dataset.checkpoint = c.id;
      tr.dataset.status = c.status;
      if (c.is_champion) tr.className = "champion";
      const why = el("span", c.status === "failed" ? "reason failed" : "reason", c.reason || "");
      if (c.status === "failed") why.dataset.testid = "checkpoint-error";
      // A champion that a later checkpoint replaced keeps its status; say that it was replaced.
      const status = c.status === "champion" && !c.is_champion ? "former champion" : c.status;
      if (c.status === "invalid") {
        why.className = "reason failed";
        why.dataset.testid = "checkpoint-error";
      }
      return [`#${c.id}${c.is_champion ? " ★" : ""}`, c.status === "training" ? training(c) : status, c.layout || "stepmark",
        c.generation ?? "—", String(c.passes ?? "—"),
        ...metrics.map(([key]) => fmt(heldout(c)?.[key], 3)), when(c.created_at), when(c.finished_at), why,
        checkpointActions(c, urls, () => render(body, urls))];
    }, "checkpoint-table"), "Checkpoints"));
  body.append(evaluationPanel(checkpoints, urls));
  const busy = (c) => c.status === "training" || c.status === "validating";
  if (checkpoints.some(busy)) {
    poll(body, async () => {
      const fresh = rows(await call(urls.checkpointsUrl));
      if (fresh.some((c) => c.status === "validating")) return false;  // its row changes when the worker is done
      if (fresh.some(busy)) {
        // Follow the retrain in its row without redrawing the charts.
        for (const c of fresh.filter((x) => x.status === "training")) {
          body.querySelector(`tr[data-checkpoint="${c.id}"] [data-testid="retrain-progress"]`)?.replaceWith(training(c));
        }
        return false;
      }
      await render(body, urls);
      return true;
    }, 3000);
  }
}

/** A training checkpoint's phase, with a bar, step, loss and time left while it trains. */
function training(c) {
  const box = el("div", "job-status");
  box.dataset.testid = "retrain-progress";
  const p = c.progress || {};
  box.dataset.phase = p.phase || "queued";
  if (p.phase === "training" && p.total_steps) {
    const bar = el("progress");
    bar.max = p.total_steps;
    bar.value = p.step || 0;
    bar.setAttribute("aria-label", `checkpoint ${c.id} training steps`);
    box.append(bar);
  }
  box.append(phaseText(p));
  return box;
}

