"""One-pass batched scoring and solution aggregation."""
import math

import pytest
import torch

from scoring.prm.inputs import collate, encode, encode_solution, pad_id
from scoring.prm.model import CORRECT, new_prm
from scoring.prm.scorer import BATCHING, aggregate, batching, score_solutions


def test_aggregations_by_hand():
    probs = [0.9, 0.5, 0.8]
    assert aggregate(probs, "prod") == pytest.approx(0.36)
    assert aggregate(probs, "min") == 0.5
    assert aggregate(probs, "last") == 0.8
    assert aggregate(probs, "mean") == pytest.approx(2.2 / 3)
    assert aggregate([0.9, None, None], "last") == 0.9  # unscored steps are skipped
    assert aggregate([None], "prod") is None
    with pytest.raises(ValueError, match="unknown aggregation"):
        aggregate(probs, "max")


@pytest.fixture(scope="module")
def prm(tiny_bases):
    return new_prm(tiny_bases["bert"], device="cpu", seed=1)


def test_batched_scores_equal_step_by_step_scores(prm, processbench_items):
    solutions = [(item["problem"], item["steps"]) for item in processbench_items[:5]]
    batched = score_solutions(prm, solutions, max_tokens=1024, max_batch=3)
    for (problem, steps), result in zip(solutions, batched):
        assert len(result.step_scores) == len(steps) and result.unscored_steps == 0
        for k in range(len(steps)):
            # the naive way: one forward pass per prefix, read the last separator
            row = encode(prm.tokenizer, problem, steps[: k + 1], step_token_id=prm.step_token_id, max_length=prm.max_length)
            batch = collate([row], pad_token_id=pad_id(prm.tokenizer))
            with torch.inference_mode():
                logits = prm(batch["input_ids"], batch["attention_mask"])
            naive = torch.softmax(logits[0, row.step_positions[-1]], -1)[CORRECT].item()
            assert result.step_scores[k] == pytest.approx(naive, abs=1e-5)
        assert result.score == pytest.approx(math.prod(result.step_scores), rel=1e-6)


def test_batch_sizes_default_by_device_and_give_the_same_scores(prm, processbench_items):
    assert batching("cpu") == BATCHING["cpu"] and batching("cuda:0") == BATCHING["cuda"]
    assert batching("cpu", max_tokens=100) == (100, BATCHING["cpu"][1])
    solutions = [(item["problem"], item["steps"]) for item in processbench_items[:6]]
    default = score_solutions(prm, solutions)
    one_by_one = score_solutions(prm, solutions, max_tokens=1, max_batch=1)
    for a, b in zip(default, one_by_one):
        assert a.step_scores == pytest.approx(b.step_scores, abs=1e-5)


def test_steps_past_the_context_are_reported_unscored(tiny_bases, processbench_items):
    item = max(processbench_items, key=lambda i: len(i["steps"]))
    full = score_solutions(new_prm(tiny_bases["bert"], device="cpu", seed=1), [(item["problem"], item["steps"])])[0]
    short = new_prm(tiny_bases["bert"], device="cpu", seed=1, max_length=160, overflow="unscored")
    result = score_solutions(short, [(item["problem"], item["steps"])], aggregation="min")[0]
    n = len(item["steps"]) - result.unscored_steps
    assert 0 < n < len(item["steps"])
    assert result.step_scores[n:] == [None] * result.unscored_steps
    assert result.step_scores[:n] == pytest.approx(full.step_scores[:n], abs=1e-5)
    assert result.score == min(result.step_scores[:n])
    # the scorer's option overrides the model's own way
    windowed = score_solutions(short, [(item["problem"], item["steps"])], overflow="window")[0]
    assert windowed.unscored_steps < result.unscored_steps
    assert windowed.step_scores[:n] == pytest.approx(result.step_scores[:n], abs=1e-5)


def test_a_window_scores_the_whole_solution_as_the_naive_way_would(tiny_bases, processbench_items):
    """Long solutions batched with short ones: each step scores as its prefix alone, through its window."""
    prm = new_prm(tiny_bases["bert"], device="cpu", seed=1, max_length=160)
    assert prm.overflow == "window"
    solutions = [(item["problem"], item["steps"]) for item in processbench_items]
    results = score_solutions(prm, solutions, max_tokens=800, max_batch=4)
    windowed = 0
    for (problem, steps), result in zip(solutions, results):
        rows = encode_solution(prm.tokenizer, problem, steps, step_token_id=prm.step_token_id, max_length=160)
        windowed += len(rows) > 1
        assert result.unscored_steps == sum(s is None for s in result.step_scores)
        for k in range(len(steps)):
            row = encode_solution(prm.tokenizer, problem, steps[: k + 1], step_token_id=prm.step_token_id,
                                  max_length=160)[-1]
            if row.first_step + row.n_scored <= k:
                assert result.step_scores[k] is None  # the step alone is too long for the context
                continue
            batch = collate([row], pad_token_id=pad_id(prm.tokenizer))
            with torch.inference_mode():
                logits = prm(batch["input_ids"], batch["attention_mask"])
            naive = torch.softmax(logits[0, row.step_positions[-1]], -1)[CORRECT].item()
            assert result.step_scores[k] == pytest.approx(naive, abs=1e-5)
    assert windowed >= 2


def test_scoring_leaves_the_model_as_it_found_it(prm):
    prm.train()
    score_solutions(prm, [("1+1?", ["2"])])
    assert prm.training
    prm.eval()


def test_mc_dropout_measures_disagreement_only_where_there_is_dropout(tiny_bases, processbench_items):
    """With dropout the passes disagree (uncertainty > 0); at dropout 0 they agree exactly; the score
    stays that of the plain pass and the model is left as it was."""
    solutions = [(item["problem"], item["steps"]) for item in processbench_items[:3]]
    prm = new_prm(tiny_bases["bert"], device="cpu", seed=1)
    dropouts = [m for m in prm.modules() if isinstance(m, torch.nn.Dropout)]
    assert dropouts and all(m.p > 0 for m in dropouts)
    plain = score_solutions(prm, solutions)
    measured = score_solutions(prm, solutions, dropout_passes=4)
    assert not prm.training and not any(m.training for m in dropouts)
    for a, b in zip(plain, measured):
        assert a.uncertainty is None and a.step_uncertainty is None
        assert b.step_scores == pytest.approx(a.step_scores, abs=1e-6)
        assert len(b.step_uncertainty) == len(b.step_scores)
        assert b.uncertainty == max(b.step_uncertainty) > 0
        assert "uncertainty" not in a.as_dict() and b.as_dict()["uncertainty"] == b.uncertainty
    for m in dropouts:
        m.p = 0.0
    for result in score_solutions(prm, solutions, dropout_passes=4):
        assert result.uncertainty == 0 and set(result.step_uncertainty) == {0}


def test_uncertainty_skips_steps_a_pass_could_not_read(tiny_bases, processbench_items):
    item = max(processbench_items, key=lambda i: len(i["steps"]))
    short = new_prm(tiny_bases["bert"], device="cpu", seed=1, max_length=160, overflow="unscored")
    result = score_solutions(short, [(item["problem"], item["steps"])], dropout_passes=2)[0]
    n = len(item["steps"]) - result.unscored_steps
    assert result.step_uncertainty[n:] == [None] * result.unscored_steps
    assert result.uncertainty == max(result.step_uncertainty[:n])
