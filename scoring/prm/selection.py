"""Choosing what people rate next, as PRM800K did: convincing wrong-answer solutions.

A solution is *convincing* when the PRM scores it high. Among solutions whose final answer is
graded wrong, the most convincing are the ones the PRM is most wrong about, the most useful to
label. PRM800K filled 80% of a generation with them and the rest with the most convincing of
the other solutions (right or ungraded answers), so the PRM also sees what it gets right.

Pure Python: no Django, no torch. The caller decides which solutions may be chosen at all.
"""
import dataclasses


# slots: a selection holds one per solution of the pool (930K in a PRM800K-sized campaign).
@dataclasses.dataclass(frozen=True, slots=True)
class Candidate:
    """A solution that may be selected: its id, its problem, its PRM score and its grade.

    ``uncertainty`` is the champion's disagreement with itself over the solution (MC dropout,
    ``scoring.prm.strategies``), None where it was not measured.
    """

    solution_id: int
    problem_id: int
    score: float | None
    is_correct: bool | None  # None: not graded; counts with the "rest"
    uncertainty: float | None = None


def _order(candidates):
    # Most convincing first; ties broken by id so that a rerun selects exactly the same.
    return sorted(candidates, key=lambda c: (-c.score, c.solution_id))


def select(candidates, *, size, wrong_share=0.8, per_problem_cap=0, counts=None):
    """The chosen candidates in queue order (rank 1 first); at most ``size`` of them.

    ``round(size * wrong_share)`` slots go to the highest-scored wrong-answer solutions, the
    others to the highest-scored of the rest; when one group runs short the other fills its
    slots. ``per_problem_cap`` (0: none) bounds how many solutions of one problem are chosen.
    ``counts`` (problem id -> solutions chosen already, by the other strategies of a mixture)
    counts towards the cap and is updated with this call's choices.
    Candidates without a score are never chosen. The order interleaves the two groups so that
    every prefix of the queue keeps about the same mix (annotators may not finish a
    generation), most convincing first within each group.
    """
    if size < 0:
        raise ValueError("size must be >= 0")
    if not 0 <= wrong_share <= 1:
        raise ValueError("wrong_share must be between 0 and 1")
    scored = [c for c in candidates if c.score is not None]
    wrong = _order(c for c in scored if c.is_correct is False)
    rest = _order(c for c in scored if c.is_correct is not False)
    per_problem = {} if counts is None else counts

    n_wrong = round(size * wrong_share)
    chosen_wrong = take(wrong, n_wrong, per_problem_cap, per_problem)
    chosen_rest = take(rest, size - len(chosen_wrong), per_problem_cap, per_problem)
    if len(chosen_wrong) + len(chosen_rest) < size:  # the rest ran short: more wrong answers fill in
        taken = {c.solution_id for c in chosen_wrong}
        chosen_wrong += take([c for c in wrong if c.solution_id not in taken], size - len(chosen_wrong) - len(chosen_rest),
                             per_problem_cap, per_problem)
    return interleave(chosen_wrong, chosen_rest)


def take(ranked, limit, per_problem_cap, counts):
    """The first ``limit`` of ``ranked`` that the per-problem cap allows (0: no cap); ``counts``
    (problem id -> chosen so far, shared by every strategy of a mixture) is updated."""
    chosen = []
    for candidate in ranked:
        if len(chosen) >= limit:
            break
        if per_problem_cap and counts.get(candidate.problem_id, 0) >= per_problem_cap:
            continue
        counts[candidate.problem_id] = counts.get(candidate.problem_id, 0) + 1
        chosen.append(candidate)
    return chosen


def interleave(*lists):
    """Merge ordered lists so that every prefix holds them in about their overall ratio.

    At each position the list furthest behind its share of the prefix gives its next item
    (ties: the earlier list), so an annotator who stops anywhere has seen the intended mix.
    """
    total = sum(len(items) for items in lists)
    merged, taken = [], [0] * len(lists)
    for position in range(1, total + 1):
        behind = [(position * len(items) / total - taken[k], -k) for k, items in enumerate(lists)
                  if taken[k] < len(items)]
        k = -max(behind)[1]
        merged.append(lists[k][taken[k]])
        taken[k] += 1
    return merged
