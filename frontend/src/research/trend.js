// The checkpoint trend charts' figures: one per checkpoint and metric, with where it came from
// or why there is none. Pure (no DOM), so node's test runner checks it (tests/trend.test.js).

/** The checkpoint's own held-out figures (older checkpoints kept them at the top of ``metrics``). */
export function heldout(checkpoint) {
  const m = checkpoint.metrics || {};
  return m.heldout || m;
}

function given(value) {
  return value !== null && value !== undefined;
}

/**
 * ``{label, value, note, why}`` per checkpoint, oldest first. A champion that was never retrained
 * here (the first one, built from the base model or registered) has no held-out figures of its
 * own, but every challenger measured it on its held-out problems (``champion_heldout`` beside
 * ``champion_id``): it is drawn with the latest such figure rather than as a gap. ``why`` says why a
 * checkpoint has no figure at all; ``note`` marks the current and former champions.
 */
export function trendPoints(checkpoints, key) {
  const oldestFirst = [...checkpoints].sort((a, b) => a.id - b.id);
  return oldestFirst.map((c) => {
    const note = c.is_champion ? "champion" : c.status === "champion" ? "former champion" : null;
    const own = heldout(c)?.[key];
    if (given(own)) return { label: `#${c.id}`, value: own, note, why: null };
    const challenger = [...oldestFirst].reverse().find(
      (x) => x.metrics?.champion_id === c.id && given(x.metrics?.champion_heldout?.[key]));
    if (challenger) {
      return { label: `#${c.id}`, value: challenger.metrics.champion_heldout[key],
        note: `${note ?? "champion"}, measured when #${challenger.id} challenged it`, why: null };
    }
    return { label: `#${c.id}`, value: null, note, why: missing(c) };
  });
}

function missing(c) {
  if (c.status === "failed") return "failed";
  if (c.status === "training" || c.status === "validating") return "training";
  return "not evaluated on the held-out problems";
}

/** The legend's entry for the gaps: the reasons that occur, or none when every point has a figure. */
export function gapLegend(points) {
  const reasons = [...new Set(points.filter((p) => !given(p.value)).map((p) => p.why))];
  return reasons.length ? [["no-data", `no figure (${reasons.join("; ")})`]] : [];
}
