"""Which layout a PRM directory is in, and what it lacks, from its files alone (no torch).

The web process registers checkpoints (``scoring.registry``) and must never import torch, so
this module reads only JSON: ``config.json``, the tokenizer's files, ``stepmark_prm.json``, the
tensor names of ``model.safetensors.index.json`` or of each safetensors file's header (8 bytes of
length, then a JSON table). Loading the weights, finding the step token and scoring a smoke
example is ``scoring.prm.adapters.validate``, in a worker.

Layouts (``LAYOUTS``; ``scoring.prm.adapters`` loads each):

- ``stepmark``: a ``python -m scoring train`` checkpoint (``stepmark_prm.json``, ``prm_head.safetensors``),
  or a fine-tuned checkpoint of another layout: the files of that layout with ``stepmark_prm.json``
  naming it (its ``layout``; ``scoring.prm.checkpoint``);
- ``qwen-prm``: Qwen2.5-Math-PRM (``model.*`` + ``score.0.*``/``score.2.*`` tensors, ``<extra_0>``, chat template);
- ``math-shepherd``: a ``*ForCausalLM`` read at the step tag ``ки`` (``+``/``-``);
- ``token-classification``: a ``*ForTokenClassification`` with 2 labels, as TRL's ``PRMTrainer``
  writes it, read at its step separator (``step_separator``, by default ``"\\n"`` as in TRL).

``detect`` tells them apart in that order of evidence: ``stepmark_prm.json``; a
``*ForTokenClassification`` architecture; ``score.0.weight`` among the tensors; a
``*ForCausalLM`` architecture. A token-classification model trained in the Qwen2.5-Math-PRM
way (``<extra_0>``, chat template) is named ``qwen-prm`` by the researcher.
"""
import json
import struct
from pathlib import Path

LAYOUTS = {
    "stepmark": "a Stepmark checkpoint (python -m scoring train): backbone, prm_head.safetensors, stepmark_prm.json",
    "qwen-prm": "Qwen2.5-Math-PRM: a Qwen2 model with the score.0/score.2 head, read at <extra_0> after each step",
    "math-shepherd": "Math-Shepherd: a causal LM, P(correct) from its '+'/'-' logits at the step tag 'ки'",
    "token-classification": "a *ForTokenClassification model with 2 labels (TRL PRMTrainer output), read at "
                            "its step separator",
}
AUTO = "auto"
QWEN_HEAD = ("score.0.weight", "score.0.bias", "score.2.weight", "score.2.bias")
TOKENIZER_FILES = ("tokenizer.json", "tokenizer_config.json", "vocab.txt", "vocab.json", "tokenizer.model")
WEIGHT_FILES = ("model.safetensors", "model.safetensors.index.json", "pytorch_model.bin",
                "pytorch_model.bin.index.json")


class LayoutError(ValueError):
    """What a directory lacks for a layout, in one sentence naming the file, tensor or setting."""


def _json(path):
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise LayoutError(f"{path} cannot be read as JSON ({exc})") from exc


def tensor_names(path):
    """The tensor names in the directory's safetensors files (through the index when sharded);
    None when its weights are not safetensors (``pytorch_model.bin``: names unknown without torch)."""
    path = Path(path)
    index = path / "model.safetensors.index.json"
    if index.is_file():
        weight_map = _json(index).get("weight_map") or {}
        missing = sorted({file for file in weight_map.values() if not (path / file).is_file()})
        if missing:
            raise LayoutError(f"{path}: the shard {missing[0]} named in model.safetensors.index.json is missing")
        return set(weight_map)
    files = sorted(path.glob("*.safetensors"))
    if not files:
        return None
    names = set()
    for file in files:
        try:
            with open(file, "rb") as handle:
                (size,) = struct.unpack("<Q", handle.read(8))
                if size > 100_000_000:
                    raise ValueError("header too large")
                header = json.loads(handle.read(size))
        except (OSError, ValueError, struct.error) as exc:
            raise LayoutError(f"{file} is not a safetensors file ({exc})") from exc
        names.update(name for name in header if name != "__metadata__")
    return names


def _architectures(config):
    return [str(name) for name in config.get("architectures") or []]


def _labels(config):
    if "id2label" in config:
        return len(config["id2label"])
    return config.get("num_labels", 2)


def detect(path, config=None):
    """The layout the directory's files point to, or None when they do not tell."""
    path = Path(path)
    if (path / "stepmark_prm.json").is_file():
        return "stepmark"
    config = _json(path / "config.json") if config is None else config
    architectures = _architectures(config)
    if any(name.endswith("ForTokenClassification") for name in architectures):
        return "token-classification"
    names = tensor_names(path)
    if names is not None and "score.0.weight" in names:
        return "qwen-prm"
    if any(name.endswith("ForCausalLM") for name in architectures):
        return "math-shepherd"
    return None


def inspect(path, layout=AUTO):
    """The layout of the PRM directory ``path`` (``layout``, or detected when ``auto``).

    Raises ``LayoutError`` naming what is missing: the directory, ``config.json``, the
    tokenizer's files, the weights, a tensor, the architecture or label count a layout needs.
    """
    if layout != AUTO and layout not in LAYOUTS:
        raise LayoutError(f"Unknown layout {layout!r}; choose from {AUTO}, {', '.join(LAYOUTS)}.")
    path = Path(path)
    if not path.is_absolute():
        raise LayoutError(f"{path}: give an absolute path to a directory the workers can read.")
    try:
        found = path.is_dir()
    except OSError:
        found = False
    if not found:
        raise LayoutError(f"No directory {path} on the server.")
    if not (path / "config.json").is_file():
        raise LayoutError(f"{path} has no config.json: it is not a Hugging Face model directory.")
    config = _json(path / "config.json")
    if not any((path / name).is_file() for name in TOKENIZER_FILES):
        raise LayoutError(f"{path} has no tokenizer (none of {', '.join(TOKENIZER_FILES)}).")
    if not any((path / name).is_file() for name in WEIGHT_FILES) and not list(path.glob("*.safetensors")):
        raise LayoutError(f"{path} has no weights (none of {', '.join(WEIGHT_FILES)}).")
    if layout == AUTO:
        layout = detect(path, config)
        if layout is None:
            raise LayoutError(
                f"{path}: cannot tell its layout (no stepmark_prm.json, no *ForTokenClassification or "
                f"*ForCausalLM architecture in config.json, no score.0.weight tensor); name one of {', '.join(LAYOUTS)}.")
    architectures = _architectures(config)
    if layout == "stepmark":
        if not (path / "stepmark_prm.json").is_file():
            raise LayoutError(f"{path} is not a Stepmark checkpoint: no stepmark_prm.json.")
        inner = _json(path / "stepmark_prm.json").get("layout", "stepmark")
        if inner == "stepmark":
            if not (path / "prm_head.safetensors").is_file():
                raise LayoutError(f"{path} is not a Stepmark checkpoint: no prm_head.safetensors.")
        elif inner not in LAYOUTS:
            raise LayoutError(f"{path}: stepmark_prm.json names an unknown layout {inner!r}.")
        else:  # a fine-tuned checkpoint of a published layout: that layout's files
            _check(path, inner, config, architectures)
        return layout
    _check(path, layout, config, architectures)
    return layout


def _check(path, layout, config, architectures):
    """Raise a LayoutError naming what the directory lacks for the published ``layout``."""
    if layout == "qwen-prm":
        if not any(name.endswith("ForTokenClassification") for name in architectures):
            names = tensor_names(path)
            missing = [name for name in QWEN_HEAD if names is not None and name not in names]
            if missing:
                raise LayoutError(f"{path} is not in the Qwen2.5-Math-PRM layout: no {', '.join(missing)} tensor"
                                  f"{'s' if len(missing) > 1 else ''}.")
    elif layout == "token-classification":
        if not any(name.endswith("ForTokenClassification") for name in architectures):
            raise LayoutError(f"{path}: config.json names no *ForTokenClassification architecture "
                              f"({', '.join(architectures) or 'none'}).")
        if _labels(config) != 2:
            raise LayoutError(f"{path}: a token-classification PRM needs 2 labels, config.json has {_labels(config)}.")
    elif layout == "math-shepherd":
        if not any(name.endswith("ForCausalLM") for name in architectures):
            raise LayoutError(f"{path}: config.json names no *ForCausalLM architecture "
                              f"({', '.join(architectures) or 'none'}); Math-Shepherd is a causal LM.")
