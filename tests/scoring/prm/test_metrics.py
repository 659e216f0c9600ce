"""Metrics against hand-computed figures and scikit-learn."""
import math
import random

import pytest
from sklearn.metrics import f1_score, roc_auc_score

from scoring.prm.metrics import (
    auroc,
    best_of_n,
    earliest_error,
    f1,
    processbench,
    step_metrics,
)


def test_auroc_by_hand_and_against_sklearn():
    # positives 0.8, 0.4; negatives 0.6, 0.4, 0.2: 0.8 wins 3 pairs, 0.4 wins 1 and ties 1 -> 4.5 / 6
    assert auroc([0.8, 0.4, 0.6, 0.4, 0.2], [True, True, False, False, False]) == pytest.approx(4.5 / 6)
    assert auroc([0.1, 0.2], [True, True]) is None
    rng = random.Random(0)
    for _ in range(20):
        scores = [rng.choice([0.1, 0.2, 0.3, rng.random()]) for _ in range(60)]
        labels = [rng.random() < 0.3 for _ in range(60)]
        assert auroc(scores, labels) == pytest.approx(roc_auc_score(labels, scores))


def test_f1_by_hand_and_against_sklearn():
    predicted = [True, True, False, False, True]
    actual = [True, False, True, False, True]
    # tp 2, fp 1, fn 1: precision 2/3, recall 2/3
    assert f1(predicted, actual) == pytest.approx({"f1": 2 / 3, "precision": 2 / 3, "recall": 2 / 3})
    assert f1(predicted, actual)["f1"] == pytest.approx(f1_score(actual, predicted))
    assert f1([False], [False])["f1"] == 0.0


def test_step_metrics_count_incorrect_steps_as_positives():
    scores = [[0.9, 0.2, None], [0.7, 0.6]]
    labels = [[1, 0, 0], [1, None]]
    result = step_metrics(scores, labels, threshold=0.5)
    assert result["steps"] == 3 and result["negative_steps"] == 1 and result["unscored_labelled_steps"] == 1
    assert result["auroc"] == 1.0 and result["f1_negative"] == 1.0 and result["accuracy"] == 1.0
    assert step_metrics(scores, labels, threshold=0.8)["f1_negative"] == pytest.approx(2 / 3)  # 0.7 flagged too


def test_step_accuracy_and_log_loss_by_hand():
    result = step_metrics([[0.9, 0.2, 0.6], [0.4]], [[1, 0, 0], [1]])
    assert result["accuracy"] == 0.5  # 0.9 and 0.2 right; 0.6 (wrong step kept) and 0.4 (right step flagged) not
    by_hand = -(math.log(0.9) + math.log(0.8) + math.log(0.4) + math.log(0.4)) / 4
    assert result["log_loss"] == pytest.approx(by_hand, rel=1e-12)
    assert step_metrics([[1.0]], [[1]])["log_loss"] == pytest.approx(0.0, abs=1e-12)
    # Certain and wrong: scikit-learn clips at the float's precision, not at 0.
    assert step_metrics([[1.0]], [[0]])["log_loss"] == pytest.approx(-math.log(2.0 ** -52))
    empty = step_metrics([[None]], [[1]])
    assert empty["accuracy"] is None and empty["log_loss"] is None and empty["steps"] == 0


def test_processbench_by_hand():
    assert earliest_error([0.9, 0.8, 0.3, 0.1]) == 2
    assert earliest_error([0.9, None, 0.6]) == -1
    predicted = [2, 1, -1, -1, 0]
    labels = [2, 3, 1, -1, -1]
    result = processbench(predicted, labels)
    assert result["error_accuracy"] == pytest.approx(1 / 3)  # only the first names the right step
    assert result["correct_accuracy"] == pytest.approx(1 / 2)
    assert result["f1"] == pytest.approx(2 * (1 / 3) * (1 / 2) / (1 / 3 + 1 / 2))
    assert processbench([-1], [-1])["f1"] is None


def test_best_of_n_against_majority_vote_by_hand():
    def c(problem, answer, score, correct):
        return {"problem": problem, "answer": answer, "score": score, "is_correct": correct}

    candidates = [
        # p1: the majority (5) is wrong; the PRM's favourite (7) is right
        c("p1", "5", 0.1, False), c("p1", "5", 0.2, False), c("p1", "7", 0.9, True),
        # p2: the majority is right; the PRM prefers a wrong one
        c("p2", "3", 0.3, True), c("p2", "3", 0.3, True), c("p2", "4", 0.8, False),
        # p3: nobody is right
        c("p3", "1", None, False),
    ]
    result = best_of_n(candidates)
    assert result["best_of_n"] == pytest.approx(1 / 3)
    assert result["majority_vote"] == pytest.approx(1 / 3)
    assert result["weighted_vote"] == pytest.approx(1 / 3)  # p1: 0.9 > 0.3; p2: 0.6 < 0.8
    assert result["any_correct"] == pytest.approx(2 / 3)
    assert result["problems"] == 3
