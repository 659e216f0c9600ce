"""PRM checkpoints: a directory that Hugging Face and Stepmark can both read.

Contents:

- the backbone, ``save_pretrained`` (``config.json`` + ``model.safetensors``), and the tokenizer
  with the step token in it;
- ``prm_head.safetensors``: the two-class head;
- ``stepmark_prm.json``: what scoring needs besides the weights (separator token, label
  mapping, neutral policy, aggregation, max length and what becomes of longer solutions,
  whether the backbone needs the causal mask),
  where it came from (base model, training-data hash, ``lineage``) and how it did (metrics).

A fine-tuned PRM of a published layout (``scoring.prm.adapters``: Qwen2.5-Math-PRM,
Math-Shepherd, a TRL token classifier) is saved in that layout, its own head and step token
kept (``save_layout``: the files its loader reads), with ``stepmark_prm.json`` beside them
naming the ``layout`` (and its ``layout_options``). ``scoring.prm.adapters.load_adapter("stepmark",
path)`` (the scorer's loader) loads it through that layout's adapter, so it scores as it trained;
``load_checkpoint`` here loads Stepmark's own layout, ``layout`` "stepmark" (checkpoints written
before the field existed have none and are Stepmark's).

A checkpoint is written into a temporary directory beside its destination and renamed into
place, so a reader sees either no checkpoint or a whole one, never half of one. Replacing an
existing checkpoint moves the old one aside first; between the two renames the path is briefly
absent, never partial.
"""
import hashlib
import json
import os
import shutil
import tempfile
from pathlib import Path

from safetensors.torch import load_file, save_file

from scoring.prm.model import (
    LABELS,
    PRM,
    load_backbone,
    load_tokenizer,
    probe_causality,
)

META_FILE = "stepmark_prm.json"
HEAD_FILE = "prm_head.safetensors"
FORMAT_VERSION = 1


def file_hash(*paths):
    """SHA-256 over the bytes of ``paths`` (the training data), hex."""
    digest = hashlib.sha256()
    for path in paths:
        with open(path, "rb") as handle:
            for chunk in iter(lambda: handle.read(1 << 20), b""):
                digest.update(chunk)
    return digest.hexdigest()


def save_checkpoint(prm, path, *, meta=None):
    """Write ``prm`` to the directory ``path`` atomically; ``meta`` adds to stepmark_prm.json.

    Weights are saved as they are in memory (the caller decides the dtype). ``prm`` is a ``PRM``
    or a published layout's adapter (``scoring.prm.adapters``), written in its own layout.
    """
    path = Path(path).resolve()
    path.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{path.name}.tmp-", dir=path.parent))
    try:
        layout = getattr(prm, "layout", "stepmark")
        if layout == "stepmark":
            prm.backbone.save_pretrained(staging, safe_serialization=True)
            prm.tokenizer.save_pretrained(staging)
            save_file({k: v.detach().contiguous().cpu() for k, v in prm.head.state_dict().items()}, staging / HEAD_FILE)
        else:
            prm.save_layout(staging)
        info = {
            "format": "stepmark-prm",
            "version": FORMAT_VERSION,
            "layout": layout,
            "layout_options": dict(getattr(prm, "options", {})),
            "step_token": prm.step_token,
            "labels": {str(k): v for k, v in LABELS.items()},
            "max_length": prm.max_length,
            "overflow": prm.overflow,
            "needs_causal_mask": prm.needs_causal_mask,
            "dtype": str(prm.backbone.dtype).removeprefix("torch."),
            **(meta or {}),
        }
        (staging / META_FILE).write_text(json.dumps(info, indent=2, sort_keys=True) + "\n", encoding="utf-8")
        _fsync_tree(staging)
        _swap_into_place(staging, path)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return path


def _fsync_tree(directory):
    # The rename must not land before the data: flush every file first.
    for item in directory.iterdir():
        if item.is_file():
            with open(item, "rb") as handle:
                os.fsync(handle.fileno())


def _swap_into_place(staging, path):
    if not path.exists():
        os.replace(staging, path)
        return
    old = Path(tempfile.mkdtemp(prefix=f".{path.name}.old-", dir=path.parent))
    os.replace(path, old / "checkpoint")
    try:
        os.replace(staging, path)
    except BaseException:
        os.replace(old / "checkpoint", path)  # put the old one back: nothing is lost
        raise
    shutil.rmtree(old, ignore_errors=True)


def read_meta(path):
    """The stepmark_prm.json of the checkpoint at ``path``; a clear error if it is not one."""
    meta_path = Path(path) / META_FILE
    if not meta_path.is_file():
        raise FileNotFoundError(f"{path} is not a Stepmark PRM checkpoint (no {META_FILE})")
    meta = json.loads(meta_path.read_text(encoding="utf-8"))
    if meta.get("format") != "stepmark-prm" or meta.get("version") != FORMAT_VERSION:
        raise ValueError(f"{meta_path}: unsupported checkpoint format {meta.get('format')!r} v{meta.get('version')!r}")
    return meta


def update_meta(path, **fields):
    """Set ``fields`` in the stepmark_prm.json of the checkpoint at ``path``, atomically (temp file, rename)."""
    meta = {**read_meta(path), **fields}
    staging = Path(path) / f".{META_FILE}.tmp"
    staging.write_text(json.dumps(meta, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    with open(staging, "rb") as handle:
        os.fsync(handle.fileno())
    os.replace(staging, Path(path) / META_FILE)
    return meta


def load_checkpoint(path, *, device=None, dtype=None):
    """The PRM saved at ``path``, ready to score (eval mode).

    On the same device and dtype it scores exactly as the process that saved it. The causal
    mask decision is probed again and must agree with the one recorded. A fine-tuned checkpoint
    of a published layout (``meta["layout"]``) is refused here: ``scoring.prm.adapters.load_adapter``
    reads every layout.
    """
    meta = read_meta(path)
    if meta.get("layout", "stepmark") != "stepmark":
        raise ValueError(f"{path} holds a fine-tuned {meta['layout']} PRM, not Stepmark's backbone and head: load it "
                         "with scoring.prm.adapters.load_adapter('stepmark', path)")
    tokenizer = load_tokenizer(path)
    backbone = load_backbone(path, device=device, dtype=dtype)
    # Checkpoints written before the sliding window left the steps past the context unscored.
    prm = PRM(backbone, tokenizer, step_token=meta["step_token"], max_length=meta["max_length"],
              overflow=meta.get("overflow", "unscored"))
    head = load_file(str(Path(path) / HEAD_FILE))
    prm.head.load_state_dict({k: v.to(prm.head.weight.dtype) for k, v in head.items()})
    prm.needs_causal_mask = probe_causality(prm)
    if meta.get("needs_causal_mask") is not None and meta["needs_causal_mask"] != prm.needs_causal_mask:
        raise ValueError(f"{path}: the backbone's attention changed since training (causal mask "
                         f"{meta['needs_causal_mask']} then, {prm.needs_causal_mask} now)")
    prm.meta = meta
    return prm.eval()
