// The loop's long jobs in words: a generation run (scoring N of M at R/s, about T left;
// selecting) and a retrain (its phase; step, loss and time left while it trains). No DOM, so the
// node tests read them (frontend/tests/progress.test.js).
import { count, duration, fmt } from "../dashboard/dom.js";

/** What an open run is doing, in words: waiting, scoring at a rate with the time left, selecting. */
export function runText(r) {
  const scored = `${count(r.scored ?? 0)} / ${r.total ? count(r.total) : "?"} scored`;
  if (r.state === "queued") return "waiting for the PRM worker";
  if (r.state === "scoring") {
    if (!r.total) return "scoring: counting the candidate pool";
    const rate = r.rate == null ? "" : ` at ${fmt(r.rate, r.rate < 10 ? 1 : 0)}/s`;
    return `${scored}${rate}${r.eta_s == null ? "" : `, about ${duration(r.eta_s)} left`}`;
  }
  if (r.state === "selecting") return `${scored}; selecting the generation`;
  return scored;
}

/** What a training checkpoint is doing (its ``progress`` from the API), in words. */
export function phaseText(p = {}) {
  switch (p.phase) {
    case "exporting": return "exporting the ratings";
    case "training":
      if (!p.total_steps) return "training: loading the base model";
      return `training: step ${p.step} of ${p.total_steps}, loss ${fmt(p.loss, 3)}` +
        (p.eta_s == null ? "" : `, about ${duration(p.eta_s)} left`);
    case "evaluating": return "evaluating against the champion on the held-out problems";
    case "saving": return "saving the checkpoint";
    default: return "training: waiting for the GPU worker";
  }
}
