"""Choosing what people rate next, as PRM800K did: convincing wrong-answer solutions.

A solution is *convincing* when the PRM scores it high. Among solutions whose final answer is
graded wrong, the most convincing are the ones the PRM is most wrong about, the most useful to
label. PRM800K filled 80% of a generation with them and the rest with the most convincing of
the other solutions (right or ungraded answers), so the PRM also sees what it gets right.

Pure Python: no Django, no torch. The caller decides which solutions may be chosen at all.
"""
import dataclasses


@dataclasses.dataclass(frozen=True)
class Candidate:
    """A solution that may be selected: its id, its problem, its PRM score and its grade."""

    solution_id: int
    problem_id: int
    score: float | None
    is_correct: bool | None  # None: not graded; counts with the "rest"


def _order(candidates):
    # Most convincing first; ties broken by id so that a rerun selects exactly the same.
    return sorted(candidates, key=lambda c: (-c.score, c.solution_id))


def select(candidates, *, size, wrong_share=0.8, per_problem_cap=0):
    """The chosen candidates in queue order (rank 1 first); at most ``size`` of them.

    ``round(size * wrong_share)`` slots go to the highest-scored wrong-answer solutions, the
    others to the highest-scored of the rest; when one group runs short the other fills its
    slots. ``per_problem_cap`` (0: none) bounds how many solutions of one problem are chosen.
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
    per_problem = {}

    def take(pool, limit):
        chosen = []
        for candidate in pool:
            if len(chosen) >= limit:
                break
            if per_problem_cap and per_problem.get(candidate.problem_id, 0) >= per_problem_cap:
                continue
            per_problem[candidate.problem_id] = per_problem.get(candidate.problem_id, 0) + 1
            chosen.append(candidate)
        return chosen

    n_wrong = round(size * wrong_share)
    chosen_wrong = take(wrong, n_wrong)
    chosen_rest = take(rest, size - len(chosen_wrong))
    if len(chosen_wrong) + len(chosen_rest) < size:  # the rest ran short: more wrong answers fill in
        taken = {c.solution_id for c in chosen_wrong}
        chosen_wrong += take([c for c in wrong if c.solution_id not in taken], size - len(chosen_wrong) - len(chosen_rest))
    return interleave(chosen_wrong, chosen_rest)


def interleave(first, second):
    """Merge two ordered lists so that every prefix holds them in about their overall ratio."""
    total = len(first) + len(second)
    merged, i, j = [], 0, 0
    for position in range(1, total + 1):
        # Take from ``first`` while it is behind its share of the prefix.
        if j >= len(second) or (i < len(first) and i < round(position * len(first) / total)):
            merged.append(first[i])
            i += 1
        else:
            merged.append(second[j])
            j += 1
    return merged
