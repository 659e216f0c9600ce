"""The Trainer-based training: 1 process and 2 (gloo) alike, LoRA merged as trained, resuming a
killed run, no half checkpoint, and where a run starts from (its lineage)."""
import copy
import json

import pytest
import torch

from scoring.prm.checkpoint import load_checkpoint, read_meta, save_checkpoint
from scoring.prm.data import read_prm800k
from scoring.prm.model import new_prm
from scoring.prm.scorer import score_solutions
from scoring.prm.train import (
    PRMTrainer,
    TrainConfig,
    gathered_prm,
    last_checkpoint,
    merge_lora,
    train,
    tree_dataset,
)
from scoring.prm.training_run import train_checkpoint

FAST = dict(lr=1e-3, max_tokens=512, max_batch=4, log_every=1, val_fraction=0.0)


@pytest.fixture(scope="module")
def examples(data_dir):
    return read_prm800k(data_dir / "prm800k" / "phase1_train.reconstructed.jsonl.gz", limit=8)[:40]


def weights(prm):
    return {k: v.detach().clone() for k, v in prm.state_dict().items()}


def test_two_processes_train_as_one_with_their_batches_accumulated(tiny_bases, examples, tmp_path):
    """Two gloo processes under ``accelerate launch``, one batch each per step, against one process
    accumulating the same two batches: the same losses and weights. Tolerance: 1e-6 (float32
    summation order: the all-reduce's average against the accumulated sum; here they agree exactly)."""
    llama = tiny_bases["llama"]
    assert len(tree_dataset(new_prm(llama, device="cpu", max_length=192), examples, TrainConfig(**FAST))) >= 8  # 4 steps x 2
    runs = {}
    for name, extra in (("one", {"gradient_accumulation": 2}), ("two", {"processes": 2})):
        config = TrainConfig(max_steps=4, **FAST, **extra)
        seen = []
        done = train_checkpoint(examples, tmp_path / name, base=llama, config=config, device="cpu", max_length=192,
                                log_path=tmp_path / f"{name}.jsonl", on_step=lambda *a: seen.append(a))
        losses = [h["loss"] for h in done.history if h["event"] == "train"]
        assert [s[:2] for s in seen] == [(1, 4), (2, 4), (3, 4), (4, 4)] and [s[2] for s in seen] == losses
        start = json.loads((tmp_path / f"{name}.jsonl").read_text().splitlines()[0])
        assert start["processes"] == (2 if name == "two" else 1)
        runs[name] = (losses, weights(load_checkpoint(tmp_path / name, device="cpu")), done.metrics)
    (one_losses, one_weights, _), (two_losses, two_weights, two_metrics) = runs["one"], runs["two"]
    assert len(one_losses) == 4 and two_losses == pytest.approx(one_losses, rel=1e-6, abs=1e-6)
    assert max(float((one_weights[k] - two_weights[k]).abs().max()) for k in one_weights) <= 1e-6
    assert two_metrics["steps"] == 4 and two_metrics["processes"] == 2 and two_metrics["distributed"] == "MULTI_CPU"
    assert read_meta(tmp_path / "two")["metrics"] == two_metrics  # the launch's checkpoint records the caller's metrics


def test_lora_trains_adapters_and_the_saved_merged_checkpoint_scores_as_the_adapted_model(tiny_bases, examples, tmp_path):
    prm = new_prm(tiny_bases["qwen2"], device="cpu", seed=0, max_length=192)
    before = weights(prm)
    config = TrainConfig(max_steps=3, lora_rank=4, lora_alpha=8, lora_target_modules=["q_proj", "v_proj"], **FAST)
    train(prm, examples, [], config, progress=False, merge=False)
    trainable = {name for name, p in prm.named_parameters() if p.requires_grad}
    assert trainable and all("lora_" in name or name.startswith("head.") for name in trainable)
    texts = [(e.problem, e.steps) for e in examples[:8]]
    adapted = [s.step_scores for s in score_solutions(prm, texts)]
    merged = merge_lora(copy.deepcopy(prm))
    assert type(merged.backbone).__name__ == "Qwen2Model"  # a plain backbone again
    after = weights(merged)
    changed = {k for k in before if not torch.equal(before[k], after[k])}
    assert changed and all(k.startswith("head.") or "q_proj" in k or "v_proj" in k for k in changed)
    save_checkpoint(merged, tmp_path / "lora")
    loaded = load_checkpoint(tmp_path / "lora", device="cpu")
    # a sharded run's weights come back as one state dict of the adapted PRM (Trainer.save_model)
    from safetensors.torch import save_file

    save_file({k: v.contiguous() for k, v in prm.state_dict().items()}, tmp_path / "gathered.safetensors")
    gathered = gathered_prm(new_prm(tiny_bases["qwen2"], device="cpu", seed=1, max_length=192), config,
                            tmp_path / "gathered.safetensors")
    for scores in ([s.step_scores for s in score_solutions(merged, texts)],
                   [s.step_scores for s in score_solutions(loaded, texts)],
                   [s.step_scores for s in score_solutions(gathered, texts)]):
        pairs = [(a, b) for x, y in zip(scores, adapted, strict=True) for a, b in zip(x, y, strict=True)]
        assert all((a is None) == (b is None) for a, b in pairs)
        assert max(abs(a - b) for a, b in pairs if a is not None) < 1e-5


class Killed(Exception):
    pass


def test_a_killed_run_resumes_from_its_last_save_and_ends_as_an_unbroken_one(tiny_bases, examples, tmp_path):
    from transformers import TrainerCallback

    config = TrainConfig(max_steps=6, eval_every=2, **FAST)  # a resumable save every 2 steps

    class KillAtStep3(TrainerCallback):
        def on_step_end(self, args, state, control, **kwargs):
            if state.global_step == 3:
                raise Killed

    unbroken = new_prm(tiny_bases["llama"], device="cpu", seed=0, max_length=192)
    whole = train(unbroken, examples, [], config, progress=False, work_dir=tmp_path / "whole")
    work = tmp_path / "run"
    with pytest.raises(Killed):
        train(new_prm(tiny_bases["llama"], device="cpu", seed=0, max_length=192), examples, [], config,
              progress=False, work_dir=work, callbacks=[KillAtStep3()])
    assert last_checkpoint(work).endswith("checkpoint-2")
    resumed = new_prm(tiny_bases["llama"], device="cpu", seed=0, max_length=192)
    summary = train(resumed, examples, [], config, progress=False, work_dir=work, resume=True)
    assert summary["steps"] == 6
    # the steps after the save run again and end where the unbroken run ended
    assert [h["step"] for h in summary["history"] if h["event"] == "train"] == [3, 4, 5, 6]
    assert [h["loss"] for h in summary["history"]] == pytest.approx([h["loss"] for h in whole["history"]][2:], rel=1e-6)
    expected = weights(unbroken)
    assert max(float((v - expected[k]).abs().max()) for k, v in weights(resumed).items()) <= 1e-6


def test_a_save_killed_midway_leaves_no_checkpoint_to_resume_from(tiny_bases, examples, tmp_path, monkeypatch):
    saves = []
    original = PRMTrainer._save_optimizer_and_scheduler

    def dies_in_the_second_save(self, output_dir):
        saves.append(output_dir)
        if len(saves) == 2:
            raise Killed  # the model is written, the optimizer not yet
        return original(self, output_dir)

    monkeypatch.setattr(PRMTrainer, "_save_optimizer_and_scheduler", dies_in_the_second_save)
    work = tmp_path / "run"
    with pytest.raises(Killed):
        train(new_prm(tiny_bases["llama"], device="cpu", seed=0, max_length=192), examples, [],
              TrainConfig(max_steps=6, eval_every=2, **FAST), progress=False, work_dir=work)
    assert sorted(p.name for p in work.glob("checkpoint-*")) == ["checkpoint-2"]
    assert last_checkpoint(work).endswith("checkpoint-2")
    assert (work / "checkpoint-2" / "optimizer.pt").is_file() and (work / "checkpoint-2" / "trainer_state.json").is_file()


def test_a_run_fine_tunes_a_checkpoint_or_starts_from_the_base_and_says_which(tiny_bases, examples, tmp_path):
    base = tiny_bases["bert"]
    first = train_checkpoint(examples, tmp_path / "first", base=base, config=TrainConfig(max_steps=2, **FAST),
                             device="cpu", max_length=192)
    assert read_meta(first.path)["lineage"] == {"start_from": "base", "base_model": str(base), "init_checkpoint": None}
    still = {**FAST, "lr": 0.0}  # a rate of 0: the run ends with the weights it started from
    tuned = train_checkpoint(examples, tmp_path / "tuned", base=base, device="cpu",
                             config=TrainConfig(max_steps=1, start_from=str(first.path), **still))
    fresh = train_checkpoint(examples, tmp_path / "fresh", base=base, device="cpu", max_length=192,
                             config=TrainConfig(max_steps=1, **still))
    assert read_meta(tuned.path)["lineage"] == {"start_from": "checkpoint", "base_model": str(base),
                                                "init_checkpoint": str(first.path), "init_layout": "stepmark"}
    assert read_meta(tuned.path)["max_length"] == 192  # the settings of the checkpoint it fine-tuned
    assert torch.equal(tuned.prm.head.weight, first.prm.head.weight)
    assert not torch.equal(fresh.prm.head.weight, first.prm.head.weight)
