"""Prefix causality: the score of step k depends on the problem and steps 1..k only."""
import pytest

from scoring.prm.model import new_prm, probe_causality
from scoring.prm.scorer import score_solutions

from tests.scoring.conftest import ARCHITECTURES

PROBLEM = "Natalia sold clips to 48 of her friends in April, and then she sold half as many clips in May. How many clips did she sell altogether?"
STEPS = [
    "In April she sold 48 clips.",
    "In May she sold half as many, so 48 / 2 = 24 clips.",
    "Altogether she sold 48 + 24 = 72 clips.",
    "# Answer\n\n72",
]
K = 2  # steps 0..K-1 are kept, later ones changed


def _variants():
    """The solution, its prefix, and versions whose steps after K are rewritten, added or dropped."""
    head = STEPS[:K]
    return [
        head,
        head + ["She sold 100 clips in June, which changes everything.", "# Answer\n\n172"],
        head + [STEPS[K]],
        head + ["A much longer third step " * 12, "and yet another", "and one more step", "# Answer\n\n5"],
    ]


@pytest.fixture(params=[*ARCHITECTURES, "bert-eager"])
def prm(request, tiny_bases):
    arch = request.param.removesuffix("-eager")
    prm = new_prm(tiny_bases[arch], device="cpu", seed=3)
    if request.param.endswith("-eager"):
        prm.backbone.set_attn_implementation("eager")
        assert probe_causality(prm)
    return prm


def test_encoders_get_the_causal_mask_and_decoders_do_not(tiny_bases):
    assert new_prm(tiny_bases["bert"], device="cpu").needs_causal_mask is True
    assert new_prm(tiny_bases["llama"], device="cpu").needs_causal_mask is False
    assert new_prm(tiny_bases["qwen2"], device="cpu").needs_causal_mask is False


def test_scores_up_to_k_do_not_depend_on_later_steps(prm):
    full = score_solutions(prm, [(PROBLEM, STEPS)])[0].step_scores
    for steps in _variants():
        # scored alone and in a batch with rows of other lengths (right padding)
        alone = score_solutions(prm, [(PROBLEM, steps)])[0].step_scores
        batched = score_solutions(prm, [(PROBLEM, STEPS), (PROBLEM, steps), (PROBLEM, STEPS[:1])])[1].step_scores
        for scores in (alone, batched):
            assert scores[:K] == pytest.approx(full[:K], abs=1e-5)
    # the test can fail: a changed step k itself does move its score
    changed = score_solutions(prm, [(PROBLEM, STEPS[:1] + ["Totally different words here."] + STEPS[2:])])[0]
    assert abs(changed.step_scores[1] - full[1]) > 1e-4


def test_through_a_sliding_window_step_k_still_sees_only_steps_up_to_k(prm):
    """A context of a few steps: the solution spans several rows, and every score equals the
    score of the prefix ending at that step, alone (the naive way) or with other steps after."""
    from scoring.prm.inputs import encode_solution

    solution = STEPS + [f"Check: {i} clips plus {i} clips is {2 * i} clips." for i in range(1, 7)]
    tokens = prm.tokenizer([PROBLEM, *solution], add_special_tokens=False)["input_ids"]
    prm.max_length = 1 + len(tokens[0]) + 3 * max(map(len, tokens[1:]))  # room for about three steps
    rows = encode_solution(prm.tokenizer, PROBLEM, solution, step_token_id=prm.step_token_id, max_length=prm.max_length)
    assert len(rows) >= 3 and sum(row.n_scored for row in rows) == len(solution)
    full = score_solutions(prm, [(PROBLEM, solution)])[0]
    assert full.unscored_steps == 0
    for k in range(len(solution)):
        prefixes = score_solutions(prm, [(PROBLEM, solution[: k + 1]), (PROBLEM, solution[: k + 1] + ["A new ending."])])
        for result in prefixes:
            assert result.step_scores[: k + 1] == pytest.approx(full.step_scores[: k + 1], abs=1e-5)


def test_without_the_causal_mask_an_encoder_would_leak(tiny_bases):
    prm = new_prm(tiny_bases["bert"], device="cpu", seed=3)
    prm.needs_causal_mask = False  # what BERT does by default in transformers
    full = score_solutions(prm, [(PROBLEM, STEPS)])[0].step_scores
    other = score_solutions(prm, [(PROBLEM, _variants()[1])])[0].step_scores
    assert abs(other[0] - full[0]) > 1e-3  # a hundred times the tolerance the causality test allows


def test_training_gradients_do_not_reach_back_from_later_steps(prm):
    """The loss at step k has zero gradient with respect to every token after step k's separator."""
    from scoring.prm.inputs import collate, encode, pad_id

    row = encode(prm.tokenizer, PROBLEM, STEPS, step_token_id=prm.step_token_id, max_length=prm.max_length)
    batch = collate([row], pad_token_id=pad_id(prm.tokenizer))
    captured = {}

    def keep(module, inputs, output):
        output.retain_grad()
        captured["embeddings"] = output

    hook = prm.backbone.get_input_embeddings().register_forward_hook(keep)
    try:
        prm.eval()  # no dropout, so that the test is exact; the mask is the same in train mode
        logits = prm(batch["input_ids"], batch["attention_mask"])
        position = row.step_positions[K - 1]
        logits[0, position].sum().backward()
    finally:
        hook.remove()
    grad = captured["embeddings"].grad[0]
    assert grad[position + 1 :].abs().max() == 0
    assert grad[: position + 1].abs().max() > 0
