"""Checkpoints: atomic writes, and a loaded checkpoint scores exactly as the trainer did."""
import json

import pytest

from scoring.prm.checkpoint import (
    HEAD_FILE,
    META_FILE,
    file_hash,
    load_checkpoint,
    read_meta,
    save_checkpoint,
)
from scoring.prm.data import read_prm800k
from scoring.prm.model import default_base_model, new_prm
from scoring.prm.scorer import score_solutions
from scoring.prm.train import TrainConfig, train


# "minilm": the bundled default backbone itself (a new project's and the demo's), once; every
# other test of the PRM and of its jobs runs on tiny random ones.
@pytest.mark.parametrize("arch", ["bert", "llama", "minilm"])
def test_a_loaded_checkpoint_scores_exactly_as_the_trained_model(arch, tiny_bases, data_dir, processbench_items, tmp_path):
    data = data_dir / "prm800k" / "phase1_train.reconstructed.jsonl.gz"
    examples = read_prm800k(data, limit=3)
    base = default_base_model() if arch == "minilm" else tiny_bases[arch]
    prm = new_prm(base, device="cpu", seed=0, max_length=256)
    train(prm, examples, [], TrainConfig(lr=1e-3, max_steps=3, max_batch=8), progress=False)
    solutions = [(item["problem"], item["steps"]) for item in processbench_items[:6]]
    expected = score_solutions(prm, solutions)
    save_checkpoint(prm, tmp_path / "ckpt", meta={"base_model": str(base), "training_data_sha256": file_hash(data)})

    loaded = load_checkpoint(tmp_path / "ckpt", device="cpu")
    assert score_solutions(loaded, solutions) == expected  # identical, not just close
    meta = read_meta(tmp_path / "ckpt")
    assert meta["step_token"] == prm.step_token and meta["labels"] == {"0": "incorrect", "1": "correct"}
    assert meta["needs_causal_mask"] is (arch != "llama")  # the encoders and meta["max_length"] == prm.max_length
    assert meta["overflow"] == "window" and loaded.overflow == "window"
    assert meta["training_data_sha256"] == file_hash(data)
    assert {"config.json", "model.safetensors", HEAD_FILE, META_FILE} <= {p.name for p in (tmp_path / "ckpt").iterdir()}


def test_overflow_is_kept_and_older_checkpoints_leave_long_solutions_unscored(tiny_bases, tmp_path):
    save_checkpoint(new_prm(tiny_bases["bert"], device="cpu", max_length=64, overflow="unscored"), tmp_path / "a")
    assert load_checkpoint(tmp_path / "a", device="cpu").overflow == "unscored"
    save_checkpoint(new_prm(tiny_bases["bert"], device="cpu", max_length=64), tmp_path / "b")
    meta_path = tmp_path / "b" / META_FILE
    meta = json.loads(meta_path.read_text())
    del meta["overflow"]  # as written before the sliding window existed
    meta_path.write_text(json.dumps(meta))
    assert load_checkpoint(tmp_path / "b", device="cpu").overflow == "unscored"


def test_saving_replaces_whole_checkpoints_and_a_failed_save_loses_nothing(tiny_bases, tmp_path):
    target = tmp_path / "ckpt"
    first = new_prm(tiny_bases["bert"], device="cpu", seed=1)
    save_checkpoint(first, target, meta={"generation": 1})
    second = new_prm(tiny_bases["bert"], device="cpu", seed=2)
    save_checkpoint(second, target, meta={"generation": 2})
    assert read_meta(target)["generation"] == 2
    assert load_checkpoint(target, device="cpu").head.weight.equal(second.head.weight)

    with pytest.raises(TypeError):  # stepmark_prm.json cannot be written: the save fails after the weights
        save_checkpoint(first, target, meta={"generation": object()})
    assert read_meta(target)["generation"] == 2  # the old checkpoint is untouched
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ckpt"]  # no staging directory left behind


def test_reading_something_that_is_not_a_checkpoint_says_so(tiny_bases, tmp_path):
    with pytest.raises(FileNotFoundError, match="not a Stepmark PRM checkpoint"):
        load_checkpoint(tiny_bases["bert"])
    (tmp_path / META_FILE).write_text(json.dumps({"format": "other"}))
    with pytest.raises(ValueError, match="unsupported checkpoint format"):
        read_meta(tmp_path)
