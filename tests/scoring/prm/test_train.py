"""Training: the loss falls, runs repeat, early stopping, the metrics log, the step hook (the split: test_splits.py)."""
import gc
import json

import pytest
import torch

from scoring.prm.data import read_prm800k
from scoring.prm.inputs import encode_solution
from scoring.prm.model import new_prm
from scoring.prm.splits import split_by_problem
from scoring.prm.train import (
    TrainConfig,
    batch_loss,
    encode_examples,
    train,
    tree_units,
    validation_loss,
)

FAST = dict(lr=3e-3, max_tokens=2048, max_batch=8, log_every=1, warmup_fraction=0.1)


@pytest.fixture(scope="module")
def examples(data_dir):
    return read_prm800k(data_dir / "prm800k" / "phase1_train.reconstructed.jsonl.gz", limit=8)


def test_a_few_steps_lower_the_loss_and_repeat_exactly(tiny_bases, examples, tmp_path):
    subset = examples[:32]
    # a record's trees make batches of unlike label mixes: a gentler rate over a few more steps
    config = TrainConfig(max_steps=12, epochs=10, **{**FAST, "lr": 1e-3})
    runs = []
    for name in ("a", "b"):
        prm = new_prm(tiny_bases["bert"], device="cpu", seed=0, max_length=192)
        rows, labels, _ = encode_examples(prm, subset)
        before = validation_loss(prm, rows, labels, config)
        summary = train(prm, subset, [], config, log_path=tmp_path / f"{name}.jsonl", progress=False)
        after = validation_loss(prm, rows, labels, config)
        runs.append([h["loss"] for h in summary["history"] if h["event"] == "train"])
        assert summary["steps"] == 12
        assert after < before * 0.9, (before, after)
        assert not prm.training
    assert runs[0] == runs[1]  # seeded: the same losses, step for step
    losses = runs[0]
    assert sum(losses[-3:]) < sum(losses[:3])
    events = [json.loads(line) for line in (tmp_path / "a.jsonl").read_text().splitlines()]
    assert events[0]["event"] == "start" and events[-1]["event"] == "end"  # no validation set: no eval events
    assert events[0]["total_steps"] == 12 and events[0]["processes"] == 1
    assert [e["step"] for e in events if e["event"] == "train"] == list(range(1, 13))
    # warm-up over ceil(12 x 0.1) = 2 steps from 0, then down towards 0 (each entry: the rate the step ran at)
    rates = [e["lr"] for e in events if e["event"] == "train"]
    assert rates[:3] == [0, pytest.approx(config.lr / 2), pytest.approx(config.lr)]
    assert rates[2:] == [pytest.approx(config.lr * (13 - step) / 10) for step in range(3, 13)]


def test_early_stopping_gives_up_when_validation_stops_improving(tiny_bases, examples):
    train_set, val_set = split_by_problem(examples[:60], fraction=0.3, seed=0)
    prm = new_prm(tiny_bases["llama"], device="cpu", seed=0)
    config = TrainConfig(**{**FAST, "lr": 0.0}, epochs=50, eval_every=1, patience=2)
    summary = train(prm, train_set, val_set, config, progress=False)
    # with a zero learning rate nothing improves on the first validation: two validations later it stops
    assert summary["stopped_early"] and summary["steps"] == 3 and summary["best_step"] == 1


def test_every_optimizer_step_is_reported_with_the_total_and_its_loss(tiny_bases, examples, tmp_path):
    # The hook the retrain's progress uses (scoring/progress.py): the same losses the log records.
    prm = new_prm(tiny_bases["bert"], device="cpu", seed=0, max_length=192)
    seen = []
    train(prm, examples[:12], [], TrainConfig(max_steps=4, epochs=10, **FAST), log_path=tmp_path / "log.jsonl",
          progress=False, on_step=lambda step, total, loss: seen.append((step, total, loss)))
    logged = [json.loads(line) for line in (tmp_path / "log.jsonl").read_text().splitlines()]
    assert [(s, t) for s, t, _ in seen] == [(1, 4), (2, 4), (3, 4), (4, 4)]
    assert [loss for _, _, loss in seen] == [pytest.approx(e["loss"]) for e in logged if e["event"] == "train"]



def test_the_heap_before_a_training_is_frozen_while_it_runs_and_thawed_after(tiny_bases, examples):
    # accelerate's gc.collect() as a training starts and ends then scans only what it made
    # (scoring/prm/train.py, _heap_frozen); a heap frozen by its process before stays as it was.
    assert gc.get_freeze_count() == 0
    kept = [object() for _ in range(3)]  # noqa: F841  (objects that exist before the run)
    during = []

    def run():
        prm = new_prm(tiny_bases["bert"], device="cpu", seed=0, max_length=192)
        train(prm, examples[:4], [], TrainConfig(max_steps=2, epochs=10, **FAST), progress=False,
              on_step=lambda step, total, loss: during.append(gc.get_freeze_count()))

    run()
    assert len(during) == 2 and min(during) > 0
    assert gc.get_freeze_count() == 0
    gc.freeze()
    try:
        frozen = gc.get_freeze_count()
        during.clear()
        run()
        # (a frozen object that is freed leaves the count)
        assert len(during) == 2 and max(during) <= frozen and 0 < gc.get_freeze_count() <= frozen
    finally:
        gc.unfreeze()

def test_labels_past_the_context_are_counted_not_trained(tiny_bases, examples):
    prm = new_prm(tiny_bases["bert"], device="cpu", max_length=64, overflow="unscored")
    rows, labels, dropped = encode_examples(prm, examples)
    assert dropped > 0
    assert all(len(row) <= 64 and len(row_labels) == row.n_scored for row, row_labels in zip(rows, labels))


def test_through_the_window_a_long_solution_trains_on_every_row_it_is_scored_in(tiny_bases, examples):
    unscored = encode_examples(new_prm(tiny_bases["bert"], device="cpu", max_length=128, overflow="unscored"), examples)
    prm = new_prm(tiny_bases["bert"], device="cpu", max_length=128)
    rows, labels, dropped = encode_examples(prm, examples)
    total = sum(label is not None for e in examples for label in e.labels)
    assert sum(label is not None for row_labels in labels for label in row_labels) == total - dropped
    assert dropped < unscored[2] and len(rows) > len(unscored[0])
    # each row carries the labels of exactly the steps it scores. Two examples can give the same
    # tokens with other labels: PRM800K lists some completions twice at a position ("Right."),
    # and the copy's row leaves unlabelled the prefix that the trajectory's own row labels.
    expected = {}
    for example in examples:
        for row in encode_solution(prm.tokenizer, example.problem, example.steps, step_token_id=prm.step_token_id,
                                   max_length=128):
            expected.setdefault(tuple(row.input_ids), []).append(
                example.labels[row.first_step:row.first_step + row.n_scored])
    assert all(len(row) <= 128 and labels[i] in expected[tuple(row.input_ids)] for i, row in enumerate(rows))


@pytest.mark.parametrize("arch", ["bert", "qwen2"])
def test_a_record_trains_as_one_tree_with_the_loss_and_gradients_of_its_rows(tiny_bases, examples, arch):
    """The trajectory and its alternatives share their prefix: one tree, the same summed loss and gradient."""
    prm = new_prm(tiny_bases[arch], device="cpu", seed=0, max_length=256)
    rows, labels, _ = encode_examples(prm, examples[:40])
    trees, tree_targets = tree_units(prm, rows, labels)
    plain, plain_targets = tree_units(prm, rows, labels, share_prefixes=False)
    # about half the tokens (0.47 of them with bert's tokenizer, 0.51 with qwen2's)
    assert len(plain) == len(rows) and sum(map(len, trees)) < 0.55 * sum(map(len, rows))
    n_labels = sum(label is not None for row_labels in labels for label in row_labels)
    assert sum(map(len, tree_targets)) == sum(map(len, plain_targets)) == n_labels
    # a target sits on a separator, with the label the row gives that step
    for unit, unit_targets in zip(trees, tree_targets):
        assert all(unit.input_ids[index] == prm.step_token_id and label in (0, 1) for index, label in unit_targets)
    prm.eval()  # no dropout: the two ways must agree exactly
    results = []
    for units, targets in ((trees, tree_targets), (plain, plain_targets)):
        prm.zero_grad()
        loss, count = batch_loss(prm, units, targets)
        loss.backward()
        results.append((float(loss.detach()), count, prm.head.weight.grad.clone()))
    (tree_loss, tree_count, tree_grad), (row_loss, row_count, row_grad) = results
    assert tree_count == row_count == n_labels
    assert tree_loss == pytest.approx(row_loss, rel=1e-5)
    assert torch.allclose(tree_grad, row_grad, rtol=1e-4, atol=1e-6)
    config = TrainConfig(**FAST)
    assert validation_loss(prm, rows, labels, config) == pytest.approx(
        validation_loss(prm, rows, labels, TrainConfig(**FAST, share_prefixes=False)), rel=1e-5)


@pytest.mark.parametrize("arch", ["bert", "llama", "qwen2"])
def test_attention_dropout_is_set_for_training_and_put_back(tiny_bases, examples, arch):
    from scoring.prm.train import set_attention_dropout

    prm = new_prm(tiny_bases[arch], device="cpu", seed=0, max_length=192)

    def dropouts():
        attention, hidden = [], []
        for name, module in prm.backbone.named_modules():
            if isinstance(getattr(module, "attention_dropout", None), float):
                attention.append(module.attention_dropout)
            elif isinstance(module, torch.nn.Dropout):
                (attention if "attention.self" in name else hidden).append(module.p)
        return attention, hidden

    attention, hidden = dropouts()
    assert len(attention) == 2  # one per layer
    old = set_attention_dropout(prm.backbone, 0.3)
    assert dropouts() == ([0.3] * 2, hidden)  # the hidden states' dropout is not touched
    for owner, name, value in old:
        setattr(owner, name, value)
    assert dropouts() == (attention, hidden)
    train(prm, examples[:6], [], TrainConfig(max_steps=1, **FAST), progress=False)
    assert dropouts() == (attention, hidden)


def test_max_steps_cuts_the_epochs_short_and_never_runs_past_them(tiny_bases, examples):
    prm = new_prm(tiny_bases["llama"], device="cpu", seed=0, max_length=192)
    config = TrainConfig(max_steps=1000, epochs=2, **FAST)
    from scoring.prm.train import tree_dataset

    batches = len(tree_dataset(prm, examples[:12], config))
    assert train(prm, examples[:12], [], config, progress=False)["steps"] == 2 * batches < 1000
