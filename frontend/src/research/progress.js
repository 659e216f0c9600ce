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
    return `${scored}${rate}${r.eta_s == null ? "" : `, about ${duration(r.eta_s)} left`}${shardText(r.shards)}`;
  }
  if (r.state === "selecting") return `${scored}; selecting the generation`;
  return scored;
}

/** A run's shards while several workers score them (scoring/shards.py): "; shards: 3 of 10 done, 2 being scored". */
function shardText(s) {
  if (!s || s.shards < 2) return "";
  return `; shards: ${count(s.done)} of ${count(s.shards)} done, ${count(s.claimed)} being scored`;
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
