"""The promotion gate: a new PRM replaces the champion only when it is better beyond noise.

A held-out figure of a few dozen problems moves by several points between two checkpoints of
the same quality, so "the challenger's figure is greater" promotes noise. The gate asks three
things of the challenger, both models being scored on the same held-out steps:

1. enough held-out problems to judge at all (``Rules.min_problems``);
2. a gain on the promotion metric (a key of ``metrics.PROMOTION_METRICS``) that holds at the
   one-sided ``Rules.confidence`` by a paired bootstrap over problems: the problems are drawn
   with replacement (the same draw for both models, since steps of one problem are not
   independent), the metric recomputed for each model on the drawn steps, and the bound of the
   difference's one-sided interval must be beyond 0 (below for a lower-is-better metric);
3. no guard figure (log loss, expected calibration error; lower is better) worse than the
   champion's by more than ``Rules.guard_tolerance``, absolute.

``decide`` returns the whole decision as plain JSON data (the figures, the interval, the guards,
the counts, the verdict and its reason), which ``scoring.retrain.promote`` stores on the
checkpoint. Seeded: the same data give the same decision. Plain functions, numpy and the
metrics of ``scoring.prm.metrics``; no Django.
"""
import dataclasses

import numpy as np

from scoring.prm.metrics import PROMOTION_METRICS, calibration, step_figure

RESAMPLES = 1000
SEED = 0
# Lower is better for both. ECE is the reliability table's (10 equal bins).
GUARDS = {"log_loss": "log loss", "ece": "expected calibration error"}
PROMOTE, REJECT = "promote", "reject"


@dataclasses.dataclass(frozen=True)
class Rules:
    """What the challenger must show; a project's settings (``Project.promotion_*``) fill it."""

    min_problems: int = 50
    confidence: float = 0.95
    guard_tolerance: float = 0.02
    resamples: int = RESAMPLES
    seed: int = SEED


@dataclasses.dataclass(frozen=True)
class Problem:
    """One held-out problem's labelled steps, scored by both models (all its solutions together)."""

    negatives: np.ndarray  # True where the step is wrong
    challenger: np.ndarray  # P(correct)
    champion: np.ndarray


def by_problem(problems, labels, challenger, champion):
    """Group per-solution lists into ``Problem``s, in first-seen order.

    ``problems`` names each solution's problem; ``labels`` (1/0 per step, None unlabelled) and
    the two models' step scores (None unscored) are per-solution lists. A step enters only when
    it is labelled and both models scored it, so both are judged on the same steps.
    """
    steps = {}
    for problem, solution_labels, new, old in zip(problems, labels, challenger, champion):
        kept = steps.setdefault(problem, ([], [], []))
        for label, p_new, p_old in zip(solution_labels, new, old):
            if label is None or p_new is None or p_old is None:
                continue
            kept[0].append(label == 0)
            kept[1].append(p_new)
            kept[2].append(p_old)
    return [Problem(np.asarray(n, dtype=bool), np.asarray(a, dtype=float), np.asarray(b, dtype=float))
            for n, a, b in steps.values() if n]


def guard_figure(name, probs, negatives):
    """A guard figure over flat steps (lower is better); None where there are no steps."""
    if name == "ece":
        return calibration(probs, ~np.asarray(negatives, dtype=bool))["ece"]
    return step_figure(name, probs, negatives)


def paired_bootstrap(problems, metric, *, resamples=RESAMPLES, seed=SEED):
    """Challenger minus champion on ``metric`` for ``resamples`` draws of the problems.

    Each draw takes ``len(problems)`` problems with replacement and recomputes the metric for
    both models on the drawn problems' steps. Returns the differences of the draws where the
    metric is defined for both (AUROC needs right and wrong steps), as an array.
    """
    from sklearn import config_context

    rng = np.random.default_rng(seed)
    sizes = np.array([len(p.negatives) for p in problems])
    starts = np.cumsum(sizes) - sizes
    negatives = np.concatenate([p.negatives for p in problems])
    new = np.concatenate([p.challenger for p in problems])
    old = np.concatenate([p.champion for p in problems])
    differences = []
    # The steps were checked once already (finite floats, booleans): scikit-learn need not check
    # them again on every draw.
    with config_context(assume_finite=True, skip_parameter_validation=True):
        for _ in range(resamples):
            drawn = rng.integers(0, len(problems), size=len(problems))
            lengths = sizes[drawn]  # the drawn problems' steps, one after the other
            steps = np.repeat(starts[drawn] - (np.cumsum(lengths) - lengths), lengths) + np.arange(lengths.sum())
            a = step_figure(metric, new[steps], negatives[steps])
            b = step_figure(metric, old[steps], negatives[steps])
            if a is not None and b is not None:
                differences.append(a - b)
    return np.asarray(differences, dtype=float)


def decide(problems, metric, rules=Rules()):
    """Whether the challenger replaces the champion on these held-out ``problems``, and why.

    ``problems`` are ``Problem``s (``by_problem``). Returns a JSON-ready dict: ``metric``,
    ``higher_is_better``, ``challenger`` and ``champion`` (the metric on all held-out steps),
    ``difference``, ``interval`` ([low, high] of the one-sided interval, the open side None),
    ``confidence``, ``resamples`` (drawn) and ``resamples_defined``, ``guards`` (each with both
    figures), ``guard_tolerance``, ``problems``, ``min_problems``, ``steps``, ``decision``
    ("promote" or "reject") and ``reason``.
    """
    if metric not in PROMOTION_METRICS:
        raise ValueError(f"unknown promotion metric {metric!r}; known: {', '.join(PROMOTION_METRICS)}")
    higher = PROMOTION_METRICS[metric][1]
    negatives = np.concatenate([p.negatives for p in problems]) if problems else np.zeros(0, dtype=bool)
    new = np.concatenate([p.challenger for p in problems]) if problems else np.zeros(0)
    old = np.concatenate([p.champion for p in problems]) if problems else np.zeros(0)
    summary = {
        "metric": metric, "higher_is_better": higher,
        "challenger": step_figure(metric, new, negatives), "champion": step_figure(metric, old, negatives),
        "difference": None, "interval": [None, None], "confidence": rules.confidence,
        "resamples": 0, "resamples_defined": 0, "seed": rules.seed,
        "guards": {name: {"challenger": guard_figure(name, new, negatives),
                          "champion": guard_figure(name, old, negatives)} for name in GUARDS},
        "guard_tolerance": rules.guard_tolerance,
        "problems": len(problems), "min_problems": rules.min_problems, "steps": int(len(negatives)),
    }
    if len(problems) < rules.min_problems:
        return _verdict(summary, REJECT, f"Not enough held-out data to judge: {len(problems)} held-out problems "
                                         f"({len(negatives)} labelled steps), the project asks for at least "
                                         f"{rules.min_problems}. The champion stays.")
    if summary["challenger"] is None or summary["champion"] is None:
        return _verdict(summary, REJECT, f"{metric} is undefined on the held-out set "
                                         "(it needs both correct and incorrect steps).")
    summary["difference"] = summary["challenger"] - summary["champion"]
    differences = paired_bootstrap(problems, metric, resamples=rules.resamples, seed=rules.seed)
    summary.update(resamples=rules.resamples, resamples_defined=int(len(differences)))
    if not len(differences):
        return _verdict(summary, REJECT, f"{metric} is undefined on every bootstrap resample of the held-out set.")
    if higher:
        bound = float(np.quantile(differences, 1 - rules.confidence))
        summary["interval"], beyond = [bound, None], bound > 0
    else:
        bound = float(np.quantile(differences, rules.confidence))
        summary["interval"], beyond = [None, bound], bound < 0
    figures = (f"{metric} {summary['challenger']:.4f} against the champion's {summary['champion']:.4f} "
               f"on {len(problems)} held-out problems (difference {summary['difference']:+.4f}, "
               f"{'lower' if higher else 'upper'} bound {bound:+.4f} at {rules.confidence:.0%} confidence, "
               f"paired bootstrap of {len(differences)} resamples)")
    if not beyond:
        return _verdict(summary, REJECT, f"Not better beyond noise: {figures}.")
    for name, label in GUARDS.items():
        pair = summary["guards"][name]
        if pair["challenger"] is not None and pair["champion"] is not None and \
                pair["challenger"] > pair["champion"] + rules.guard_tolerance:
            return _verdict(summary, REJECT, f"Worse {label} ({name}): {pair['challenger']:.4f} against the "
                                             f"champion's {pair['champion']:.4f}, beyond the tolerance of "
                                             f"{rules.guard_tolerance:g}; though {figures}.")
    return _verdict(summary, PROMOTE, f"Promoted: {figures}.")


def _verdict(summary, decision, reason):
    return {**summary, "decision": decision, "reason": reason}
