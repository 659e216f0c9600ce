"""How good a PRM is: step-level AUROC and F1, ProcessBench earliest-error F1, best-of-N.

AUROC, the ROC curve, precision, recall, F1, accuracy, log loss and the reliability table's
bins come from scikit-learn; the figures it does not have (ProcessBench's earliest-error F1,
best-of-N) are plain Python, so they can be checked by hand. No torch. scikit-learn is imported on first use (it takes a second
or two), so ``python -m scoring --help`` stays quick.

Conventions: step scores are P(correct); the "positive" class of the step-level metrics is the
*incorrect* step (label 0), the one a PRM exists to find, so AUROC ranks ``1 - P(correct)``
and F1 is the F1 of flagging incorrect steps at ``P(correct) < threshold``.
"""
from collections import Counter, defaultdict

# The held-out figures a retrain may promote on (``scoring.retrain.evaluate`` computes each of
# them under this name): name -> (what the researcher reads, whether higher is better). The one
# list: the retrain judges with it and the loop settings (``scoring.loop_settings``) offer it as
# the promotion metric's choices. Plain data, so the web process may import it.
PROMOTION_METRICS = {
    "step_auroc": ("Step AUROC: wrong steps scored below right ones", True),
    "step_f1": ("Step F1 of flagging wrong steps (P(correct) < 0.5)", True),
    "accuracy": ("Step accuracy at P(correct) 0.5", True),
    "log_loss": ("Step log loss (lower is better)", False),
}


def auroc(scores, positives):
    """Area under the ROC curve: the chance a random positive outscores a random negative.

    Ties count one half (scikit-learn's ``roc_auc_score``). ``None`` when one class is absent.
    """
    if _one_class(positives):
        return None
    import numpy as np
    from sklearn.metrics import roc_auc_score

    return float(roc_auc_score(np.asarray(positives, dtype=bool), np.asarray(scores, dtype=float)))


def f1(predicted, actual):
    """F1, precision and recall of boolean predictions (0.0 where undefined)."""
    if len(actual) == 0:
        return {"f1": 0.0, "precision": 0.0, "recall": 0.0}
    import numpy as np
    from sklearn.metrics import precision_recall_fscore_support

    precision, recall, score, _ = precision_recall_fscore_support(
        np.asarray(actual, dtype=bool), np.asarray(predicted, dtype=bool), average="binary", pos_label=True,
        zero_division=0.0)
    return {"f1": float(score), "precision": float(precision), "recall": float(recall)}


def _one_class(positives):
    import numpy as np

    n_pos = int(np.count_nonzero(np.asarray(positives, dtype=bool)))
    return n_pos == 0 or n_pos == len(positives)


def step_metrics(step_scores, labels, *, threshold=0.5):
    """Step-level figures over pairs of (P(correct), label) where both are known.

    ``step_scores`` and ``labels`` are lists of per-solution lists; ``None`` entries (unscored
    or unlabelled steps) are left out and counted.
    """
    probs, negatives, skipped = [], [], 0
    for solution_scores, solution_labels in zip(step_scores, labels):
        for p, label in zip(solution_scores, solution_labels):
            if label is None:
                continue
            if p is None:
                skipped += 1
                continue
            probs.append(p)
            negatives.append(label == 0)
    found = f1([p < threshold for p in probs], negatives)
    return {
        "steps": len(probs),
        "negative_steps": sum(negatives),
        "unscored_labelled_steps": skipped,
        "auroc": step_figure("step_auroc", probs, negatives),
        "f1_negative": found["f1"],
        "precision_negative": found["precision"],
        "recall_negative": found["recall"],
        "accuracy": step_figure("accuracy", probs, negatives, threshold=threshold),
        "log_loss": step_figure("log_loss", probs, negatives),
        "threshold": threshold,
    }


def step_figure(name, probs, negatives, *, threshold=0.5):
    """One promotion metric (a key of ``PROMOTION_METRICS``) over flat steps; None where undefined.

    ``probs`` are P(correct), ``negatives`` True where the step is wrong: the figure
    ``step_metrics`` reports for these steps, computed alone so that the promotion gate
    (``scoring.prm.gate``) can recompute it on each bootstrap resample.
    """
    import numpy as np

    probs, negatives = np.asarray(probs, dtype=float), np.asarray(negatives, dtype=bool)
    if name == "step_auroc":
        return auroc(1 - probs, negatives)
    if name == "step_f1":
        return f1(probs < threshold, negatives)["f1"]
    if name not in PROMOTION_METRICS:
        raise ValueError(f"unknown step figure {name!r}; known: {', '.join(PROMOTION_METRICS)}")
    if not len(probs):
        return None
    if name == "accuracy":
        from sklearn.metrics import accuracy_score

        return float(accuracy_score(negatives, probs < threshold))
    from sklearn.metrics import log_loss as sk_log_loss

    # P(correct) is the probability of class 1 (a correct step). scikit-learn clips it to
    # [eps, 1 - eps], eps the float's precision (2.2e-16): a step scored exactly 1.0 or 0.0
    # and wrong costs -log(eps) = 36.0.
    return float(sk_log_loss((~negatives).astype(int), probs, labels=[0, 1]))


def earliest_error(step_scores, *, threshold=0.5):
    """Index of the first step with P(correct) < threshold, -1 when none (unscored steps pass)."""
    for index, p in enumerate(step_scores):
        if p is not None and p < threshold:
            return index
    return -1


def processbench(predicted, labels):
    """ProcessBench: accuracy on erroneous and on correct solutions, and their harmonic mean.

    ``predicted`` and ``labels`` are earliest-error indices (-1: no error). A prediction on an
    erroneous solution counts only when it names exactly the earliest wrong step.
    """
    erroneous = [(p, t) for p, t in zip(predicted, labels) if t != -1]
    correct = [(p, t) for p, t in zip(predicted, labels) if t == -1]
    error_acc = sum(p == t for p, t in erroneous) / len(erroneous) if erroneous else None
    correct_acc = sum(p == -1 for p, _ in correct) / len(correct) if correct else None
    if error_acc is None or correct_acc is None:
        score = None
    elif error_acc + correct_acc == 0:
        score = 0.0
    else:
        score = 2 * error_acc * correct_acc / (error_acc + correct_acc)
    return {"error_accuracy": error_acc, "correct_accuracy": correct_acc, "f1": score,
            "erroneous": len(erroneous), "correct": len(correct)}


def best_of_n(candidates):
    """Best-of-N by PRM score against majority vote, over candidates grouped by problem.

    ``candidates`` are dicts with ``problem``, ``score`` (None sorts lowest), ``answer`` and
    ``is_correct``. Per problem: best-of-N takes the highest-scored candidate; majority vote the
    most frequent answer (ties: the answer seen first); weighted vote the answer with the largest
    sum of scores. Each method scores 1 when the candidate it picks is correct.
    """
    groups = defaultdict(list)
    for candidate in candidates:
        groups[candidate["problem"]].append(candidate)
    wins = Counter()
    for group in groups.values():
        best = max(group, key=lambda c: -1.0 if c["score"] is None else c["score"])
        wins["best_of_n"] += bool(best["is_correct"])
        wins["majority_vote"] += _answer_is_correct(group, _most(group, lambda c: 1.0))
        wins["weighted_vote"] += _answer_is_correct(group, _most(group, lambda c: c["score"] or 0.0))
        wins["any_correct"] += any(c["is_correct"] for c in group)
    n = len(groups)
    result = {name: wins[name] / n if n else None for name in ("best_of_n", "majority_vote", "weighted_vote", "any_correct")}
    result["problems"] = n
    result["mean_candidates"] = len(candidates) / n if n else None
    return result


def _most(group, weight):
    totals = {}
    for candidate in group:  # dicts keep insertion order: ties go to the answer seen first
        totals[candidate["answer"]] = totals.get(candidate["answer"], 0.0) + weight(candidate)
    return max(totals, key=totals.get)


def _answer_is_correct(group, answer):
    return any(c["is_correct"] for c in group if c["answer"] == answer)


def roc_curve(scores, positives):
    """ROC points ``(false positive rate, true positive rate)`` from the strictest cut to the loosest.

    One point per distinct score (ties move together), starting at (0, 0) and ending at (1, 1);
    an empty list when one class is absent.
    """
    if _one_class(positives):
        return []
    from sklearn.metrics import roc_curve as sk_roc_curve

    fpr, tpr, _ = sk_roc_curve([bool(p) for p in positives], scores, drop_intermediate=False)
    return [(float(x), float(y)) for x, y in zip(fpr, tpr)]


def calibration(probs, outcomes, *, bins=10):
    """Reliability table: predicted P(correct) in ``bins`` equal-width bins against the observed share.

    ``outcomes`` are True where the step was in fact correct (for PRM800K: not rated -1, or per
    the neutral policy). The bins are scikit-learn's (``calibration_curve``, uniform): each holds
    the probabilities above its ``low`` up to and including its ``high``, the first 0.0 too.
    Returns the bins (``low``, ``high``, ``count``, ``mean_predicted``, ``observed``; the last two
    None when the bin is empty) and the expected calibration error, the count-weighted mean gap.
    """
    if bins < 1:
        raise ValueError("bins must be at least 1")
    import numpy as np

    probs = np.asarray(probs, dtype=float)
    edges = np.linspace(0.0, 1.0, bins + 1)
    # calibration_curve leaves the empty bins out and returns no counts: the counts, binned as it bins.
    counts = np.bincount(np.searchsorted(edges[1:-1], probs), minlength=bins)
    means = iter(())
    if len(probs):
        from sklearn.calibration import calibration_curve

        observed, predicted = calibration_curve(np.asarray(outcomes, dtype=int), probs, n_bins=bins, strategy="uniform")
        means = iter(zip(predicted.tolist(), observed.tolist()))
    table = []
    for index, n in enumerate(counts.tolist()):
        mean_p, share = next(means) if n else (None, None)
        table.append({"low": index / bins, "high": (index + 1) / bins, "count": n,
                      "mean_predicted": mean_p, "observed": share})
    total = int(counts.sum())
    gap = sum(row["count"] * abs(row["mean_predicted"] - row["observed"]) for row in table if row["count"])
    return {"bins": table, "ece": gap / total if total else None, "steps": total}


def processbench_thresholds(step_scores, labels, *, max_candidates=512):
    """ProcessBench figures at every useful threshold, the best (highest F1) first among equals.

    Candidate thresholds are the distinct step scores (a step is called wrong when its score is
    below the threshold) plus one above the largest, thinned to ``max_candidates`` quantiles.
    Returns a list of ``{"threshold", **processbench(...)}`` in increasing threshold order.
    """
    values = sorted({p for scores in step_scores for p in scores if p is not None})
    if not values:
        candidates = [0.5]
    else:
        candidates = values + [values[-1] + 1e-9 if values[-1] < 1 else values[-1] + 1e-6]
    if len(candidates) > max_candidates:
        last = len(candidates) - 1
        candidates = [candidates[round(k * last / (max_candidates - 1))] for k in range(max_candidates)]
    return [{"threshold": t, **processbench([earliest_error(s, threshold=t) for s in step_scores], labels)}
            for t in candidates]


def best_threshold(table):
    """The row of ``processbench_thresholds`` with the highest F1 (ties: the lowest threshold)."""
    scored = [row for row in table if row["f1"] is not None]
    if not scored:
        raise ValueError("no threshold gives an F1: the validation items need both erroneous and correct solutions")
    return max(scored, key=lambda row: (row["f1"], -row["threshold"]))


def expected_pick(pool, key):
    """Chance that picking the candidate of ``pool`` with the highest ``key`` picks a correct one.

    Ties are broken uniformly at random, so the result is the share of correct candidates among
    the tied best (an expectation, no random draw). ``key`` returning None sorts lowest.
    """
    values = [key(c) for c in pool]
    values = [float("-inf") if v is None else v for v in values]
    top = max(values)
    tied = [c for c, v in zip(pool, values) if v == top]
    return sum(bool(c["is_correct"]) for c in tied) / len(tied)


def expected_vote(pool, weight=lambda candidate: 1.0):
    """Chance that voting over final answers (each candidate adds ``weight``) lands on a correct answer.

    The answer with the largest total wins; ties are broken uniformly at random. An answer counts
    as correct when any candidate giving it is graded correct.
    """
    totals, correct = {}, {}
    for candidate in pool:
        answer = candidate.get("answer")
        totals[answer] = totals.get(answer, 0.0) + (weight(candidate) or 0.0)
        correct[answer] = correct.get(answer, False) or bool(candidate["is_correct"])
    top = max(totals.values())
    tied = [answer for answer, total in totals.items() if total == top]
    return sum(correct[answer] for answer in tied) / len(tied)
