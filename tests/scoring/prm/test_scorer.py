"""One-pass batched scoring and solution aggregation."""
import math

import pytest
import torch

from scoring.prm.inputs import collate, encode, encode_solution, pad_id
from scoring.prm.model import CORRECT, new_prm
from scoring.prm.scorer import (
    BATCHING,
    DROPOUT_SEED,
    HEAD_DROPOUT,
    aggregate,
    batching,
    has_step_head,
    keep_masks,
    score_solutions,
)


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


def _no_dropout(prm):
    """Every dropout probability of ``prm`` set to 0, as most decoder PRMs ship; returns its dropout layers."""
    layers = [m for m in prm.modules() if isinstance(m, torch.nn.Dropout)]
    for m in layers:
        m.p = 0.0
    for m in prm.modules():
        if isinstance(getattr(m, "dropout", None), float):
            m.dropout = 0.0
    return layers


def test_head_dropout_measures_disagreement_at_config_dropout_0(tiny_bases, processbench_items):
    """Dropout on the step head's input features: the passes disagree though every dropout of the
    model is 0; the scores stay those of a plain pass; the model is left in eval mode, the caller's
    random state untouched; the same seed gives the same uncertainties, another seed others."""
    solutions = [(item["problem"], item["steps"]) for item in processbench_items[:3]]
    prm = new_prm(tiny_bases["bert"], device="cpu", seed=1)
    dropouts = _no_dropout(prm)
    assert dropouts and has_step_head(prm)
    plain = score_solutions(prm, solutions)
    rng = torch.get_rng_state()
    measured = score_solutions(prm, solutions, dropout_passes=4)
    assert torch.equal(torch.get_rng_state(), rng)
    assert not prm.training and not any(m.training for m in prm.modules())
    for a, b in zip(plain, measured):
        assert a.uncertainty is None and a.step_uncertainty is None
        assert b.step_scores == a.step_scores
        assert len(b.step_uncertainty) == len(b.step_scores)
        assert b.uncertainty == max(b.step_uncertainty) > 0
        assert "uncertainty" not in a.as_dict() and b.as_dict()["uncertainty"] == b.uncertainty
    again = score_solutions(prm, solutions, dropout_passes=4, dropout_seed=DROPOUT_SEED)
    assert [r.step_uncertainty for r in again] == [r.step_uncertainty for r in measured]
    other = score_solutions(prm, solutions, dropout_passes=4, dropout_seed=7)
    assert [r.step_uncertainty for r in other] != [r.step_uncertainty for r in measured]
    assert [r.step_scores for r in other] == [r.step_scores for r in plain]
    assert all(r.uncertainty == 0 for r in score_solutions(prm, solutions, dropout_passes=4, dropout_p=0.0))
    with pytest.raises(ValueError, match="dropout_p"):
        score_solutions(prm, solutions, dropout_passes=4, dropout_p=1.0)


def test_head_dropout_passes_are_the_head_on_masked_step_features(tiny_bases, processbench_items):
    """The uncertainty by hand: the backbone's states at the separators, ``keep_masks`` of the row
    (p = HEAD_DROPOUT, scaled by 1 / (1 - p)), the head, the standard deviation over the passes."""
    item = processbench_items[0]
    prm = new_prm(tiny_bases["bert"], device="cpu", seed=1)
    result = score_solutions(prm, [(item["problem"], item["steps"])], dropout_passes=3)[0]
    (row,) = encode_solution(prm.tokenizer, item["problem"], item["steps"], step_token_id=prm.step_token_id,
                             max_length=prm.max_length)
    batch = collate([row], pad_token_id=pad_id(prm.tokenizer))
    with torch.inference_mode():
        features = prm.step_features(batch["input_ids"], batch["attention_mask"])[0, row.step_positions]
        keep = keep_masks(DROPOUT_SEED, row, 3, features.shape[-1], HEAD_DROPOUT)
        probs = torch.softmax(prm.step_logits(features * keep / (1 - HEAD_DROPOUT)), -1)[..., CORRECT]
    assert result.step_uncertainty == pytest.approx(probs.std(dim=0, unbiased=False).tolist(), abs=1e-6)


def test_a_solution_gets_the_same_uncertainty_in_any_batch(tiny_bases, processbench_items):
    """The masks follow the row's tokens and the seed, not its batch, order or prefix sharing."""
    solutions = [(item["problem"], item["steps"]) for item in processbench_items[:4]]
    prm = new_prm(tiny_bases["qwen2"], device="cpu", seed=1)
    together = score_solutions(prm, solutions, dropout_passes=4)
    apart = score_solutions(prm, solutions[::-1], dropout_passes=4, max_batch=1, share_prefixes=False)[::-1]
    for a, b in zip(together, apart):
        assert a.step_uncertainty == pytest.approx(b.step_uncertainty, abs=1e-6)
        assert a.step_scores == pytest.approx(b.step_scores, abs=1e-6)


class _Whole(torch.nn.Module):
    """A scorer-ready model that does not expose its step head (only ``forward``)."""

    def __init__(self, prm):
        super().__init__()
        self.prm = prm
        self.tokenizer, self.step_token_id, self.max_length = prm.tokenizer, prm.step_token_id, prm.max_length
        self.needs_causal_mask, self.overflow = prm.needs_causal_mask, prm.overflow

    @property
    def device(self):
        return self.prm.device

    def forward(self, input_ids, attention_mask, position_ids=None):
        return self.prm(input_ids, attention_mask, position_ids)


def test_a_model_without_a_step_head_falls_back_to_its_own_dropout_layers(tiny_bases, processbench_items):
    """Read whole K more times with its dropout layers sampling, from a seeded fork of torch's
    generator: repeatable, the caller's random state untouched, 0 where its dropout is 0."""
    solutions = [(item["problem"], item["steps"]) for item in processbench_items[:3]]
    whole = _Whole(new_prm(tiny_bases["bert"], device="cpu", seed=1)).eval()
    assert not has_step_head(whole)
    plain = score_solutions(whole, solutions)
    rng = torch.get_rng_state()
    measured = score_solutions(whole, solutions, dropout_passes=3)
    assert torch.equal(torch.get_rng_state(), rng)
    assert not any(m.training for m in whole.modules())
    assert [r.step_scores for r in measured] == [r.step_scores for r in plain]
    assert all(r.uncertainty > 0 for r in measured)
    again = score_solutions(whole, solutions, dropout_passes=3)
    assert [r.step_uncertainty for r in again] == [r.step_uncertainty for r in measured]
    _no_dropout(whole)
    assert all(r.uncertainty == 0 for r in score_solutions(whole, solutions, dropout_passes=3))


def test_uncertainty_skips_steps_a_pass_could_not_read(tiny_bases, processbench_items):
    item = max(processbench_items, key=lambda i: len(i["steps"]))
    short = new_prm(tiny_bases["bert"], device="cpu", seed=1, max_length=160, overflow="unscored")
    result = score_solutions(short, [(item["problem"], item["steps"])], dropout_passes=2)[0]
    n = len(item["steps"]) - result.unscored_steps
    assert result.step_uncertainty[n:] == [None] * result.unscored_steps
    assert result.uncertainty == max(result.step_uncertainty[:n])
