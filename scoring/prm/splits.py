"""Splitting labelled items by problem, so that no problem is on both sides of a split.

One function, two ways of choosing the held-out problems:

- seeded (``seed`` given): the distinct problems are shuffled with the seed and the first
  ``round(n * fraction)`` are held out; with a fraction above 0 and two problems or more, at
  least one is held out and at least one kept. Training's validation split and the
  ProcessBench threshold split use it: the same seed, the same split.
- stable (no seed): a problem is held out when a hash of its statement falls in the first
  ``fraction`` of the hash range. The side of a problem depends on its statement only, so it
  never changes as more problems arrive: the retrain's held-out problems stay held out in
  every round and never train.
"""
import hashlib
import random
from operator import attrgetter

_STABLE_SALT = b"stepmark-heldout\0"  # changing it would move problems across the retrain's split


def split_by_problem(items, *, fraction, seed=None, key=attrgetter("problem")):
    """``(kept, held_out)``: ``items`` in their order, each problem's items on one side.

    ``fraction`` is the share of problems held out (0 <= fraction < 1); ``seed`` picks them
    by a seeded shuffle, no seed by the stable hash (see the module). ``key`` gives an item's
    problem statement (default: its ``problem`` attribute; ``operator.itemgetter("problem")``
    for dicts).
    """
    if not 0 <= fraction < 1:
        raise ValueError(f"the held-out fraction must be at least 0 and below 1, got {fraction}")
    if seed is None:
        held_out = {problem for problem in map(key, items) if stable_held_out(problem, fraction)}
    else:
        problems = sorted(set(map(key, items)))
        random.Random(seed).shuffle(problems)
        n = round(len(problems) * fraction)
        if fraction > 0:
            n = max(n, 1)
        held_out = set(problems[:min(n, max(len(problems) - 1, 0))])
    kept, out = [], []
    for item in items:
        (out if key(item) in held_out else kept).append(item)
    return kept, out


def stable_held_out(problem, fraction):
    """Whether the stable split holds ``problem`` (its statement) out, whatever else is split with it."""
    digest = hashlib.sha256(_STABLE_SALT + problem.encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big") / 2**64 < fraction
