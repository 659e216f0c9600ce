"""Training a PRM on labelled steps: a plain torch loop.

AdamW, linear warm-up then linear decay to 0 (transformers' ``get_linear_schedule_with_warmup``,
as its Trainer has it: with a warm-up, the first step runs at a learning rate of 0), gradient
clipping, early stopping on validation loss (the best weights are restored at the end), seeded
so that a run repeats exactly on CPU. On CUDA it trains under bfloat16 autocast with gradient
checkpointing, and hands back a bfloat16 model, the dtype it is saved and scored in. The loss
is cross-entropy at each labelled step separator; unlabelled steps (``None``) and padding carry
no loss.

Training and scoring build their input with the same ``scoring.prm.inputs.encode_solution``: a
solution longer than the context trains on each of the rows it is scored in. Rows that begin
alike (a PRM800K trajectory and its alternatives, each the trajectory's prefix followed by
the alternative) train as one prefix tree (``scoring.prm.packing``), each shared token computed
once; the loss is the same sum over every row's labelled steps.
"""
import contextlib
import dataclasses
import json
import math
import random
import time

import torch
from torch.nn.functional import cross_entropy

from scoring.prm.inputs import encode_solution, length_batches, pad_id
from scoring.prm.packing import collate_units, pack, pair_cost, tree_limit


@dataclasses.dataclass
class TrainConfig:
    """Knobs of a training run; ``scoring train --help`` explains each."""

    lr: float = 2e-5
    weight_decay: float = 0.01
    warmup_fraction: float = 0.1
    epochs: int = 1
    max_steps: int | None = None
    max_tokens: int | None = None  # None: by device, TRAIN_TOKENS
    max_batch: int = 16
    clip_norm: float = 1.0
    eval_every: int | None = None  # optimizer steps between validations; None: once per epoch
    patience: int = 3  # validations without improvement before stopping
    val_fraction: float = 0.1
    seed: int = 0
    log_every: int = 10
    share_prefixes: bool = True  # rows that begin alike train as one prefix tree
    attention_dropout: float | None = 0.0  # None: the backbone's own (see set_attention_dropout)


def encode_examples(prm, examples):
    """Encode examples as the PRM scores them, keeping the rows with a labelled step.

    Returns ``(rows, labels, dropped)``, ``dropped`` counting labels of steps no row reads (past
    the context, or too long to read beside the problem).
    """
    rows, labels, dropped = [], [], 0
    for example in examples:
        read = 0
        for row in encode_solution(prm.tokenizer, example.problem, example.steps, step_token_id=prm.step_token_id,
                                   max_length=prm.max_length, overflow=prm.overflow):
            kept = example.labels[row.first_step:row.first_step + row.n_scored]
            read += sum(label is not None for label in kept)
            if any(label is not None for label in kept):
                rows.append(row)
                labels.append(kept)
        dropped += sum(label is not None for label in example.labels) - read
    return rows, labels, dropped


def set_attention_dropout(backbone, p):
    """Set the dropout on attention probabilities in ``backbone``; returns the old values to restore.

    Training turns it off by default (``TrainConfig.attention_dropout``): with it, PyTorch's
    attention cannot use its fused kernel and builds the whole score matrix, and a prefix tree's
    matrix is wide: training with BERT's 0.1 took about three times as long (docs/prm.md,
    "Training throughput"). Decoders (Llama, Qwen2) ship with 0 already. Dropout on the
    hidden states stays as the backbone has it.
    """
    old = []
    for module in backbone.modules():
        if isinstance(getattr(module, "attention_dropout", None), float):  # Llama, Qwen2 and their kin
            old.append((module, "attention_dropout", module.attention_dropout))
            module.attention_dropout = p
        elif type(module).__name__.endswith("SelfAttention") and isinstance(getattr(module, "dropout", None), torch.nn.Dropout):
            old.append((module.dropout, "p", module.dropout.p))  # BERT-style: the probabilities' dropout
            module.dropout.p = p
    return old


def _restore(old):
    for owner, name, value in old:
        setattr(owner, name, value)


def _autocast(prm):
    if prm.device.type == "cuda":
        return torch.autocast("cuda", dtype=torch.bfloat16)
    return contextlib.nullcontext()


def tree_units(prm, rows, labels, *, share_prefixes=True):
    """``rows`` as prefix trees, each with its targets: ``(index in the tree, label)`` pairs.

    A step labelled in two rows that share it (the same tokens before it) is a target twice,
    as it would be in the rows apart.
    """
    units, where = pack([row.input_ids for row in rows], max_tokens=tree_limit(prm.max_length),
                        pair_cost=pair_cost(prm), share=share_prefixes)
    targets = [[] for _ in units]
    for row, row_labels, (unit, index) in zip(rows, labels, where):
        targets[unit] += [(index[p], label) for p, label in zip(row.step_positions, row_labels) if label is not None]
    return units, targets


def batch_loss(prm, units, targets):
    """Summed cross-entropy over the labelled steps of a batch of trees, and how many there were."""
    batch = collate_units(units, pad_token_id=pad_id(prm.tokenizer))
    position_ids = batch.get("position_ids")
    with _autocast(prm):
        logits = prm(batch["input_ids"].to(prm.device), batch["attention_mask"].to(prm.device),
                     None if position_ids is None else position_ids.to(prm.device))
    which = [(b, index) for b, unit_targets in enumerate(targets) for index, _ in unit_targets]
    rows, columns = torch.tensor(which, dtype=torch.long, device=prm.device).unbind(1)
    target = torch.tensor([label for unit_targets in targets for _, label in unit_targets], device=prm.device)
    loss = cross_entropy(logits[rows, columns].float(), target, reduction="sum")
    return loss, len(which)


# Padded tokens per training batch by device type when the config leaves it open. On a CPU a
# batch that stays in its caches is faster (bench/training_throughput.py; docs/prm.md,
# "Training throughput").
TRAIN_TOKENS = {"cpu": 4096, "cuda": 8192}


def train_batches(prm, units, config):
    """``units`` in length batches of the config's size, or of the device's (``TRAIN_TOKENS``)."""
    max_tokens = config.max_tokens or TRAIN_TOKENS.get(prm.device.type, TRAIN_TOKENS["cuda"])
    return length_batches([len(unit) for unit in units], max_tokens=max_tokens, max_batch=config.max_batch)


def validation_loss(prm, rows, labels, config):
    """Mean cross-entropy per labelled step over ``rows``; None without rows."""
    if not rows:
        return None
    units, targets = tree_units(prm, rows, labels, share_prefixes=config.share_prefixes)
    was_training = prm.training
    prm.eval()
    total, count = 0.0, 0
    with torch.inference_mode():
        for batch in train_batches(prm, units, config):
            loss, n = batch_loss(prm, [units[i] for i in batch], [targets[i] for i in batch])
            total, count = total + float(loss), count + n
    prm.train(was_training)
    return total / count


class _Log:
    """Appends one JSON object per event to the metrics log (when there is one)."""

    def __init__(self, path):
        self.handle = open(path, "a", encoding="utf-8") if path else None
        self.started = time.monotonic()

    def write(self, **record):
        record["elapsed_s"] = round(time.monotonic() - self.started, 3)
        if self.handle:
            self.handle.write(json.dumps(record) + "\n")
            self.handle.flush()
        return record

    def close(self):
        if self.handle:
            self.handle.close()


def _progress_bar(total, enabled):
    try:
        from tqdm import tqdm
    except ImportError:
        return None
    return tqdm(total=total, desc="train", unit="step", disable=not enabled)


def train(prm, train_examples, val_examples, config=None, *, log_path=None, progress=True, on_step=None):
    """Train ``prm`` in place on ``train_examples``; returns a summary dict and restores the best weights.

    ``val_examples`` drive early stopping (none: train to the end). ``log_path`` gets a JSONL
    metrics log: ``train`` events (mean loss since the last one, learning rate, gradient norm)
    and ``eval`` events (validation loss; the first one before any update). ``on_step(step,
    total_steps, loss)`` is called after every optimizer step (the retrain's progress on the
    researcher's page, ``scoring.progress``).
    """
    from transformers import get_linear_schedule_with_warmup  # here: `scoring train --help` needs no transformers

    config = config or TrainConfig()
    torch.manual_seed(config.seed)
    rng = random.Random(config.seed)
    train_rows, train_labels, dropped = encode_examples(prm, train_examples)
    val_rows, val_labels, val_dropped = encode_examples(prm, val_examples)
    if not train_rows:
        raise ValueError("no labelled steps to train on")
    units, targets = tree_units(prm, train_rows, train_labels, share_prefixes=config.share_prefixes)
    batches = train_batches(prm, units, config)
    total_steps = config.epochs * len(batches)
    if config.max_steps is not None:
        total_steps = min(total_steps, config.max_steps)
    eval_every = config.eval_every or len(batches)
    warmup = math.ceil(total_steps * config.warmup_fraction)
    if prm.device.type == "cuda":
        prm.backbone.gradient_checkpointing_enable()
    dropout_before = [] if config.attention_dropout is None else set_attention_dropout(prm.backbone, config.attention_dropout)
    optimizer = torch.optim.AdamW(prm.parameters(), lr=config.lr, weight_decay=config.weight_decay)
    scheduler = get_linear_schedule_with_warmup(optimizer, num_warmup_steps=warmup, num_training_steps=total_steps)
    log = _Log(log_path)
    say = print if progress else (lambda *a, **k: None)
    log.write(event="start", train_examples=len(train_rows), val_examples=len(val_rows), train_trees=len(units),
              train_tokens=sum(map(len, units)), batches_per_epoch=len(batches),
              total_steps=total_steps, labels_past_context=dropped + val_dropped, config=dataclasses.asdict(config))

    best = {"val_loss": validation_loss(prm, val_rows, val_labels, config), "step": 0, "state": None}
    history = [log.write(event="eval", step=0, val_loss=best["val_loss"])]
    bar = _progress_bar(total_steps, progress)
    step, stale, running, stopped_early = 0, 0, [], False
    prm.train()
    while step < total_steps and not stopped_early:
        order = list(range(len(batches)))
        rng.shuffle(order)
        for index in order:
            if step >= total_steps:
                break
            chosen = batches[index]
            loss_sum, count = batch_loss(prm, [units[i] for i in chosen], [targets[i] for i in chosen])
            loss = loss_sum / count
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            grad_norm = torch.nn.utils.clip_grad_norm_(prm.parameters(), config.clip_norm)
            optimizer.step()
            scheduler.step()
            step += 1
            running.append(float(loss.detach()))
            if on_step is not None:
                on_step(step, total_steps, running[-1])
            if bar is not None:
                bar.update(1)
                bar.set_postfix(loss=f"{running[-1]:.4f}")
            if step % config.log_every == 0 or step == total_steps:
                record = log.write(event="train", step=step, loss=sum(running) / len(running),
                                   lr=scheduler.get_last_lr()[0], grad_norm=float(grad_norm))
                history.append(record)
                if bar is None:
                    say(f"step {step}/{total_steps} loss {record['loss']:.4f}")
                running = []
            if val_rows and (step % eval_every == 0 or step == total_steps):
                val_loss = validation_loss(prm, val_rows, val_labels, config)
                improved = val_loss < best["val_loss"] - 1e-6
                if improved:
                    best.update(val_loss=val_loss, step=step, state=_copy_state(prm))
                    stale = 0
                else:
                    stale += 1
                history.append(log.write(event="eval", step=step, val_loss=val_loss, best=improved))
                if stale >= config.patience:
                    stopped_early = True
                    break
    if bar is not None:
        bar.close()
    _restore(dropout_before)
    if val_rows:
        if best["state"] is not None:
            prm.load_state_dict(best["state"])
        # else no update beat the untrained weights; keep the last ones (the start is not worth keeping)
    if prm.device.type == "cuda":
        prm.backbone.gradient_checkpointing_disable()
        prm.to(torch.bfloat16)
    prm.eval()
    summary = {"steps": step, "stopped_early": stopped_early, "best_step": best["step"], "best_val_loss": best["val_loss"],
               "train_examples": len(train_rows), "val_examples": len(val_rows), "labels_past_context": dropped + val_dropped}
    log.write(event="end", **summary)
    log.close()
    summary["history"] = history
    return summary


def _copy_state(prm):
    return {k: v.detach().to("cpu", copy=True) for k, v in prm.state_dict().items()}
