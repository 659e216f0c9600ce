// The annotator's standing in the project as the workspace shows it, from
// GET /api/projects/{id}/my-status/ ({state, done, total, message, reason}; labeling/quality/screening.py).
//
// Only what that endpoint says reaches the page: screening counts and the outcome, never a
// score, a threshold or whether the item on screen is a screening or gold item.

/**
 * What to show for ``status`` (null when it could not be fetched): ``{kind, text, blocked}``
 * with kind null (nothing to say), "screening", "passed", "failed" or "paused". ``seen`` is
 * what this browser last showed ("passed-seen" once the pass notice has been seen and work
 * submitted after it), so "You passed" is news, not a fixture.
 */
export function standingOf(status, seen) {
  if (!status) return { kind: null, text: "", blocked: false };
  const { state, done, total, message, reason } = status;
  if (state === "screening") {
    const text = total
      ? `Screening: ${done} of ${total} done`
      : "Screening: the screening items are not ready yet — check again later";
    return { kind: "screening", text, blocked: false };
  }
  if (state === "failed_screening") {
    return {
      kind: "failed",
      text: "Screening not passed — a lead will review your work; no new work until then",
      blocked: true,
    };
  }
  if (state === "paused") {
    // ``reason``: a lead's own words when a lead paused them by hand ("" for an automatic pause,
    // whose reason holds gold figures an annotator must not see).
    const text = reason ? `Paused by a lead: ${reason}` : "Paused by quality control — a lead will review";
    return { kind: "paused", text, blocked: true };
  }
  if (state === "active" && message === "passed" && seen !== "passed-seen") {
    return { kind: "passed", text: "You passed screening — real work starts now", blocked: false };
  }
  return { kind: null, text: "", blocked: false };
}

/**
 * Whether to say "new checked results": my-status's ``results`` changed since this browser last
 * said so (``seen``). A browser that never saw one only remembers it: what was there before is
 * on the home page's link, not news.
 */
export function resultsNews(status, seen) {
  if (!status || !status.results) return false;
  return seen !== null && seen !== undefined && seen !== status.results;
}
