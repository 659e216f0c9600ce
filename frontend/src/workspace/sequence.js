// The order in which an annotator rates a solution, and when the pass can be finished.
//
// Mirrors the server's rules (labeling/labelling.py) so the page only ever offers what the
// server will accept:
//   - the solution's own steps (alternative 0) are rated in order;
//   - a -1 ends the pass at that position: its alternative completions (alternative > 0,
//     when the project rates them) are rated next, then the pass finishes as found_error;
//   - in phase 1 (stop_at_first_error off) the alternatives at every position are rated
//     right after the position's own step;
//   - rating every step without a -1 finishes the pass as solution.
// Plain functions over the API's assignment payload and a ratings Map, no DOM.

/** "position:alternative", the key of one candidate step everywhere in the workspace. */
export function stepKey(position, alternative) {
  return `${position}:${alternative}`;
}

/** Map key -> {position, alternative, value, flagged} from the payload's ratings. */
export function ratingsFrom(assignment) {
  const ratings = new Map();
  for (const r of assignment.ratings || []) {
    ratings.set(stepKey(r.position, r.alternative), { ...r });
  }
  return ratings;
}

function valueOf(ratings, position, alternative) {
  const rating = ratings.get(stepKey(position, alternative));
  return rating ? rating.value : null;
}

/**
 * The steps revealed so far, in rating order, and how the pass ends.
 *
 * Returns ``{items, current, finish}``: ``items`` are ``{position, alternative, text}`` in
 * the order they are rated; ``current`` is the first unrated one (null when every revealed
 * step is rated); ``finish`` is "found_error" or "solution" once the pass can be submitted
 * with that reason, else null.
 */
export function sequence(assignment, ratings) {
  const project = assignment.project;
  const items = [];
  const rate = (position, alt) => {
    items.push({ position, alternative: alt.alternative, text: alt.text });
    return valueOf(ratings, position, alt.alternative) !== null;
  };
  for (const { position, alternatives } of assignment.steps) {
    const main = alternatives.find((a) => a.alternative === 0 && a.source !== "human");
    if (!main) continue;
    if (!rate(position, main)) return { items, current: items[items.length - 1], finish: null };
    const error = valueOf(ratings, position, 0) === -1;
    if (project.allow_alternatives && (error || !project.stop_at_first_error)) {
      for (const alt of alternatives) {
        if (alt.alternative === 0 || alt.source === "human") continue;
        if (!rate(position, alt)) return { items, current: items[items.length - 1], finish: null };
      }
    }
    if (error) return { items, current: null, finish: "found_error" };
  }
  return { items, current: null, finish: items.length ? "solution" : null };
}

/** The last rated item in rating order (what "undo" clears), or null. */
export function lastRated(items, ratings) {
  for (let i = items.length - 1; i >= 0; i--) {
    if (valueOf(ratings, items[i].position, items[i].alternative) !== null) return items[i];
  }
  return null;
}
