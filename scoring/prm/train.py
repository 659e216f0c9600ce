"""Training a PRM on labelled steps: transformers' ``Trainer``, fed prefix trees.

``PRMTrainer`` is a ``Trainer`` subclass in the manner of TRL's ``PRMTrainer``, keeping what this
project does its own way: the data are prefix trees (``scoring.prm.packing``) built by the same
``scoring.prm.inputs.encode_solution`` that scoring uses, the loss is cross-entropy at each
labelled step separator of a tree (``tree_loss``; unlabelled steps and padding carry none), and
validation is the mean of that loss per labelled step. The library does the rest: AdamW, the
linear schedule with warm-up (with a warm-up, the first step runs at a rate of 0), gradient
clipping, gradient accumulation, bf16 mixed precision and gradient checkpointing (on CUDA by
default), early stopping (``EarlyStoppingCallback``; the best weights are loaded at the end),
checkpoints to resume from (``resume_from_checkpoint``), and the distributed run: launched under
``accelerate launch`` or ``torchrun`` (``scoring.prm.launch``) the same code runs DDP, FSDP or
DeepSpeed as the accelerate config says, each process taking its share of the batches.

A batch is a length batch of trees (the padded-token budget ``max_tokens``, at most
``max_batch`` trees): the dataset's items are whole batches and the Trainer's batch size is 1.
A solution longer than the context trains on each of the rows it is scored in. Rows that begin
alike (a PRM800K trajectory and its alternatives) train as one tree, each shared token computed
once; the loss is the same sum over every row's labelled steps.

With ``lora_rank`` the backbone trains through peft's LoRA adapters (the head trains fully);
at the end the adapters are merged, so the PRM handed back, and saved, is a plain one that
scores as the adapted model did.

A worked example, the whole of a run (``train`` does this, with logging and early stopping)::

    from scoring.prm.data import read_prm800k
    from scoring.prm.model import new_prm
    from scoring.prm.train import PRMTrainer, TrainConfig, tree_dataset, training_arguments

    prm = new_prm("models/MiniLM", device="cpu")
    config = TrainConfig(lr=1e-4, max_steps=50)
    data = tree_dataset(prm, read_prm800k("prm800k.jsonl"), config)
    trainer = PRMTrainer(prm, training_arguments(config, prm, "runs/g1"), train_dataset=data,
                         warmup_fraction=config.warmup_fraction)
    trainer.train()          # trainer.train(resume_from_checkpoint=True) after a kill
    prm.eval()               # scores as scoring.prm.scorer reads it; save with save_checkpoint
"""
import contextlib
import dataclasses
import gc
import json
import math
import os
import shutil
import tempfile
import time
from pathlib import Path

import torch
from torch.nn.functional import cross_entropy
from transformers import Trainer, TrainerCallback

from scoring.prm.inputs import encode_solution, length_batches, pad_id, prepared
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
    eval_every: int | None = None  # optimizer steps between validations and resumable saves; None: once per epoch
    patience: int = 3  # validations without improvement before stopping
    val_fraction: float = 0.1
    seed: int = 0
    log_every: int = 10
    share_prefixes: bool = True  # rows that begin alike train as one prefix tree
    attention_dropout: float | None = 0.0  # None: the backbone's own (see set_attention_dropout)
    gradient_accumulation: int = 1  # batches per optimizer step (per process)
    bf16: bool | None = None  # bf16 mixed precision; None: on CUDA
    gradient_checkpointing: bool | None = None  # None: on CUDA
    lora_rank: int | None = None  # None: full fine-tuning; else LoRA adapters of this rank (peft)
    lora_alpha: float = 16.0
    lora_target_modules: list[str] | None = None  # None: peft's default for the architecture
    start_from: str = "base"  # "base": a fresh head on the base; "champion" (the retrain) or a checkpoint's path: fine-tune it
    processes: int = 1  # training processes (accelerate launch); 1: in the calling process
    accelerate_config: str | None = None  # an accelerate config file (DDP, FSDP, DeepSpeed) for the launch


def encode_examples(prm, examples):
    """Encode examples as the PRM scores them, keeping the rows with a labelled step.

    Returns ``(rows, labels, dropped)``, ``dropped`` counting labels of steps no row reads (past
    the context, or too long to read beside the problem).
    """
    rows, labels, dropped = [], [], 0
    for example in examples:
        read = 0
        problem, steps = prepared(prm, example.problem, example.steps)  # as the scorer shapes it
        for row in encode_solution(prm.tokenizer, problem, steps, step_token_id=prm.step_token_id,
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


def collate_trees(units, targets, *, pad_token_id):
    """One batch of trees as the model reads it (``collate_units``) with its loss targets.

    ``target_rows``, ``target_columns``: where each labelled step's separator sits in the batch;
    ``target_labels``: its label. The Trainer moves every tensor to the device.
    """
    batch = collate_units(units, pad_token_id=pad_token_id)
    which = [(b, index) for b, unit_targets in enumerate(targets) for index, _ in unit_targets]
    rows, columns = torch.tensor(which, dtype=torch.long).reshape(-1, 2).unbind(1)
    batch["target_rows"], batch["target_columns"] = rows, columns
    batch["target_labels"] = torch.tensor([label for unit_targets in targets for _, label in unit_targets], dtype=torch.long)
    return batch


def tree_loss(model, batch):
    """Summed cross-entropy over a collated batch's labelled steps, and how many there were.

    ``model`` is the PRM or what the Trainer wrapped it in (DDP, FSDP, DeepSpeed).
    """
    logits = model(batch["input_ids"], batch["attention_mask"], batch.get("position_ids"))
    picked = logits[batch["target_rows"], batch["target_columns"]].float()
    return cross_entropy(picked, batch["target_labels"], reduction="sum"), batch["target_labels"].numel()


def batch_loss(prm, units, targets):
    """Summed cross-entropy over the labelled steps of a batch of trees, and how many there were."""
    batch = {k: v.to(prm.device) for k, v in collate_trees(units, targets, pad_token_id=pad_id(prm.tokenizer)).items()}
    with _autocast(prm):
        return tree_loss(prm, batch)


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



class TreeBatches(torch.utils.data.Dataset):
    """Length batches of trees as a dataset: item ``i`` is batch ``i``, collated (``collate_trees``)."""

    def __init__(self, units, targets, batches, pad_token_id):
        self.units, self.targets, self.batches, self.pad_token_id = units, targets, batches, pad_token_id

    def __len__(self):
        return len(self.batches)

    def __getitem__(self, index):
        chosen = self.batches[index]
        return collate_trees([self.units[i] for i in chosen], [self.targets[i] for i in chosen],
                             pad_token_id=self.pad_token_id)


def one_batch(features):
    """The data collator: the Trainer's batch size is 1 and each item is already a whole batch."""
    (batch,) = features
    return batch


def tree_dataset(prm, examples, config):
    """``examples`` encoded as ``prm`` scores them, packed into trees and batched: a ``TreeBatches``.

    Its ``rows``, ``examples`` and ``dropped`` (labels no row reads) say what went in.
    """
    rows, labels, dropped = encode_examples(prm, examples)
    units, targets = tree_units(prm, rows, labels, share_prefixes=config.share_prefixes)
    data = TreeBatches(units, targets, train_batches(prm, units, config), pad_id(prm.tokenizer))
    data.rows, data.dropped = len(rows), dropped
    return data


class PRMTrainer(Trainer):
    """``Trainer`` for a PRM on prefix trees: the tree loss, the validation loss per labelled step,
    the warm-up as a fraction of the steps, and checkpoints that appear whole or not at all.

    ``train_dataset`` and ``eval_dataset`` are ``TreeBatches`` (``tree_dataset``); the collator
    is ``one_batch``. See the module's docstring for a worked example.
    """

    def __init__(self, prm, args, *, train_dataset, eval_dataset=None, warmup_fraction=0.0, callbacks=None):
        super().__init__(model=prm, args=args, train_dataset=train_dataset, eval_dataset=eval_dataset,
                         data_collator=one_batch, callbacks=callbacks)
        self.warmup_fraction = warmup_fraction
        self._staging_root = None

    def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):
        """Mean cross-entropy per labelled step of the batch (the Trainer divides by the accumulation)."""
        total, count = tree_loss(model, inputs)
        loss = total / count
        return (loss, None) if return_outputs else loss

    def _save(self, output_dir=None, state_dict=None):
        # A PRM is no PreTrainedModel, so the Trainer writes its state dict with safetensors, which
        # refuses tied tensors (a causal LM whose head is its embedding table: a Math-Shepherd layout).
        if state_dict is None:
            state_dict = untied(self.model.state_dict())
        return super()._save(output_dir, state_dict=state_dict)

    def _issue_warnings_after_load(self, load_result):
        # the names ``untied`` left out are loaded through the tensor they share
        state = self.model.state_dict()
        left_out = set(state) - set(untied(state))
        missing = [name for name in load_result.missing_keys if name not in left_out]
        return super()._issue_warnings_after_load(load_result._replace(missing_keys=missing))

    def create_scheduler(self, num_training_steps, optimizer=None):
        # the warm-up as a share of the steps the Trainer worked out (1.0 included: all warm-up)
        self.args.warmup_steps = math.ceil(num_training_steps * self.warmup_fraction)
        return super().create_scheduler(num_training_steps, optimizer)

    def evaluate(self, eval_dataset=None, ignore_keys=None, metric_key_prefix="eval"):
        """``{prefix}_loss``: mean cross-entropy per labelled step over the whole validation set.

        Every process reads the whole (small) set through the wrapped model, so FSDP's and
        DeepSpeed's sharded forward passes run in step and all ranks agree on early stopping.
        """
        dataset = eval_dataset if eval_dataset is not None else self.eval_dataset
        model = self.model_wrapped
        was_training = model.training
        model.eval()
        total, count = 0.0, 0
        with torch.no_grad():
            for index in range(len(dataset)):
                batch = self._prepare_inputs(dataset[index])
                with self.compute_loss_context_manager():
                    loss, n = tree_loss(model, batch)
                total, count = total + float(loss), count + n
        model.train(was_training)
        metrics = {f"{metric_key_prefix}_loss": total / count}
        self.log(metrics)
        self.control = self.callback_handler.on_evaluate(self.args, self.state, self.control, metrics)
        return metrics

    # Checkpoints: written into a staging directory and renamed into place, so that a killed run
    # leaves no half checkpoint for resume_from_checkpoint to pick up.
    STAGING = ".staging"

    def _get_output_dir(self, trial):
        return self._staging_root or super()._get_output_dir(trial)

    def _save_checkpoint(self, model, trial):
        from transformers.trainer_utils import PREFIX_CHECKPOINT_DIR, rotate_checkpoints

        run_dir = super()._get_output_dir(trial)
        name = f"{PREFIX_CHECKPOINT_DIR}-{self.state.global_step}"
        self._staging_root = os.path.join(run_dir, self.STAGING)
        try:
            super()._save_checkpoint(model, trial)
        finally:
            self._staging_root = None
        self.accelerator.wait_for_everyone()
        best = self.state.best_global_step
        if best:
            path = os.path.join(run_dir, f"{PREFIX_CHECKPOINT_DIR}-{best}")
            if best == self.state.global_step or os.path.isdir(path):
                self.state.best_model_checkpoint = path
        if self.args.should_save:
            staged = Path(run_dir) / self.STAGING / name
            self.state.save_to_json(str(staged / "trainer_state.json"))  # with the final paths in it
            _fsync_tree(staged)
            final = Path(run_dir) / name
            if final.exists():
                shutil.rmtree(final)
            os.replace(staged, final)
            rotate_checkpoints(output_dir=run_dir, save_total_limit=self.args.save_total_limit,
                               best_model_checkpoint=self.state.best_model_checkpoint, use_mtime=False)
        self.accelerator.wait_for_everyone()


def untied(state_dict):
    """``state_dict`` with each tensor that several names share under its first name only.

    The Trainer loads its checkpoints (resuming, the best weights at the end) without
    ``strict``, into the same model whose tied parameters are one tensor: the other names fill too.
    """
    seen, kept = set(), {}
    for name, tensor in state_dict.items():
        where = (tensor.device, tensor.untyped_storage().data_ptr(), tensor.storage_offset(), tuple(tensor.shape))
        if tensor.numel() and where[1] and where in seen:
            continue
        seen.add(where)
        kept[name] = tensor
    return kept


def _fsync_tree(directory):
    for item in Path(directory).rglob("*"):
        if item.is_file():
            with open(item, "rb") as handle:
                os.fsync(handle.fileno())


def last_checkpoint(work_dir):
    """The newest whole Trainer checkpoint under ``work_dir`` (staging leftovers ignored), or None."""
    from transformers.trainer_utils import get_last_checkpoint

    if work_dir is None or not Path(work_dir).is_dir():
        return None
    return get_last_checkpoint(str(work_dir))


def training_arguments(config, prm, output_dir, *, validation=False, progress=False):
    """The ``TrainingArguments`` of ``config`` for ``prm`` (its device decides bf16 and checkpointing)."""
    from transformers import TrainingArguments

    cuda = prm.device.type == "cuda"
    every = "steps" if config.eval_every else "epoch"
    checkpointing = cuda if config.gradient_checkpointing is None else config.gradient_checkpointing
    return TrainingArguments(
        output_dir=str(output_dir), per_device_train_batch_size=1, per_device_eval_batch_size=1,
        gradient_accumulation_steps=config.gradient_accumulation, learning_rate=config.lr,
        weight_decay=config.weight_decay, lr_scheduler_type="linear", max_grad_norm=config.clip_norm,
        num_train_epochs=config.epochs, max_steps=config.max_steps or -1,
        logging_strategy="steps", logging_steps=config.log_every,
        eval_strategy=every if validation else "no", save_strategy=every,
        eval_steps=config.eval_every, save_steps=config.eval_every, save_total_limit=2,
        load_best_model_at_end=validation, metric_for_best_model="eval_loss", greater_is_better=False,
        bf16=cuda if config.bf16 is None else config.bf16,
        activation_checkpointing=checkpointing, activation_checkpointing_kwargs={"use_reentrant": False},
        use_cpu=not cuda, seed=config.seed, data_seed=config.seed, report_to="none", disable_tqdm=not progress,
        remove_unused_columns=False, dataloader_num_workers=0, save_only_model=False,
    )


class _Events(TrainerCallback):
    """The JSONL metrics log (``start``, ``train``, ``eval``, ``end``), the history, the step hook.

    Only the main process writes and reports. The last step is always logged.
    """

    def __init__(self, log_path, on_step, start):
        self.log_path, self.on_step, self.start = log_path, on_step, start
        self.started = time.monotonic()
        self.history = []

    def write(self, state, **record):
        record["elapsed_s"] = round(time.monotonic() - self.started, 3)
        if state.is_world_process_zero and self.log_path:
            with open(self.log_path, "a", encoding="utf-8") as handle:
                handle.write(json.dumps(record) + "\n")
        return record

    def on_train_begin(self, args, state, control, **kwargs):
        self.write(state, event="start", **self.start, total_steps=state.max_steps, processes=args.world_size)

    def on_step_end(self, args, state, control, **kwargs):
        if state.global_step >= state.max_steps:
            control.should_log = True

    def on_log(self, args, state, control, logs=None, **kwargs):
        if "loss" in (logs or {}):
            record = self.write(state, event="train", step=state.global_step, loss=logs["loss"],
                                lr=logs.get("learning_rate"), grad_norm=logs.get("grad_norm"))
            self.history.append(record)
            if self.on_step is not None and state.is_world_process_zero:
                self.on_step(state.global_step, state.max_steps, logs["loss"])

    def on_evaluate(self, args, state, control, metrics=None, **kwargs):
        value = metrics["eval_loss"]
        improved = state.best_metric is None or value < state.best_metric
        self.history.append(self.write(state, event="eval", step=state.global_step, val_loss=value, best=improved))


def apply_lora(prm, config):
    """Wrap ``prm``'s backbone in peft LoRA adapters (rank, alpha, target modules from ``config``).

    A head inside the backbone (a published layout's: ``prm.head_modules``, e.g. a token
    classifier's ``score``) trains fully beside the adapters, as Stepmark's own head does.
    """
    from peft import LoraConfig, get_peft_model

    lora = LoraConfig(r=config.lora_rank, lora_alpha=config.lora_alpha, lora_dropout=0.0, bias="none",
                      target_modules=config.lora_target_modules,
                      modules_to_save=list(getattr(prm, "head_modules", ())) or None)
    prm.backbone = get_peft_model(prm.backbone, lora)
    return prm


def merge_lora(prm):
    """Fold LoRA adapters into the backbone's weights: a plain backbone that scores as the adapted one."""
    if hasattr(prm.backbone, "merge_and_unload"):
        prm.backbone = prm.backbone.merge_and_unload()
    return prm


@contextlib.contextmanager
def _heap_frozen():
    """What the process holds as a training starts, left out of garbage collection until it ends.

    The Trainer empties the device cache with a full ``gc.collect()`` as a training starts and
    as it ends (accelerate's ``free_memory`` and ``release_memory``). In a process that has
    imported torch and transformers that is about half a million objects, none of them garbage,
    scanned each time: 0.25 s or more, and more in a worker that has served for a while. Frozen,
    only what the training made is scanned. A process that froze its heap itself (gunicorn's
    workers, ``gunicorn.conf.py``) is left as it is.
    """
    if gc.get_freeze_count():
        yield
        return
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()


def train(prm, train_examples, val_examples, config=None, *, log_path=None, progress=True, on_step=None,
          work_dir=None, resume=False, callbacks=(), merge=True):
    """Train ``prm`` in place on ``train_examples`` with ``PRMTrainer``; returns a summary dict.

    ``val_examples`` drive early stopping (none: train to the end); the best weights are loaded at
    the end. ``work_dir`` holds the Trainer's checkpoints (a temporary directory when None);
    ``resume`` picks up from the newest whole one there. ``log_path`` gets a JSONL metrics log:
    ``train`` events (mean loss since the last one, learning rate, gradient norm) and ``eval``
    events (validation loss). ``on_step(step, total_steps, loss)`` is called at each ``train``
    event (the retrain's progress on the researcher's page, ``scoring.progress``). Under
    ``accelerate launch`` every process calls this; the summary is the same on all of them.
    With LoRA the adapters are merged into the backbone at the end (``merge=False`` keeps them).
    """
    from transformers import EarlyStoppingCallback

    config = config or TrainConfig()
    data = tree_dataset(prm, train_examples, config)
    validation = tree_dataset(prm, val_examples, config) if val_examples else None
    if validation is not None and not validation.rows:
        validation = None
    if not data.rows:
        raise ValueError("no labelled steps to train on")
    if config.lora_rank:
        apply_lora(prm, config)
    dropout_before = [] if config.attention_dropout is None else set_attention_dropout(prm.backbone, config.attention_dropout)
    temporary = None
    if work_dir is None:
        temporary = work_dir = tempfile.mkdtemp(prefix="stepmark-train-")
    shutil.rmtree(Path(work_dir) / PRMTrainer.STAGING, ignore_errors=True)  # a killed save's leftovers
    start = {"train_examples": data.rows, "val_examples": validation.rows if validation else 0,
             "train_trees": len(data.units), "train_tokens": sum(map(len, data.units)), "batches_per_epoch": len(data),
             "labels_past_context": data.dropped + (validation.dropped if validation else 0),
             "config": dataclasses.asdict(config)}
    events = _Events(log_path, on_step, start)
    hooks = [events, *callbacks]
    if validation is not None:
        hooks.append(EarlyStoppingCallback(early_stopping_patience=config.patience))
    args = training_arguments(config, prm, work_dir, validation=validation is not None, progress=progress)
    if config.max_steps:
        # The Trainer lets max_steps override the epochs; here it only cuts them short, as it always did.
        per_process = math.ceil(len(data) / args.world_size)
        args.max_steps = min(config.max_steps, config.epochs * math.ceil(per_process / config.gradient_accumulation))
    prm.train()
    trainer = PRMTrainer(prm, args, train_dataset=data, eval_dataset=validation, warmup_fraction=config.warmup_fraction,
                         callbacks=hooks)
    if not progress:
        from transformers.trainer_callback import PrinterCallback

        trainer.remove_callback(PrinterCallback)  # the metrics log has them
    gathered = None
    try:
        with _heap_frozen():
            trainer.train(resume_from_checkpoint=last_checkpoint(work_dir) if resume else None)
        if trainer.is_fsdp_enabled or trainer.is_deepspeed_enabled:
            # The weights are spread over the processes: the library gathers them into one state
            # dict (FSDP needs fsdp_state_dict_type FULL_STATE_DICT, ZeRO-3 its 16-bit gather on
            # save) that the main process writes; ``gathered_prm`` loads it into a plain PRM.
            gathered = Path(work_dir) / "final" / "model.safetensors"
            trainer.save_model(str(gathered.parent))
    finally:
        if temporary is not None and gathered is None:
            shutil.rmtree(temporary, ignore_errors=True)
    state = trainer.state
    _restore(dropout_before)
    if gathered is None:
        if merge:
            merge_lora(prm)
        if prm.device.type == "cuda":
            prm.backbone.gradient_checkpointing_disable()
            prm.to(torch.bfloat16)  # the dtype it is saved and scored in
        prm.eval()
    stopper = next((c for c in trainer.callback_handler.callbacks if isinstance(c, EarlyStoppingCallback)), None)
    stopped = bool(stopper and stopper.early_stopping_patience_counter >= config.patience)
    summary = {"steps": state.global_step, "total_steps": state.max_steps, "stopped_early": stopped,
               "best_step": state.best_global_step or 0, "best_val_loss": state.best_metric,
               "train_examples": data.rows, "val_examples": start["val_examples"],
               "labels_past_context": start["labels_past_context"], "processes": args.world_size,
               "distributed": str(trainer.accelerator.distributed_type.value)}  # NO, MULTI_CPU, MULTI_GPU, FSDP, DEEPSPEED
    events.write(state, event="end", **summary)
    summary["history"] = events.history
    if gathered is not None:
        summary["gathered_weights"] = str(gathered)  # ``prm`` is sharded: the trained weights are here
    return summary


def gathered_prm(prm, config, weights):
    """A plain ``prm`` (built as the run built it, unwrapped) with the gathered ``weights`` of a
    sharded run (FSDP, DeepSpeed) loaded, LoRA merged, in the dtype it is scored in."""
    from safetensors.torch import load_file

    if config.lora_rank:
        apply_lora(prm, config)
    prm.load_state_dict({k: v.to(prm.device) for k, v in load_file(str(weights)).items()})
    merge_lora(prm)
    if prm.device.type == "cuda":
        prm.to(torch.bfloat16)
    return prm.eval()
