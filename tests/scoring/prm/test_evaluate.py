"""Evaluation protocols on hand-computed examples: calibration bins, ROC, ProcessBench with a threshold
chosen on validation, best-of-N over subsets of a tiny pool with known answers."""
import pytest

from scoring.prm.evaluate import (
    best_of_n_protocol,
    processbench_protocol,
    score_records,
    step_labels,
    steps_protocol,
)
from scoring.prm.metrics import (
    auroc,
    calibration,
    expected_pick,
    expected_vote,
    roc_curve,
)


def test_calibration_bins_by_hand():
    table = calibration([0.05, 0.15, 0.12, 0.95, 1.0], [False, True, False, True, True], bins=10)
    bins = table["bins"]
    assert [b["count"] for b in bins] == [1, 2, 0, 0, 0, 0, 0, 0, 0, 2]  # 1.0 lands in the last bin
    assert bins[1]["mean_predicted"] == pytest.approx(0.135) and bins[1]["observed"] == 0.5
    assert bins[9]["mean_predicted"] == pytest.approx(0.975) and bins[9]["observed"] == 1.0
    assert bins[4]["mean_predicted"] is None and bins[4]["observed"] is None
    assert table["ece"] == pytest.approx((0.05 + 2 * 0.365 + 2 * 0.025) / 5)
    assert calibration([0.3], [True], bins=2)["bins"][0] == {"low": 0.0, "high": 0.5, "count": 1, "mean_predicted": 0.3, "observed": 1.0}


def test_calibration_bins_hold_their_upper_edge_and_the_first_holds_zero():
    table = calibration([0.0, 0.5, 0.75, 1.0], [False, True, False, True], bins=2)
    assert [b["count"] for b in table["bins"]] == [2, 2]  # 0.5 closes the first bin, as scikit-learn bins
    assert table["bins"][0]["mean_predicted"] == 0.25 and table["bins"][1]["observed"] == 0.5
    assert calibration([], [], bins=3) == {"bins": [
        {"low": k / 3, "high": (k + 1) / 3, "count": 0, "mean_predicted": None, "observed": None} for k in range(3)],
        "ece": None, "steps": 0}


def test_roc_curve_by_hand_and_its_area_is_the_auroc():
    scores, positives = [0.9, 0.8, 0.8, 0.1], [True, False, True, False]
    points = roc_curve(scores, positives)
    assert points == [(0.0, 0.0), (0.0, 0.5), (0.5, 1.0), (1.0, 1.0)]  # the tie at 0.8 moves both at once
    area = sum((x2 - x1) * (y1 + y2) / 2 for (x1, y1), (x2, y2) in zip(points, points[1:]))
    assert area == pytest.approx(auroc(scores, positives)) == pytest.approx(0.875)
    assert roc_curve([0.1, 0.2], [True, True]) == []


def test_steps_protocol_reads_processbench_labels():
    assert step_labels({"steps": ["a", "b", "c"], "label": 1}) == [1, 0, None]
    assert step_labels({"steps": ["a", "b"], "label": -1}) == [1, 1]
    records = [{"steps": ["a", "b", "c"], "label": 1, "step_scores": [0.9, 0.2, 0.1]},
               {"steps": ["a", "b"], "labels": [1, None], "step_scores": [0.7, 0.1]}]
    section = steps_protocol(records, bins=2)
    assert section["steps"] == 3 and section["negative_steps"] == 1 and section["auroc"] == 1.0
    assert [b["count"] for b in section["calibration"]["bins"]] == [1, 2]  # 0.2 | 0.9, 0.7


def _item(problem, label, scores):
    return {"problem": problem, "steps": [f"s{k}" for k in range(len(scores))], "label": label, "step_scores": scores}


def test_processbench_threshold_is_chosen_on_validation_and_applied_to_test():
    validation = [_item("A", 1, [0.9, 0.2, 0.1]), _item("B", -1, [0.9, 0.6, 0.7])]
    test = [_item("C", 0, [0.5, 0.9]),          # at 0.6: earliest error 0, right
            _item("D", 2, [0.9, 0.55, 0.3]),    # at 0.6: 1, wrong (the true one is 2)
            _item("E", -1, [0.7, 0.8]),         # at 0.6: none, right
            _item("F", -1, [0.65, 0.59])]       # at 0.6: 1, wrong (no error)
    section = processbench_protocol(test, validation, fixed_threshold=0.5)
    # the lowest threshold with F1 1 on validation: at 0.2 item A's earliest error would be step 2
    assert section["threshold"] == 0.6
    assert section["validation"]["f1"] == 1.0
    assert section["test"]["error_accuracy"] == 0.5 and section["test"]["correct_accuracy"] == 0.5
    assert section["test"]["f1"] == pytest.approx(0.5)
    fixed = section["test_at_fixed_threshold"]  # at 0.5: C none (0.5 is not below), D 2, E and F none
    assert fixed["error_accuracy"] == 0.5 and fixed["correct_accuracy"] == 1.0 and fixed["f1"] == pytest.approx(2 / 3)
    assert section["test_oracle_threshold"]["f1"] >= section["test"]["f1"]


def _candidate(problem, answer, correct, score, last):
    return {"problem": problem, "answer": answer, "is_correct": correct, "score": score, "step_scores": [0.99, last],
            "orm": 1 - last}


POOL = [_candidate("P1", "5", False, 0.9, 0.2), _candidate("P1", "7", True, 0.6, 0.95),
        _candidate("P1", "5", False, 0.1, 0.3), _candidate("P1", "7", True, 0.5, 0.4),
        _candidate("P2", "3", True, 0.4, 0.5), _candidate("P2", "3", True, 0.3, 0.6)]


def test_ties_are_expectations():
    assert expected_vote(POOL[:4]) == 0.5  # two "5", two "7": a coin flip
    assert expected_vote(POOL[:4], lambda c: c["score"]) == 1.0  # 5: 1.0 against 7: 1.1
    assert expected_pick([POOL[0], {**POOL[1], "score": 0.9}], lambda c: c["score"]) == 0.5


def test_best_of_n_over_all_subsets_by_hand():
    section = best_of_n_protocol(POOL, samples=100)
    assert section["ns"] == [1, 2, 4] and section["problems"] == [2, 2, 1] and section["subsets"] == [6, 7, 1]
    solved = section["solved"]
    # N=1: every method picks the one candidate; P1 half right, P2 right
    assert all(solved[m][0] == pytest.approx(0.75) for m in solved)
    # N=2, P1's six pairs: the PRM is right on {2,3} {2,4} {3,4}; the last step on all but {1,3};
    # majority: ties on four pairs, {1,3} wrong, {2,4} right; P2 always right
    assert solved["prm"][1] == pytest.approx((3 / 6 + 1) / 2)
    assert solved["outcome"][1] == pytest.approx((5 / 6 + 1) / 2)
    assert solved["majority_vote"][1] == pytest.approx((3 / 6 + 1) / 2)
    assert solved["oracle"][1] == pytest.approx((5 / 6 + 1) / 2)
    # N=4, P1 only: the PRM's favourite (0.9) is wrong, the last step's (0.95) right, the vote a tie
    assert solved["prm"][2] == 0 and solved["outcome"][2] == 1 and solved["majority_vote"][2] == 0.5
    assert solved["prm_weighted_vote"][2] == 1 and solved["oracle"][2] == 1 and solved["random"][2] == 0.5
    by_field = best_of_n_protocol(POOL, ns=[4], outcome="orm")  # an ORM-style score carried by the records
    assert by_field["solved"]["outcome"] == [0.0]  # orm = 1 - last step: candidate 1 (0.8) wins, and it is wrong
    with pytest.raises(ValueError, match="outcome field"):
        best_of_n_protocol(POOL, outcome="missing")


def test_best_of_n_draws_random_subsets_when_there_are_too_many():
    first = best_of_n_protocol(POOL, ns=[2], samples=3, seed=5)
    assert first["subsets"] == [3 + 1]  # P1: 3 drawn of 6; P2: its only pair
    assert first == best_of_n_protocol(POOL, ns=[2], samples=3, seed=5)
    drawn_right = (first["solved"]["oracle"][0] * 2 - 1) * 3  # P1's share over its 3 draws, times 3
    assert drawn_right == pytest.approx(round(drawn_right)) and 0 <= round(drawn_right) <= 3


def test_score_records_with_a_baseline_and_without_scores():
    records = score_records([{"problem": "p", "steps": ["a" * 200, "b", "c"]}], baseline="position", aggregation="min")
    assert records[0]["step_scores"] == [1 / 2, 1 / 3, 1 / 4] and records[0]["score"] == 1 / 4
    assert score_records([{"problem": "p", "steps": ["a" * 200]}], baseline="length")[0]["step_scores"] == [0.5]
    with pytest.raises(ValueError, match="no step_scores"):
        score_records([{"problem": "p", "steps": ["a"]}])
