"""The promotion gate (scoring.prm.gate) on synthetic champions and challengers of known quality.

Each held-out problem has labelled steps; a model scores a step sigmoid(skill * (+1 right, -1
wrong) + the problem's shared difficulty + its own noise), so a higher skill ranks and
separates wrong steps better. Both models see the same shared difficulty, as two PRMs on the
same steps do. The seeds are fixed: every decision below is deterministic.
"""
import json

import numpy as np
import pytest

from scoring.prm import gate
from scoring.prm.metrics import step_figure

# The defaults (50 problems, 95% confidence, guard tolerance 0.02), with fewer resamples to be quick;
# one test below judges with the default 1000.
RULES = gate.Rules(resamples=300)


def sigmoid(x):
    return 1 / (1 + np.exp(-x))


def held_out(champion_skill, challenger_skill, *, problems=60, steps=12, seed=0, challenger=None):
    """``problems`` Problems scored by a champion and a challenger of the given skills.

    ``challenger`` (optional) maps the challenger's P(correct) array to another one, to make it
    overconfident or shifted while it ranks the steps the same.
    """
    rng = np.random.default_rng(seed)
    made = []
    for _ in range(problems):
        negatives = rng.random(steps) < 0.3
        sign = np.where(negatives, -1.0, 1.0)
        shared = rng.normal(0, 1, steps)
        new = sigmoid(challenger_skill * sign + shared + rng.normal(0, 1, steps))
        old = sigmoid(champion_skill * sign + shared + rng.normal(0, 1, steps))
        made.append(gate.Problem(negatives, challenger(new) if challenger else new, old))
    return made


def test_the_same_model_is_not_promoted_and_its_paired_differences_are_all_zero():
    problems = held_out(1.0, 1.0)
    same = [gate.Problem(p.negatives, p.champion.copy(), p.champion) for p in problems]
    # Paired: both models are scored on the same draw of problems, so a model against itself
    # differs by exactly 0 on every resample (an unpaired bootstrap would not).
    assert not gate.paired_bootstrap(same, "step_auroc", resamples=50).any()
    decision = gate.decide(same, "step_auroc", RULES)
    assert decision["decision"] == "reject" and decision["difference"] == 0.0
    assert decision["interval"] == [0.0, None] and decision["reason"].startswith("Not better beyond noise")


def test_an_equal_challenger_higher_by_chance_is_not_promoted():
    # Same skill: its AUROC comes out higher on these 60 problems, which the old rule (greater
    # wins) promoted; the interval of the difference reaches below 0.
    decision = gate.decide(held_out(1.0, 1.0, seed=1), "step_auroc", RULES)
    assert decision["challenger"] > decision["champion"]
    assert decision["interval"][0] < 0 < decision["difference"]
    assert decision["decision"] == "reject" and "Not better beyond noise" in decision["reason"]


def test_a_slightly_better_challenger_within_the_noise_is_not_promoted():
    decision = gate.decide(held_out(1.0, 1.05, seed=4), "step_auroc", RULES)
    assert decision["challenger"] > decision["champion"] and decision["interval"][0] < 0
    assert decision["decision"] == "reject"


def test_a_clearly_better_challenger_is_promoted_with_its_figures_and_interval():
    decision = gate.decide(held_out(1.0, 2.0), "step_auroc", gate.Rules())
    assert decision["decision"] == "promote", decision["reason"]
    assert decision["challenger"] - decision["champion"] == pytest.approx(decision["difference"])
    assert 0 < decision["interval"][0] < decision["difference"] and decision["interval"][1] is None
    assert (decision["problems"], decision["steps"], decision["resamples"]) == (60, 720, gate.RESAMPLES)
    assert decision["resamples_defined"] == gate.RESAMPLES and decision["confidence"] == 0.95
    for pair in decision["guards"].values():
        assert pair["challenger"] < pair["champion"]  # better calibrated too
    assert decision["reason"].startswith("Promoted: step_auroc ") and "95% confidence" in decision["reason"]
    json.dumps(decision)  # it goes on the checkpoint as is


def test_a_better_ranking_but_overconfident_challenger_is_refused_on_its_log_loss():
    # Same ranking as a clearly better model, so the same AUROC gain, but pushed towards 0 and 1.
    overconfident = lambda p: sigmoid(10 * np.log(p / (1 - p)))  # noqa: E731
    decision = gate.decide(held_out(1.0, 1.4, challenger=overconfident), "step_auroc", RULES)
    assert decision["interval"][0] > 0  # the metric alone would promote it
    loss = decision["guards"]["log_loss"]
    assert loss["challenger"] > loss["champion"] + RULES.guard_tolerance
    assert decision["decision"] == "reject" and "(log_loss)" in decision["reason"]
    assert "0.02" in decision["reason"]


def test_a_better_ranking_but_miscalibrated_challenger_is_refused_on_its_calibration_error():
    # A clearly better ranking whose probabilities are squeezed towards the middle: its log loss
    # is better than the champion's, its calibration error is not.
    timid = lambda p: 0.2 + 0.6 * p  # noqa: E731
    decision = gate.decide(held_out(1.0, 2.0, challenger=timid), "step_auroc", RULES)
    assert decision["interval"][0] > 0
    loss, ece = decision["guards"]["log_loss"], decision["guards"]["ece"]
    assert loss["challenger"] <= loss["champion"] + RULES.guard_tolerance
    assert ece["challenger"] > ece["champion"] + RULES.guard_tolerance
    assert decision["decision"] == "reject" and "(ece)" in decision["reason"]


def test_a_looser_tolerance_lets_the_guard_pass():
    overconfident = lambda p: sigmoid(10 * np.log(p / (1 - p)))  # noqa: E731
    rules = gate.Rules(guard_tolerance=1.0, resamples=300)
    assert gate.decide(held_out(1.0, 1.4, challenger=overconfident), "step_auroc", rules)["decision"] == "promote"


def test_too_few_problems_are_not_judged_and_say_how_many():
    decision = gate.decide(held_out(1.0, 3.0, problems=20), "step_auroc", RULES)
    assert decision["decision"] == "reject" and decision["resamples"] == 0 and decision["interval"] == [None, None]
    assert decision["reason"].startswith("Not enough held-out data to judge: 20 held-out problems (240 labelled steps)")
    assert "at least 50" in decision["reason"]
    assert decision["challenger"] > decision["champion"]  # the figures are still there to read
    assert gate.decide(held_out(1.0, 3.0, problems=20), "step_auroc", gate.Rules(min_problems=20, resamples=300))["decision"] == "promote"


def test_a_lower_is_better_metric_needs_the_upper_bound_below_zero():
    better = gate.decide(held_out(1.0, 2.0), "log_loss", RULES)
    assert better["decision"] == "promote" and better["higher_is_better"] is False
    assert better["interval"][0] is None and better["interval"][1] < 0
    worse = gate.decide(held_out(2.0, 1.0), "log_loss", RULES)
    assert worse["decision"] == "reject" and worse["interval"][1] > 0


def test_a_lower_confidence_asks_less():
    problems = held_out(1.0, 1.0, seed=1)
    assert gate.decide(problems, "step_auroc", RULES)["decision"] == "reject"
    assert gate.decide(problems, "step_auroc", gate.Rules(confidence=0.5, resamples=300))["decision"] == "promote"


def test_the_decision_is_the_same_every_time():
    problems = held_out(1.0, 1.2, seed=4)
    assert gate.decide(problems, "step_f1", RULES) == gate.decide(problems, "step_f1", RULES)


def test_a_metric_undefined_on_the_held_out_set_is_refused():
    all_right = [gate.Problem(np.zeros(3, dtype=bool), np.full(3, 0.9), np.full(3, 0.8)) for _ in range(60)]
    decision = gate.decide(all_right, "step_auroc", RULES)
    assert decision["decision"] == "reject" and "undefined" in decision["reason"]
    with pytest.raises(ValueError, match="unknown promotion metric"):
        gate.decide(all_right, "auroc", RULES)


def test_by_problem_groups_solutions_and_keeps_the_steps_both_models_scored():
    problems = gate.by_problem(
        ["p", "q", "p"], [[1, 0, None], [1], [0, 1]],
        [[0.9, 0.2, 0.5], [None], [0.3, 0.8]], [[0.8, 0.4, 0.5], [0.7], [0.1, None]])
    assert len(problems) == 1  # q's only step is unscored by the challenger
    (p,) = problems
    assert p.negatives.tolist() == [False, True, True]
    assert p.challenger.tolist() == [0.9, 0.2, 0.3] and p.champion.tolist() == [0.8, 0.4, 0.1]


def test_the_full_set_figures_are_the_metrics_of_all_held_out_steps():
    problems = held_out(1.0, 2.0)
    decision = gate.decide(problems, "accuracy", gate.Rules(resamples=20))
    negatives = np.concatenate([p.negatives for p in problems])
    assert decision["champion"] == step_figure("accuracy", np.concatenate([p.champion for p in problems]), negatives)
