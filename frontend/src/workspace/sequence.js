// The order in which an annotator rates a solution, and when the pass can be finished.
//
// Mirrors the server's rules (labeling/work/submission.py) so the page only ever offers what the
// server will accept:
//   - the solution's own steps (alternative 0) are rated in order;
//   - in phase 1 (stop_at_first_error off) the alternatives at every position are rated
//     right after the position's own step; in phase 2 only those at the -1;
//   - a -1 on a solution's own step ends the pass there (found_error) unless something at the
//     position carries the trajectory on:
//       - in phase 1 with alternatives, an alternative rated 0 or +1 (PRM800K's chosen
//         completion: the lowest-index +1, else the lowest 0, as submission._continuation (labeling/work/submission.py)
//         picks it). Its card is marked (``continues``) and the next position is revealed;
//       - else, in projects that take human steps, once every completion at the position is
//         -1 the annotator may write their own step (the HUMAN item). Rated 0 or +1 it
//         carries the trajectory on to the next position; rated -1 the pass ends there.
//     The server accepts ``solution`` only when every -1 on the solution's own steps is
//     carried on like that, which is why any other -1 ends the pass in phase 1 too;
//   - rating every step without an uncorrected -1 finishes the pass as solution;
//   - a finish is offered only where the server would take it: a rating the walk did not reach
//     (a step rated past the -1 that ends the pass, an own step the page did not offer: a draft
//     from another client, or project settings changed mid-pass) offers none, as the server
//     refuses both found_error and solution there.
// tests/vectors/submission_rules.json holds scenarios that this file (frontend/tests/
// sequence.test.js) and the server (tests/labeling/work/test_rule_vectors.py) must both answer.
// Plain functions over the API's assignment payload and a ratings Map, no DOM.

/** The ``alternative`` of the annotator's own step: its server index is not needed here. */
export const HUMAN = "human";

/** "position:alternative", the key of one candidate step everywhere in the workspace. */
export function stepKey(position, alternative) {
  return `${position}:${alternative}`;
}

/**
 * Map key -> rating from the payload. Model steps: {position, alternative, value, flagged};
 * the annotator's own step: {position, value, flagged, text} under ``stepKey(p, HUMAN)``
 * (sent without an alternative, as the API takes it).
 */
export function ratingsFrom(assignment) {
  const ratings = new Map();
  const human = new Map(); // "position:index" of own steps -> text
  for (const { position, alternatives } of assignment.steps || []) {
    for (const alt of alternatives) {
      if (alt.source === "human") human.set(stepKey(position, alt.alternative), alt.text);
    }
  }
  for (const r of assignment.ratings || []) {
    const own = stepKey(r.position, r.alternative);
    if (human.has(own)) {
      ratings.set(stepKey(r.position, HUMAN), humanRating(r.position, r.value, r.flagged, human.get(own)));
      human.delete(own);
    } else {
      ratings.set(own, { ...r });
    }
  }
  for (const [own, text] of human) {
    const position = Number(own.split(":")[0]);
    ratings.set(stepKey(position, HUMAN), humanRating(position, null, false, text));
  }
  return ratings;
}

/** The rating item of the annotator's own step; ``text`` null withdraws the step. */
export function humanRating(position, value, flagged, text) {
  return { position, value, flagged: Boolean(flagged), text };
}

function valueOf(ratings, position, alternative) {
  const rating = ratings.get(stepKey(position, alternative));
  return rating ? rating.value : null;
}

/**
 * The steps revealed so far, in rating order, and how the pass ends.
 *
 * Returns ``{items, current, finish}``: ``items`` are ``{position, alternative, text}`` in
 * the order they are rated (the own step: ``{position, alternative: HUMAN, human: true,
 * text}``, text null until written; the alternative a phase-1 pass goes on with after a -1
 * has ``continues: true``, and every alternative there that could carry it on, rated 0 or +1,
 * ``choosable: true``); ``current`` is the first unrated one (null when every
 * revealed step is rated); ``finish`` is "found_error" or "solution" once the pass can be
 * submitted with that reason, else null. While the own step is still to be written,
 * ``current`` is that item and ``finish`` is "found_error": writing is an offer.
 */
export function sequence(assignment, ratings) {
  const project = assignment.project;
  const items = [];
  const rate = (position, alt) => {
    items.push({ position, alternative: alt.alternative, text: alt.text });
    return valueOf(ratings, position, alt.alternative) !== null;
  };
  const stop = (current, finish) => ({ items, current, finish });
  for (const { position, alternatives } of assignment.steps) {
    const main = alternatives.find((a) => a.alternative === 0 && a.source !== "human");
    if (!main) continue;
    const models = alternatives.filter((a) => a.source !== "human");
    if (!rate(position, main)) return stop(items.at(-1), null);
    const error = valueOf(ratings, position, 0) === -1;
    if (project.allow_alternatives && (error || !project.stop_at_first_error)) {
      for (const alt of models) {
        if (alt.alternative === 0) continue;
        if (!rate(position, alt)) return stop(items.at(-1), null);
      }
    }
    if (!error) continue;
    if (project.allow_alternatives && !project.stop_at_first_error) {
      const chosen = continuation(models, ratings, position);
      if (chosen) {
        items.find((i) => i.position === position && i.alternative === chosen.alternative).continues = true;
        // More than one could carry it on: the annotator may pick another (task.js: the p key or the mouse).
        for (const i of items) {
          if (i.position === position && i.alternative !== 0 && i.alternative !== HUMAN) {
            const value = valueOf(ratings, position, i.alternative);
            i.choosable = value === 0 || value === 1;
          }
        }
        continue;
      }
    }
    // The server counts every model completion here, shown or not (submission._check_human_steps).
    const allBad = models.every((a) => valueOf(ratings, position, a.alternative) === -1);
    if (!(project.allow_human_steps && allBad)) return stop(null, offered("found_error", items, ratings, position));
    const own = ratings.get(stepKey(position, HUMAN));
    const item = { position, alternative: HUMAN, human: true, text: own && own.text ? own.text : null };
    items.push(item);
    if (!item.text) return stop(item, offered("found_error", items, ratings, position));
    if (own.value === null || own.value === undefined) return stop(item, null);
    if (own.value === -1) return stop(null, offered("found_error", items, ratings, position));
  }
  return stop(null, items.length ? offered("solution", items, ratings, Infinity) : null);
}

// ``reason`` for a pass that ends at ``position``, or null where a rating lies outside the walk:
// a step rated after that position, or an own step the walk did not offer. (Alternatives the
// walk skips at or before it, as phase 2 does at steps that are not -1, do not matter.)
function offered(reason, items, ratings, position) {
  const walked = new Set(items.map((i) => stepKey(i.position, i.alternative)));
  for (const [key, rating] of ratings) {
    if (walked.has(key)) continue;
    const rated = (rating.value !== null && rating.value !== undefined) || Boolean(rating.text);
    const [at, alternative] = key.split(":");
    if (rated && (Number(at) > position || alternative === HUMAN)) return null;
  }
  return reason;
}

// The alternative a phase-1 trajectory goes on with after a -1 own step: the one the annotator
// picked (its rating has ``chosen: true`` and is 0 or +1), else the default: the lowest-index one
// rated +1, else the lowest rated 0, else null. Every alternative is rated by now. The server's
// copy is submission._continuation; the pick goes to it with the submit.
function continuation(models, ratings, position) {
  const alternatives = models.filter((a) => a.alternative > 0).sort((x, y) => x.alternative - y.alternative);
  const picked = alternatives.find((a) => {
    const rating = ratings.get(stepKey(position, a.alternative));
    return rating && rating.chosen === true && (rating.value === 0 || rating.value === 1);
  });
  if (picked) return picked;
  for (const wanted of [1, 0]) {
    const found = alternatives.find((a) => valueOf(ratings, position, a.alternative) === wanted);
    if (found) return found;
  }
  return null;
}

/**
 * The latest step where the annotator may pick the completion the solution goes on from:
 * ``{position, options, going}`` (the items rated 0 or +1 there, two or more, and the one it goes
 * on from now), or null. The p key (task.nextPick) moves ``going`` to the next of ``options``.
 */
export function latestChoice(seq) {
  const positions = [...new Set(seq.items.filter((i) => i.choosable).map((i) => i.position))];
  for (const position of positions.reverse()) {
    const options = seq.items.filter((i) => i.position === position && i.choosable);
    const going = options.find((i) => i.continues);
    if (options.length > 1 && going) return { position, options, going };
  }
  return null;
}

/** The last rated item in rating order (what "undo" clears), or null. */
export function lastRated(items, ratings) {
  for (let i = items.length - 1; i >= 0; i--) {
    const value = valueOf(ratings, items[i].position, items[i].alternative);
    if (value !== null && value !== undefined) return items[i];
  }
  return null;
}
