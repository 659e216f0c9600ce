"""Fine-tuning from a checkpoint of each layout (issue #28): a tiny random model built in the exact
layout (tests/scoring/prm/factories.py) trains a few steps on synthetic examples with ``start_from``
its directory, keeps its layout (its own head, step token and text shape), is saved in that layout
with stepmark_prm.json beside it, loads again through the scorer's loader and scores as it trained,
and its lineage names the checkpoint and the layout it started from."""
import dataclasses
import math

import pytest
import torch

from scoring.prm.adapters import load_adapter, score_solutions, smoke_check
from scoring.prm.checkpoint import load_checkpoint, read_meta
from scoring.prm.data import Example
from scoring.prm.layouts import detect, inspect
from scoring.prm.train import TrainConfig
from scoring.prm.training_run import train_checkpoint
from tests.scoring.prm.factories import (
    build_math_shepherd,
    build_qwen_prm,
    build_stepmark,
    build_token_classification,
    byte_level_tokenizer,
)

FAST = dict(lr=5e-3, epochs=3, max_tokens=2048, max_batch=4, log_every=1, val_fraction=0.0, warmup_fraction=0.0)
EXAMPLES = [
    Example("What is 2 + 3?", ["2 + 3 = 5.", "So the answer is 5."], [1, 1]),
    Example("What is 4 times 3?", ["4 times 3 is 7.", "So the answer is 7."], [0, 0]),
    Example("What is 10 minus 4?", ["10 minus 4 is 6.", "6 plus 1 is 8.", "So the answer is 8."], [1, 0, 0]),
    Example("What is 9 + 1?", ["9 + 1 = 10.", "So the answer is 10."], [1, None]),
    Example("What is 8 divided by 2?", ["8 divided by 2 is 4.", "So the answer is 5."], [1, 0]),
]
SOLUTIONS = [(e.problem, e.steps) for e in EXAMPLES]
TEXTS = [e.problem for e in EXAMPLES] + [s for e in EXAMPLES for s in e.steps]

# layout -> (what the factory builds it as, the adapter class the scorer gets, the options it is read with)
LAYOUTS = {
    "stepmark": ("PRM", {}),
    "qwen-prm": ("QwenPRM", {}),
    "math-shepherd": ("MathShepherdPRM", {}),
    "token-classification": ("TokenClassificationPRM", {"step_separator": "\n"}),
}


def build(layout, directory, tiny_bases):
    if layout == "stepmark":
        build_stepmark(directory, tiny_bases["bert"])
    elif layout == "qwen-prm":
        build_qwen_prm(directory, TEXTS)
    elif layout == "math-shepherd":
        build_math_shepherd(directory, TEXTS)
    else:  # what TRL's PRMTrainer leaves: a token classifier read at "\n"
        build_token_classification(directory, TEXTS, step_token=None)
    return directory


def weights(model):
    return {k: v.detach().clone() for k, v in model.state_dict().items()}


def step_scores(model):
    return [s.step_scores for s in score_solutions(model, SOLUTIONS)]


def close(a, b, tol=1e-5):
    return all(x is not None and y is not None and abs(x - y) < tol for u, v in zip(a, b, strict=True)
               for x, y in zip(u, v, strict=True))


@pytest.mark.parametrize("layout", list(LAYOUTS))
def test_a_checkpoint_of_each_layout_fine_tunes_in_its_layout_and_scores_again(layout, tiny_bases, tmp_path):
    kind, options = LAYOUTS[layout]
    start = build(layout, tmp_path / "start", tiny_bases)
    assert detect(start) == layout
    before = load_adapter(layout, start, device="cpu", dtype=torch.float32, **options)
    assert type(before).__name__ == kind
    initial, scored_before = weights(before), step_scores(before)

    config = TrainConfig(max_steps=3, start_from=str(start), **FAST)
    done = train_checkpoint(EXAMPLES, tmp_path / "tuned", base=tiny_bases["bert"], config=config, device="cpu",
                            start_layout=layout, start_options=options)

    # the run finished, its loss finite, and it trained the layout's own weights, its head included
    losses = [h["loss"] for h in done.history if h["event"] == "train"]
    assert done.metrics["steps"] == 3 and len(losses) == 3 and all(math.isfinite(loss) for loss in losses)
    assert type(done.prm).__name__ == kind and done.prm.step_token == before.step_token
    after = weights(done.prm)
    assert after.keys() == initial.keys()
    changed = {k for k in initial if not torch.equal(initial[k], after[k])}
    head = {"stepmark": "head.", "qwen-prm": "head.", "token-classification": "backbone.score.",
            "math-shepherd": "backbone.lm_head."}[layout]
    assert any(k.startswith(head) for k in changed) and any(not k.startswith(head) for k in changed), sorted(changed)

    # saved in its own layout with stepmark_prm.json naming it: loaded the way the worker loads a
    # retrain's checkpoint (layout "stepmark"), it scores as the trained model did, not as the start
    tuned = done.path
    meta = read_meta(tuned)
    assert meta["layout"] == layout and meta["layout_options"] == options and meta["step_token"] == before.step_token
    assert inspect(tuned) == "stepmark"
    loaded = load_adapter("stepmark", tuned, device="cpu")
    assert type(loaded).__name__ == kind and loaded.step_token_id == before.step_token_id
    scored = step_scores(loaded)
    assert close(scored, step_scores(done.prm)) and not close(scored, scored_before, tol=1e-4)
    assert smoke_check(loaded, tuned)["smoke_scores"]
    if layout != "stepmark":  # the files are the layout's own: its loader reads them without Stepmark's metadata
        assert inspect(tuned, layout) == layout
        assert close(step_scores(load_adapter(layout, tuned, device="cpu", **options)), scored)
        with pytest.raises(ValueError, match=f"fine-tuned {layout} PRM.*load_adapter"):
            load_checkpoint(tuned)  # Stepmark's own loader does not pass it off as a backbone + linear head

    assert meta["lineage"] == {"start_from": "checkpoint", "base_model": str(tiny_bases["bert"]),
                               "init_checkpoint": str(start), "init_layout": layout}


def test_a_fine_tuned_layout_fine_tunes_again_and_stays_in_its_layout(tiny_bases, tmp_path):
    start = build("math-shepherd", tmp_path / "start", tiny_bases)
    first = train_checkpoint(EXAMPLES, tmp_path / "first", base=start, device="cpu",
                             config=TrainConfig(max_steps=1, start_from=str(start), **FAST))
    second = train_checkpoint(EXAMPLES, tmp_path / "second", base=start, device="cpu",
                              config=TrainConfig(max_steps=1, start_from=str(first.path), **FAST))
    assert read_meta(first.path)["lineage"]["init_layout"] == "math-shepherd"  # told from the files ("auto")
    assert read_meta(second.path)["lineage"]["init_layout"] == "stepmark"  # as read: a Stepmark checkpoint
    assert read_meta(second.path)["layout"] == "math-shepherd"
    assert type(load_adapter("stepmark", second.path, device="cpu")).__name__ == "MathShepherdPRM"


def test_a_layout_whose_backbone_sees_later_tokens_is_refused_not_trained(tmp_path):
    """A BERT token classifier in the token-classification layout: its steps would read the steps
    after them (the adapters rely on causal attention), so the run refuses it and names why."""
    from transformers import BertConfig, BertForTokenClassification

    directory = tmp_path / "bert-tc"
    tokenizer = byte_level_tokenizer(TEXTS)
    torch.manual_seed(0)
    BertForTokenClassification(BertConfig(vocab_size=len(tokenizer), hidden_size=16, num_hidden_layers=1,
                                          num_attention_heads=2, intermediate_size=32, num_labels=2,
                                          initializer_range=0.5)).save_pretrained(directory)
    tokenizer.save_pretrained(directory)
    config = TrainConfig(max_steps=1, start_from=str(directory), **FAST)
    with pytest.raises(ValueError, match="token-classification model's BertForTokenClassification attends to later"):
        train_checkpoint(EXAMPLES, tmp_path / "out", base=directory, config=config, device="cpu",
                         start_options={"step_separator": "<extra_0>"})
    assert not (tmp_path / "out").exists()


def test_a_math_shepherd_layout_with_its_head_tied_to_its_embeddings_trains_and_keeps_them_tied(tmp_path):
    """A causal LM whose LM head is its embedding table: the Trainer's checkpoints (safetensors, which
    refuse shared tensors) and its loading of the best weights at the end keep the tie."""
    from transformers import LlamaConfig, LlamaForCausalLM

    from tests.scoring.prm.factories import SMALL, SMOKE_TEXTS, word_tokenizer

    start = tmp_path / "tied"
    tokenizer = word_tokenizer(TEXTS + SMOKE_TEXTS)
    torch.manual_seed(3)
    LlamaForCausalLM(LlamaConfig(vocab_size=len(tokenizer), tie_word_embeddings=True, **SMALL)).save_pretrained(start)
    tokenizer.save_pretrained(start)
    config = TrainConfig(max_steps=2, eval_every=1, **{**FAST, "val_fraction": 0.4})
    done = train_checkpoint(EXAMPLES * 2, tmp_path / "tuned", base=start, device="cpu",
                            config=dataclasses.replace(config, start_from=str(start)))
    assert done.metrics["steps"] == 2 and done.metrics["best_step"] in (1, 2)
    lm = load_adapter("stepmark", done.path, device="cpu").backbone
    assert lm.lm_head.weight is lm.model.embed_tokens.weight
    assert torch.equal(lm.lm_head.weight, done.prm.backbone.lm_head.weight)
    assert not torch.equal(lm.lm_head.weight, load_adapter("math-shepherd", start, device="cpu").backbone.lm_head.weight)


@pytest.mark.parametrize("layout", ["qwen-prm", "math-shepherd", "token-classification"])
def test_lora_on_a_published_layout_trains_its_head_fully_and_saves_it_merged(layout, tiny_bases, tmp_path):
    _, options = LAYOUTS[layout]
    start = build(layout, tmp_path / "start", tiny_bases)
    initial = weights(load_adapter(layout, start, device="cpu", **options))
    config = TrainConfig(max_steps=2, start_from=str(start), lora_rank=4, lora_target_modules=["q_proj", "v_proj"], **FAST)
    done = train_checkpoint(EXAMPLES, tmp_path / "tuned", base=start, device="cpu", config=config,
                            start_layout=layout, start_options=options)
    loaded = load_adapter("stepmark", done.path, device="cpu")
    after = weights(loaded)
    assert after.keys() == initial.keys()  # merged: a plain model in its layout again
    changed = {k for k in initial if not torch.equal(initial[k], after[k])}
    head = {"qwen-prm": "head.", "token-classification": "backbone.score.", "math-shepherd": "backbone.lm_head."}[layout]
    assert any(k.startswith(head) for k in changed)
    assert all(k.startswith(head) or "q_proj" in k or "v_proj" in k for k in changed), sorted(changed)
    assert close(step_scores(loaded), step_scores(done.prm))


def test_a_fine_tuned_checkpoint_is_checked_for_the_files_of_the_layout_it_names(tmp_path):
    import json

    from scoring.prm.layouts import LayoutError

    directory = tmp_path / "headless"
    build_qwen_prm(directory, TEXTS, head=False)
    meta = {"format": "stepmark-prm", "version": 1, "layout": "qwen-prm"}
    (directory / "stepmark_prm.json").write_text(json.dumps(meta))
    with pytest.raises(LayoutError, match="not in the Qwen2.5-Math-PRM layout: no score.0.weight"):
        inspect(directory)
    (directory / "stepmark_prm.json").write_text(json.dumps({**meta, "layout": "bert-regressor"}))
    with pytest.raises(LayoutError, match="names an unknown layout 'bert-regressor'"):
        inspect(directory)
