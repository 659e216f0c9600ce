"""Evaluation protocols for a PRM, on labelled files, giving a report (dict) ``scoring.prm.report`` writes.

Protocols (``PROTOCOLS``):

- ``steps``: step-level AUROC and F1 of finding incorrect steps (PRM800K labels, 0 ratings as
  the neutral policy says; ProcessBench items count the steps before the earliest error as
  correct and that one as wrong, later ones unlabelled), ROC curve and reliability diagram
  (predicted P(correct) in bins against the observed share of steps labelled correct).
- ``processbench``: earliest-error identification as in ProcessBench. A solution's predicted
  earliest error is its first step with P(correct) below the threshold (-1: none). The
  threshold is chosen on validation items (a separate file, or a seeded split of the input by
  problem) as the one with the best F1 there, then applied unchanged to the test items.
  Reported: accuracy on erroneous solutions (exact step), on correct ones, their harmonic mean.
- ``best-of-n``: the PRM picking one of N candidates against majority vote over final answers,
  a PRM-weighted vote, and a final-answer-only (outcome) scorer: the PRM's score of the last
  step, or an ORM-style score the records carry in a named field. As in the PRM800K paper, N
  candidates are drawn per problem many times and each method's pick is graded; the figure is
  the mean share of problems solved. When a problem has no more than ``samples`` subsets of
  size N, all of them are taken (an exact expectation); ties in a pick are broken uniformly at
  random, also as an expectation. The oracle (any of the N correct) bounds them all, and a
  random pick (N=1) is where they all start.

Scores come from a model (any adapter of ``scoring.prm.adapters``), from a model-free baseline
(``BASELINES``), or from ``step_scores`` already in the records.
"""
import itertools
import math
import random
from collections import defaultdict

from scoring.prm.metrics import (
    best_threshold,
    calibration,
    earliest_error,
    expected_pick,
    expected_vote,
    processbench,
    processbench_thresholds,
    roc_curve,
    step_metrics,
)
from scoring.prm.scorer import aggregate

PROTOCOLS = ("steps", "processbench", "best-of-n")


def _constant(steps):
    return [0.5] * len(steps)


def _position(steps):
    # later steps are more likely wrong: P(correct) falls with the 0-based position k
    return [1 / (k + 2) for k in range(len(steps))]


def _length(steps):
    # longer steps are more likely wrong
    return [1 / (1 + len(text) / 200) for text in steps]


# Model-free step scorers, the floor a trained PRM must clear.
BASELINES = {"constant": _constant, "position": _position, "length": _length}


def score_records(records, *, model=None, baseline=None, aggregation="prod", **options):
    """Put ``step_scores``, ``score`` and ``unscored_steps`` into each record (in place); returns them.

    With ``model`` (a PRM or an adapter) the steps are scored by it, ``options`` going to the
    scorer; with ``baseline`` (a name in ``BASELINES``) by that heuristic; with neither, the
    records must carry ``step_scores`` already and only ``score`` is recomputed.
    """
    aggregate([1.0], aggregation)  # a bad name fails before any work
    if model is not None:
        from scoring.prm.adapters import score_solutions

        results = score_solutions(model, [(r["problem"], r["steps"]) for r in records], aggregation=aggregation, **options)
        for record, result in zip(records, results):
            record.update(result.as_dict())
    elif baseline is not None:
        if baseline not in BASELINES:
            raise ValueError(f"unknown baseline {baseline!r}; choose from {', '.join(BASELINES)}")
        for record in records:
            record.update(step_scores=BASELINES[baseline](record["steps"]), unscored_steps=0)
    for index, record in enumerate(records):
        if not isinstance(record.get("step_scores"), list):
            raise ValueError(f"record {index + 1} has no step_scores: give a model or a baseline")
        record["score"] = aggregate(record["step_scores"], aggregation)
        record["aggregation"] = aggregation
    return records


def step_labels(record):
    """Per-step labels (1 correct, 0 wrong, None unknown) from PRM800K ``labels`` or a ProcessBench ``label``."""
    if isinstance(record.get("labels"), list):
        return record["labels"]
    label = record.get("label")
    if isinstance(label, int) and not isinstance(label, bool):
        n = len(record["steps"])
        return [1] * n if label == -1 else [1] * label + [0] + [None] * (n - label - 1)
    return None


def _thin(points, most=200):
    if len(points) <= most:
        return points
    last = len(points) - 1
    return [points[round(k * last / (most - 1))] for k in range(most)]


def steps_protocol(records, *, threshold=0.5, bins=10):
    """Step AUROC/F1 on incorrect steps, the ROC curve and the reliability table."""
    labelled = [(r["step_scores"], step_labels(r)) for r in records if step_labels(r) is not None]
    if not labelled:
        raise ValueError("the steps protocol needs step labels (PRM800K ratings or a ProcessBench label)")
    figures = step_metrics([s for s, _ in labelled], [l for _, l in labelled], threshold=threshold)
    pairs = [(p, label) for scores, labels in labelled for p, label in zip(scores, labels)
             if p is not None and label is not None]
    wrong = [label == 0 for _, label in pairs]
    return {
        "protocol": "steps",
        "solutions": len(labelled),
        **figures,
        "roc": _thin(roc_curve([1 - p for p, _ in pairs], wrong)),
        "calibration": calibration([p for p, _ in pairs], [label == 1 for _, label in pairs], bins=bins),
    }


def processbench_protocol(test, validation, *, fixed_threshold=0.5):
    """Threshold chosen on ``validation`` by F1, applied to ``test``; also figures at ``fixed_threshold``."""
    for name, items in (("test", test), ("validation", validation)):
        if not any(isinstance(r.get("label"), int) for r in items):
            raise ValueError(f"the processbench protocol needs {name} items with a label (earliest wrong step, -1 if none)")
    val_table = processbench_thresholds([r["step_scores"] for r in validation], [r["label"] for r in validation])
    chosen = best_threshold(val_table)
    test_scores, test_labels = [r["step_scores"] for r in test], [r["label"] for r in test]
    test_table = processbench_thresholds(test_scores, test_labels)

    def at(threshold):
        return processbench([earliest_error(s, threshold=threshold) for s in test_scores], test_labels)

    return {
        "protocol": "processbench",
        "threshold": chosen["threshold"],
        "validation": {"items": len(validation), **{k: v for k, v in chosen.items() if k != "threshold"}},
        "test": {"items": len(test), **at(chosen["threshold"])},
        "test_at_fixed_threshold": {"threshold": fixed_threshold, **at(fixed_threshold)},
        # the best a threshold could do on the test items themselves: an optimistic ceiling, not a result
        "test_oracle_threshold": best_threshold(test_table),
        "by_threshold": {"validation": _thin(val_table), "test": _thin(test_table)},
    }


def _last_step(record):
    scored = [p for p in record["step_scores"] if p is not None]
    return scored[-1] if scored else None


def _subsets(size, n, *, samples, rng):
    total = math.comb(size, n)
    if total <= samples:
        return list(itertools.combinations(range(size), n))
    return [tuple(rng.sample(range(size), n)) for _ in range(samples)]


def best_of_n_protocol(records, *, ns=None, samples=200, seed=0, outcome="last"):
    """Share of problems solved by each way of picking one of N candidates, for each N (see the module).

    ``records`` need ``problem``, ``answer``, ``is_correct``, ``score`` and ``step_scores``;
    ``outcome`` is ``"last"`` (the PRM's last-step score) or the name of a field holding an
    outcome score. ``ns`` defaults to 1, 2, 4, ... up to the largest pool.
    """
    graded = [r for r in records if isinstance(r.get("is_correct"), bool) and "answer" in r]
    if not graded:
        raise ValueError("best-of-N needs candidates with answer and is_correct")
    if outcome != "last" and not all(outcome in r for r in graded):
        raise ValueError(f"best-of-N: outcome field {outcome!r} is missing from some candidates")
    outcome_key = _last_step if outcome == "last" else (lambda r: r[outcome])
    pools = defaultdict(list)
    for record in graded:
        pools[record["problem"]].append(record)
    largest = max(len(pool) for pool in pools.values())
    ns = ns or [2 ** k for k in range(int(math.log2(largest)) + 1)]
    methods = {
        "prm": lambda pool: expected_pick(pool, lambda c: c["score"]),
        "outcome": lambda pool: expected_pick(pool, outcome_key),
        "majority_vote": lambda pool: expected_vote(pool),
        "prm_weighted_vote": lambda pool: expected_vote(pool, lambda c: c["score"]),
        "oracle": lambda pool: float(any(c["is_correct"] for c in pool)),
        "random": lambda pool: sum(c["is_correct"] for c in pool) / len(pool),
    }
    rng = random.Random(seed)
    curves, problems, draws = {name: [] for name in methods}, [], []
    for n in ns:
        totals, counted, drawn = defaultdict(float), 0, 0
        for problem in sorted(pools):
            pool = pools[problem]
            if len(pool) < n:
                continue
            subsets = _subsets(len(pool), n, samples=samples, rng=rng)
            counted, drawn = counted + 1, drawn + len(subsets)
            for name, method in methods.items():
                totals[name] += sum(method([pool[i] for i in subset]) for subset in subsets) / len(subsets)
        for name in methods:
            curves[name].append(totals[name] / counted if counted else None)
        problems.append(counted)
        draws.append(drawn)
    return {"protocol": "best-of-n", "ns": list(ns), "solved": curves, "problems": problems, "subsets": draws,
            "samples": samples, "seed": seed, "outcome": outcome, "aggregation": graded[0].get("aggregation"),
            "candidates": len(graded), "largest_pool": largest}
