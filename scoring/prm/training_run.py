"""One training run, from labelled examples to a saved checkpoint: split, train, evaluate, save.

Both ways of making a checkpoint go through ``train_checkpoint``: the command line
(``python -m scoring train``) and the scheduled retrain of a project (``scoring.retrain``).
They differ only in what they record: the caller's ``meta`` (where the data came from) and
its ``metrics`` (the CLI's: the training summary with step figures on the validation
problems; the retrain's: figures on its held-out problems beside the champion's).

A run starts from the base model (a fresh head; ``config.start_from == "base"``) or fine-tunes
an existing checkpoint (``start_from`` its path) in any layout ``scoring.prm.layouts`` knows
(``start_layout``, told from the files when "auto"; ``start_options`` the layout's own, as a
registered checkpoint stores them). A Stepmark checkpoint trains its backbone and linear head; a
published layout (Qwen2.5-Math-PRM, Math-Shepherd, a TRL token classifier) trains through its
adapter (``scoring.prm.adapters``), its own head and step token, on text in its own shape, and is
saved in that layout (``scoring.prm.checkpoint``). The checkpoint's ``lineage`` says where it
started: the base, or the checkpoint and the layout it was read in (``init_layout``).

With ``config.processes > 1`` (or an accelerate config file) the training runs under
``accelerate launch`` (``scoring.prm.launch``), each process training its share of the batches;
the main process saves the checkpoint, and this process loads it to compute the metrics.
"""
import dataclasses
import json
import os
import sys
import tempfile
from pathlib import Path

import torch

from scoring.prm.adapters import load_adapter, refuse_leaks
from scoring.prm.checkpoint import read_meta, save_checkpoint, update_meta
from scoring.prm.data import Example
from scoring.prm.launch import launch
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


def lineage(config, base, init_layout=None):
    """Where a run starts: ``{"start_from": "base"|"checkpoint", "base_model", "init_checkpoint"}``,
    and ``init_layout`` (the layout the checkpoint was read in) when it fine-tunes one."""
    if config.start_from in ("", "base"):
        return {"start_from": "base", "base_model": str(base), "init_checkpoint": None}
    return {"start_from": "checkpoint", "base_model": str(base), "init_checkpoint": str(config.start_from),
            "init_layout": init_layout}


def start_layout_of(config, start_layout="auto"):
    """The layout of the checkpoint ``config.start_from`` (``start_layout``, or told from its files when
    "auto"); None when the run starts from the base. A ``LayoutError`` names what the directory lacks."""
    if config.start_from in ("", "base"):
        return None
    if config.start_from == "champion":
        raise ValueError('start_from "champion" names the project\'s champion: the retrain resolves it to a path')
    from scoring.prm.layouts import inspect

    return inspect(Path(config.start_from).absolute(), start_layout or "auto")


def starting_prm(config, base, *, device=None, max_length=None, overflow="window", start_layout="auto",
                 start_options=None):
    """The PRM a run trains, float32 master weights: a fresh one on ``base`` or the checkpoint
    ``start_from`` in its layout (``start_layout_of``), loaded as the scorer loads it.

    A published layout is refused when its backbone lets a step see later tokens
    (``scoring.prm.adapters.refuse_leaks``); a Stepmark checkpoint's causality is probed on loading.
    """
    layout = start_layout_of(config, start_layout)
    if layout is None:
        return new_prm(base, device=device, dtype=torch.float32, max_length=max_length, overflow=overflow, seed=config.seed)
    torch.manual_seed(config.seed)
    model = load_adapter(layout, Path(config.start_from).absolute(), device=device, dtype=torch.float32,
                         **(start_options or {}))
    return model if model.layout == "stepmark" else refuse_leaks(model, config.start_from)


def train_checkpoint(examples, out, *, base, config=None, device=None, max_length=None, overflow="window",
                     log_path=None, progress=False, meta=None, metrics=validation_metrics, on_step=None,
                     work_dir=None, resume=False, start_layout="auto", start_options=None):
    """Train a PRM (fresh on ``base``, or fine-tuning ``config.start_from``), evaluate it, save it to ``out``.

    ``examples`` are split by problem into training and validation (``config.val_fraction``,
    seeded by ``config.seed``; validation drives early stopping). ``metrics(prm, summary,
    validation)`` gives the figures the checkpoint records, from the trained PRM, the training
    summary (without its history) and the validation examples. ``meta`` adds to the
    checkpoint's stepmark_prm.json, beside the base model, the lineage, the config and those
    metrics. ``on_step`` goes to ``train``. ``work_dir`` keeps the Trainer's checkpoints;
    ``resume`` continues from the newest one there (``train``). ``start_layout`` and
    ``start_options`` say how to read the checkpoint ``config.start_from`` (``starting_prm``).
    """
    config = config or TrainConfig()
    if config.processes > 1 or config.accelerate_config:
        return _launched(examples, out, base=base, config=config, device=device, max_length=max_length,
                         overflow=overflow, log_path=log_path, meta=meta, metrics=metrics, on_step=on_step,
                         work_dir=work_dir, resume=resume, start_layout=start_layout, start_options=start_options)
    return train_here(examples, out, base=base, config=config, device=device, max_length=max_length, overflow=overflow,
                      log_path=log_path, progress=progress, meta=meta, metrics=metrics, on_step=on_step,
                      work_dir=work_dir, resume=resume, start_layout=start_layout, start_options=start_options)


def train_here(examples, out, *, base, config, device=None, max_length=None, overflow="window", log_path=None,
               progress=False, meta=None, metrics=validation_metrics, on_step=None, work_dir=None, resume=False,
               start_layout="auto", start_options=None):
    """``train_checkpoint`` in this process (one of a launch's processes, or the only one).

    Under a launch only the main process computes ``metrics`` (None: the summary) and saves.
    """
    train_set, val_set = split_by_problem(examples, fraction=config.val_fraction, seed=config.seed)
    # float32 master weights; on CUDA the Trainer runs under bf16 autocast
    init_layout = start_layout_of(config, start_layout)
    start = dict(device=device, max_length=max_length, overflow=overflow, start_layout=init_layout,
                 start_options=start_options)
    prm = starting_prm(config, base, **start)
    summary = train(prm, train_set, val_set, config, log_path=log_path, progress=progress, on_step=on_step,
                    work_dir=work_dir, resume=resume)
    history = summary.pop("history")
    weights = summary.pop("gathered_weights", None)
    if not is_main_process():
        return TrainedCheckpoint(prm=prm, path=Path(out), metrics=summary, history=history)
    if weights is not None:  # a sharded run (FSDP, DeepSpeed): its weights into a plain PRM
        from scoring.prm.train import gathered_prm

        prm = gathered_prm(starting_prm(config, base, **start), config, weights)
    figures = metrics(prm, summary, val_set) if metrics else summary
    meta = meta or {}
    meta = {**meta, "base_model": str(base), "lineage": {**lineage(config, base, init_layout), **meta.get("lineage", {})},
            "config": dataclasses.asdict(config), "metrics": figures}
    path = save_checkpoint(prm, out, meta=meta)
    return TrainedCheckpoint(prm=prm, path=path, metrics=figures, history=history)


def is_main_process():
    """False only in the other processes of a distributed launch (they train; the main one saves)."""
    return int(os.environ.get("RANK", "0")) == 0


def _launched(examples, out, *, base, config, device=None, max_length=None, overflow="window", log_path=None,
              meta=None, metrics=None, on_step=None, work_dir=None, resume=False, start_layout="auto",
              start_options=None):
    """``train_checkpoint`` over ``config.processes`` processes (``scoring.prm.launch``)."""
    with tempfile.TemporaryDirectory(prefix="stepmark-launch-") as tmp:
        log_path = Path(log_path) if log_path else Path(tmp) / "train.jsonl"
        work_dir = work_dir or Path(tmp) / "trainer"  # one directory for every process's part of a save
        spec = {"examples": [dataclasses.asdict(e) for e in examples], "out": str(out), "base": str(base),
                "config": dataclasses.asdict(config), "device": None if device is None else str(device),
                "max_length": max_length, "overflow": overflow, "log_path": str(log_path), "meta": meta or {},
                "work_dir": str(work_dir), "resume": resume, "start_layout": start_layout,
                "start_options": start_options}
        history = launch(spec, config, log_path=log_path, device=device, on_step=on_step)
    prm = load_adapter("stepmark", out, device=device)  # Stepmark's own or a fine-tuned published layout
    summary = read_meta(out)["metrics"]
    if metrics is not None:
        _, val_set = split_by_problem(examples, fraction=config.val_fraction, seed=config.seed)
        summary = metrics(prm, summary, val_set)
        update_meta(out, metrics=summary)
    return TrainedCheckpoint(prm=prm, path=Path(out), metrics=summary, history=history)


def main(spec_path):
    """One process of a launch: train (every process) and save (the main one)."""
    spec = json.loads(Path(spec_path).read_text(encoding="utf-8"))
    device = spec["device"]
    if device is not None and device.startswith("cuda"):
        device = f"cuda:{int(os.environ.get('LOCAL_RANK', '0'))}"  # each process on its own GPU
    train_here([Example(**e) for e in spec["examples"]], spec["out"], base=spec["base"],
               config=TrainConfig(**spec["config"]), device=device, max_length=spec["max_length"],
               overflow=spec["overflow"], log_path=spec["log_path"], meta=spec["meta"], metrics=None,
               work_dir=spec["work_dir"], resume=spec["resume"], start_layout=spec.get("start_layout", "auto"),
               start_options=spec.get("start_options"))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
