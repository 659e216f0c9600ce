"""One training run, from labelled examples to a saved checkpoint: split, train, evaluate, save.

Both ways of making a checkpoint go through ``train_checkpoint``: the command line
(``python -m scoring train``) and the scheduled retrain of a project (``scoring.retrain``).
They differ only in what they record: the caller's ``meta`` (where the data came from) and
its ``metrics`` (the CLI's: the training summary with step figures on the validation
problems; the retrain's: figures on its held-out problems beside the champion's).
"""
import dataclasses
from pathlib import Path

import torch

from scoring.prm.checkpoint import save_checkpoint
from scoring.prm.metrics import step_metrics
from scoring.prm.model import new_prm
from scoring.prm.scorer import score_solutions
from scoring.prm.splits import split_by_problem
from scoring.prm.train import TrainConfig, train


@dataclasses.dataclass
class TrainedCheckpoint:
    prm: object  # the trained PRM, ready to score (eval mode)
    path: Path  # the checkpoint directory written
    metrics: dict  # what ``metrics`` returned, saved as the checkpoint's ``metrics``
    history: list  # the training and validation loss events (``train``'s history)


def validation_metrics(prm, summary, validation):
    """The training summary, with step figures on the ``validation`` examples when there are any."""
    if validation:
        scored = score_solutions(prm, [(e.problem, e.steps) for e in validation])
        summary["validation"] = step_metrics([s.step_scores for s in scored], [e.labels for e in validation])
    return summary


def train_checkpoint(examples, out, *, base, config=None, device=None, max_length=None, overflow="window",
                     log_path=None, progress=False, meta=None, metrics=validation_metrics, on_step=None):
    """Train a fresh PRM on the backbone at ``base``, evaluate it, and save it to the directory ``out``.

    ``examples`` are split by problem into training and validation (``config.val_fraction``,
    seeded by ``config.seed``; validation drives early stopping). ``metrics(prm, summary,
    validation)`` gives the figures the checkpoint records, from the trained PRM, the training
    summary (without its history) and the validation examples. ``meta`` adds to the
    checkpoint's stepmark_prm.json, beside the base model, the config and those metrics.
    ``on_step`` goes to ``train`` (called after each optimizer step).
    """
    config = config or TrainConfig()
    train_set, val_set = split_by_problem(examples, fraction=config.val_fraction, seed=config.seed)
    # float32 master weights; on CUDA the loop runs under bf16 autocast
    prm = new_prm(base, device=device, dtype=torch.float32, max_length=max_length, overflow=overflow, seed=config.seed)
    summary = train(prm, train_set, val_set, config, log_path=log_path, progress=progress, on_step=on_step)
    history = summary.pop("history")
    figures = metrics(prm, summary, val_set)
    meta = {**(meta or {}), "base_model": str(base), "config": dataclasses.asdict(config), "metrics": figures}
    path = save_checkpoint(prm, out, meta=meta)
    return TrainedCheckpoint(prm=prm, path=path, metrics=figures, history=history)
