"""The rules that choose a generation, one function each, and mixtures of them.

- ``convincing_wrong``: PRM800K's rule, the highest-scored wrong-answer solutions with a share of
  the rest (``scoring.prm.selection.select``).
- ``uncertainty``: the solutions the champion disagrees with itself most about, measured by MC
  dropout on the step head (``scoring.prm.scorer``: the backbone once, then ``DROPOUT_PASSES``
  passes of the head on its input features dropped out with ``HEAD_DROPOUT``, the standard
  deviation of each step's P(correct)); it works at config dropout 0, as most decoder PRMs ship.
  A solution's uncertainty is the largest of its steps': one doubtful step is what a step label
  resolves, and a mean would dilute it in a long solution.
- ``random``: a seeded shuffle, the baseline the others must beat.
- ``mixture``: each of those takes a stated share (``{"convincing_wrong": 0.5, "random": 0.5}``).

Every rule honours the per-problem cap and never picks a solution twice; each pick says which
rule took it (``Pick.strategy``), and ``reason`` is what the database keeps of why.

Pure Python: no Django, no torch (the web process reads the names and checks a mix from here).
"""
import dataclasses
import random as _random

from scoring.prm import selection

CONVINCING_WRONG = "convincing_wrong"
UNCERTAINTY = "uncertainty"
RANDOM = "random"
MIXTURE = "mixture"
MIXABLE = (CONVINCING_WRONG, UNCERTAINTY, RANDOM)
STRATEGIES = (*MIXABLE, MIXTURE)
# Passes of the step head on dropped-out features per solution when uncertainty is measured:
# enough for a standard deviation, and cheap beside the scoring pass (the backbone runs once).
DROPOUT_PASSES = 4


@dataclasses.dataclass(frozen=True)
class Pick:
    """A chosen candidate and the strategy that chose it."""

    candidate: selection.Candidate
    strategy: str


def check_mix(mix):
    """``mix`` as ``{strategy: share}`` in ``MIXABLE`` order, or ValueError saying what is wrong.

    Known names only, shares non-negative numbers summing to 1 (within 1e-6), at least one above 0.
    """
    if not isinstance(mix, dict) or not mix:
        raise ValueError(f'Give shares per strategy, e.g. {{"{CONVINCING_WRONG}": 0.5, "{RANDOM}": 0.5}}.')
    unknown = sorted(set(mix) - set(MIXABLE))
    if unknown:
        raise ValueError(f"Unknown strategy {unknown[0]!r}; a mixture takes {', '.join(MIXABLE)}.")
    for name, share in mix.items():
        if isinstance(share, bool) or not isinstance(share, (int, float)) or not 0 <= share <= 1:
            raise ValueError(f"The share of {name} must be a number from 0 to 1.")
    if abs(sum(mix.values()) - 1) > 1e-6:
        raise ValueError(f"The shares must sum to 1; they sum to {sum(mix.values()):g}.")
    return {name: float(mix[name]) for name in MIXABLE if name in mix}


def needs_uncertainty(strategy, mix=None):
    """Whether choosing by ``strategy`` (and ``mix``) reads the solutions' uncertainty."""
    if strategy == MIXTURE:
        return bool((mix or {}).get(UNCERTAINTY))
    return strategy == UNCERTAINTY


def quotas(size, mix):
    """Slots per strategy: ``size * share`` rounded so that they sum to ``size`` (largest remainders,
    ties in ``MIXABLE`` order)."""
    exact = {name: size * share for name, share in mix.items()}
    counts = {name: int(value) for name, value in exact.items()}
    by_remainder = sorted(mix, key=lambda name: (-(exact[name] - counts[name]), MIXABLE.index(name)))
    for name in by_remainder[:size - sum(counts.values())]:
        counts[name] += 1
    return counts


def most_uncertain(candidates, *, size, per_problem_cap=0, counts=None):
    """The ``size`` candidates with the highest uncertainty (ties by id); unmeasured ones never."""
    ranked = sorted((c for c in candidates if c.uncertainty is not None), key=lambda c: (-c.uncertainty, c.solution_id))
    return selection.take(ranked, size, per_problem_cap, {} if counts is None else counts)


def shuffled(candidates, *, size, seed, per_problem_cap=0, counts=None):
    """``size`` candidates in the order of a shuffle seeded by ``seed``: the same seed, the same pick."""
    ranked = sorted(candidates, key=lambda c: c.solution_id)
    _random.Random(seed).shuffle(ranked)
    return selection.take(ranked, size, per_problem_cap, {} if counts is None else counts)


def _one(name, candidates, size, *, wrong_share, per_problem_cap, seed, counts):
    if name == CONVINCING_WRONG:
        return selection.select(candidates, size=size, wrong_share=wrong_share, per_problem_cap=per_problem_cap,
                                counts=counts)
    if name == UNCERTAINTY:
        return most_uncertain(candidates, size=size, per_problem_cap=per_problem_cap, counts=counts)
    if name == RANDOM:
        return shuffled(candidates, size=size, seed=seed, per_problem_cap=per_problem_cap, counts=counts)
    raise ValueError(f"unknown strategy {name!r}; choose from {', '.join(STRATEGIES)}")


def choose(candidates, *, strategy, size, mix=None, wrong_share=0.8, per_problem_cap=0, seed=0):
    """The picks of ``strategy`` in queue order (rank 1 first); at most ``size`` of them.

    A mixture gives each strategy its quota (``quotas``), in ``MIXABLE`` order, each choosing
    among what the ones before left and under one per-problem cap; when one runs short the
    others fill its slots, in the same order. The queue interleaves the strategies' picks so that
    every prefix keeps about the mix, each strategy's own order kept.
    """
    if size < 0:
        raise ValueError("size must be >= 0")
    candidates = list(candidates)
    options = dict(wrong_share=wrong_share, per_problem_cap=per_problem_cap, seed=seed)
    if strategy != MIXTURE:
        return [Pick(c, strategy) for c in _one(strategy, candidates, size, counts={}, **options)]
    mix = check_mix(mix)
    counts, taken, picks = {}, set(), {name: [] for name in mix}

    def fill(name, limit):
        left = [c for c in candidates if c.solution_id not in taken]
        chosen = _one(name, left, limit, counts=counts, **options) if limit > 0 else []
        taken.update(c.solution_id for c in chosen)
        picks[name] += chosen

    for name, quota in quotas(size, mix).items():
        fill(name, quota)
    for name in mix:  # a short strategy's slots go to the others
        fill(name, size - len(taken))
    return interleave_picks(picks)


def interleave_picks(picks):
    """``{strategy: [candidate, ...]}`` as one queue of ``Pick`` whose every prefix keeps about the mix."""
    return selection.interleave(*[[Pick(c, name) for c in chosen] for name, chosen in picks.items()])


def answer(candidate):
    """The graded final answer in words: right, wrong or ungraded."""
    return {True: "right", False: "wrong"}.get(candidate.is_correct, "ungraded")


def reason(pick):
    """Why a solution was chosen, as stored with it: strategy, score, uncertainty, graded answer."""
    c = pick.candidate
    return {"strategy": pick.strategy, "score": c.score, "uncertainty": c.uncertainty, "answer": answer(c)}
