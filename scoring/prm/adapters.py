"""Scoring with PRM checkpoints in published layouts, through the same scorer as Stepmark's own.

Every adapter returns a torch module the scorer (``scoring.prm.scorer.score_solutions``) takes as
it takes a ``scoring.prm.model.PRM``: it has ``tokenizer``, ``step_token_id``, ``max_length``,
``overflow`` (a sliding window past the context, as Stepmark's own default) and ``device``,
and its ``forward(input_ids, attention_mask)`` gives two logits per token, ``(INCORRECT,
CORRECT)``, read at the step separator after each step. On top of that it has
``prepare(problem, steps)``, which puts the text into the shape the checkpoint was trained on
(chat template, step prefixes); ``score_solutions`` below applies it. Each also reads its step
head apart from its backbone, ``step_features`` (the head's input at every token) and
``step_logits`` (features -> the two logits), so that the scorer's uncertainty passes run the
backbone once and the head several times on dropped-out features (``scoring.prm.scorer``); its
``forward`` is exactly the two composed. Input is still built by
``scoring.prm.inputs.encode_solution`` (each step tokenised on its own, the separator id after
it), so the score of step k depends on the problem and steps 1..k only.

Layouts (``ADAPTERS``):

- ``stepmark``: a checkpoint written by ``python -m scoring train``.
- ``qwen-prm``: Qwen2.5-Math-PRM. A causal LM backbone, a two-class head at every token, read
  at ``<extra_0>`` after each step; P(correct) = softmax(logits)[1]. The released checkpoint is
  ``Qwen2ForProcessRewardModel`` (remote code): ``model`` (a ``Qwen2Model``) and ``score`` =
  ``Linear(hidden, hidden) -> ReLU -> Linear(hidden, 2)``, stored as ``model.*`` and
  ``score.0.*`` / ``score.2.*`` tensors. The adapter loads ``model.*`` with ``AutoModel``
  (transformers' own Qwen2 code, ``trust_remote_code`` off) and rebuilds ``score`` from the
  tensors, so no remote code runs. A directory whose ``config.json`` names a
  ``*ForTokenClassification`` architecture with two labels (TRL's PRM trainer writes those) is
  loaded with ``AutoModelForTokenClassification`` and its ``logits`` are used as they are: read as
  its base model's last hidden state through its classifier (``score`` or ``classifier``, a
  ``Linear`` to 2), checked on a probe input at load time against the model's own ``logits``. A
  model whose classifier is not that (``has_step_head`` false, ``classifier_of``) is scored
  through its own forward, and its uncertainty passes fall back to its own dropout layers.
  Text: the tokenizer's chat template with the system prompt the model card uses, the problem
  as the user turn, and the steps as the assistant turn, ``<extra_0>`` after each.
- ``math-shepherd``: peiyi9979/math-shepherd-mistral-7b-prm. A causal LM; at the step tag
  ``ки`` after each step, P(correct) = softmax([logit("+"), logit("-")])[0] over the LM head.
  Only the two LM-head rows are applied (never the whole vocabulary): the same numbers, a
  fraction of the memory. Text: ``"{problem} Step 1: ... ки\\nStep 2: ... ки"`` as on the model
  card (the ``Step k:`` prefixes can be switched off).
- ``token-classification``: what TRL's ``PRMTrainer`` writes: a ``*ForTokenClassification`` with
  two labels (1 = correct), read at the step separator after each step (``step_separator``,
  ``"\\n"`` by default as in TRL's ``PRMConfig``; it must be one token). Text as TRL builds it:
  the BOS token when the tokenizer has one, the problem, each step and the separator; no template.

``scoring.prm.layouts`` tells the layout from the files (no torch); ``validate`` loads a
directory, finds its step token and scores a smoke example, as a registration does in a worker.

Fine-tuning: the same forward contract is what ``scoring.prm.train.PRMTrainer``'s loss reads
(two logits at each labelled separator of a packed prefix tree, under its 4D mask and depth
positions), so an adapter trains as Stepmark's PRM does: its own head (the ``score`` MLP, a token
classifier's head, Math-Shepherd's ``+``/``-`` rows of the LM head) on text in its own shape
(``prepare``, applied in training too). ``save_layout`` writes it back in its layout
(``scoring.prm.checkpoint.save_checkpoint`` adds stepmark_prm.json naming it), and
``load_adapter("stepmark", path)`` reads such a checkpoint through the layout's adapter again.
``refuse_leaks`` turns away a layout whose backbone lets a step see the steps after it.
"""
import json
import shutil
from pathlib import Path

import torch
from torch import nn

from scoring.prm import scorer
from scoring.prm.layouts import LAYOUTS
from scoring.prm.model import (
    PRM,
    _leaks_future,
    backbone_mask,
    context_length,
    default_device,
    load_tokenizer,
)

ADAPTERS = tuple(LAYOUTS)  # stepmark, qwen-prm, math-shepherd, token-classification
QWEN_STEP_TOKEN = "<extra_0>"
QWEN_SYSTEM = "Please reason step by step, and put your final answer within \\boxed{}."
SHEPHERD_STEP_TAG, SHEPHERD_GOOD, SHEPHERD_BAD = "ки", "+", "-"
TRL_STEP_SEPARATOR = "\n"  # TRL's PRMConfig.step_separator default
# Options a layout takes (``load_adapter``'s keyword arguments, stored on a registered checkpoint).
OPTIONS = {"token-classification": ("step_separator",)}


def score_solutions(model, solutions, **options):
    """The one scorer, ``scoring.prm.scorer.score_solutions`` (which applies the model's ``prepare``)."""
    return scorer.score_solutions(model, solutions, **options)


def load_adapter(name, path, *, device=None, dtype=None, **options):
    """The scorer-ready model at the directory ``path`` in layout ``name`` (see ``ADAPTERS``), eval mode.

    ``options`` are the layout's own (``OPTIONS``): ``step_separator`` for ``token-classification``.
    """
    unknown = sorted(set(options) - set(OPTIONS.get(name, ())))
    if unknown:
        raise ValueError(f"the {name} layout takes no option {unknown[0]!r}")
    path = Path(path)
    if not path.is_dir():
        raise FileNotFoundError(f"{path}: no such model directory")
    device = torch.device(device or default_device())
    if name == "stepmark":  # its own dtype rule (scoring.prm.model.load_backbone)
        return load_stepmark(path, device=device, dtype=dtype)
    if dtype is None:
        dtype = torch.bfloat16 if device.type == "cuda" else torch.float32
    if name == "qwen-prm":
        return load_qwen_prm(path, device=device, dtype=dtype)
    if name == "math-shepherd":
        return load_math_shepherd(path, device=device, dtype=dtype)
    if name == "token-classification":
        return load_token_classification(path, device=device, dtype=dtype, **options)
    raise ValueError(f"unknown adapter {name!r}; choose from {', '.join(ADAPTERS)}")


def load_stepmark(path, *, device, dtype=None):
    """A directory with ``stepmark_prm.json``: Stepmark's own PRM (``load_checkpoint``), or a fine-tuned
    checkpoint of a published layout (its ``layout``; ``scoring.prm.checkpoint``) through that layout's
    adapter, with its options, context and overflow as saved."""
    from scoring.prm.checkpoint import load_checkpoint, read_meta

    meta = read_meta(path)
    layout = meta.get("layout", "stepmark")
    if layout == "stepmark":
        return load_checkpoint(path, device=device, dtype=dtype)
    if layout not in ADAPTERS:
        raise ValueError(f"{path}: stepmark_prm.json names an unknown layout {layout!r}")
    model = load_adapter(layout, path, device=device, dtype=dtype, **(meta.get("layout_options") or {}))
    model.max_length, model.overflow = meta["max_length"], meta.get("overflow", "window")
    model.meta = {**model.meta, **meta}
    return model.eval()


def _config(path):
    config_path = Path(path) / "config.json"
    if not config_path.is_file():
        raise FileNotFoundError(f"{path} is not a Hugging Face model directory (no config.json)")
    return json.loads(config_path.read_text(encoding="utf-8"))


def _tensors(path, prefix):
    """The tensors named ``prefix*`` in the checkpoint's safetensors files (sharded or not)."""
    from safetensors import safe_open

    path = Path(path)
    index = path / "model.safetensors.index.json"
    if index.is_file():
        names = json.loads(index.read_text(encoding="utf-8"))["weight_map"]
        files = sorted({file for key, file in names.items() if key.startswith(prefix)})
    else:
        files = [p.name for p in sorted(path.glob("*.safetensors"))]
    found = {}
    for file in files:
        with safe_open(str(path / file), framework="pt") as handle:
            found.update({key: handle.get_tensor(key) for key in handle.keys() if key.startswith(prefix)})
    return found


def _token_id(tokenizer, token, *, path, what):
    token_id = tokenizer.convert_tokens_to_ids(token)
    if token_id is None or token_id == tokenizer.unk_token_id:
        ids = tokenizer.encode(token, add_special_tokens=False)
        if len(ids) != 1:
            raise ValueError(f"{path}: the tokenizer has no single token for the {what} {token!r}")
        token_id = ids[0]
    return token_id


def _mask(attention_mask, model):
    """A padding mask as it is; a packed prefix tree's 4D bool mask as ``model``'s attention takes it."""
    return backbone_mask(attention_mask, model) if attention_mask.dim() == 4 else attention_mask


class _Adapted(nn.Module):
    """What every adapter shares: tokenizer, separator, context, device; no extra mask needed (causal LMs).

    A subclass gives ``step_features`` and ``step_logits``; ``forward`` is the two composed.

    ``backbone`` is the Hugging Face model it wraps, so the trainer (``scoring.prm.train``) handles
    it as it handles a ``PRM``'s: LoRA, attention dropout, gradient checkpointing. ``layout`` and
    ``options`` say how it was loaded; ``save_layout`` writes it back in that layout.
    """

    needs_causal_mask = False
    overflow = "window"  # past the context; the scorer's option can say "unscored" instead
    has_step_head = True  # step_features / step_logits work (scoring.prm.scorer's head-dropout passes)
    layout = None

    def __init__(self, tokenizer, step_token, step_token_id, max_length):
        super().__init__()
        self.tokenizer, self.step_token, self.step_token_id = tokenizer, step_token, step_token_id
        self.max_length = max_length
        self.meta = {}

    @property
    def device(self):
        return next(self.parameters()).device

    @property
    def options(self):
        """The layout's options (``OPTIONS``) as ``load_adapter`` takes them back."""
        return {}

    @property
    def head_modules(self):
        """Names of the backbone's modules that are the layout's head (trained fully under LoRA); not an
        LM head tied to the embedding table (a copy would untie them: it stays as it is)."""
        names = [name for name in ("score", "classifier", "lm_head") if isinstance(getattr(self.backbone, name, None), nn.Module)]
        tied = getattr(self.backbone.config, "tie_word_embeddings", False) or (
            "lm_head" in names and self.backbone.lm_head.weight is self.backbone.get_input_embeddings().weight)
        return [name for name in names if not (name == "lm_head" and tied)]

    def prepare(self, problem, steps):
        return problem, steps

    def forward(self, input_ids, attention_mask, position_ids=None):
        return self.step_logits(self.step_features(input_ids, attention_mask, position_ids))

    activation_checkpointing_enable = PRM.activation_checkpointing_enable
    gradient_checkpointing_enable = PRM.activation_checkpointing_enable

    def save_layout(self, directory):
        """Write the weights and the tokenizer into ``directory`` in this model's own layout."""
        self.backbone.save_pretrained(directory, safe_serialization=True)
        self.tokenizer.save_pretrained(directory)


class QwenPRM(_Adapted):
    """Qwen2.5-Math-PRM layout: ``backbone`` gives hidden states and ``head`` two logits, or ``backbone``
    (a token classifier, ``head`` None) gives ``logits``."""

    layout = "qwen-prm"

    def __init__(self, body, head, tokenizer, *, step_token=QWEN_STEP_TOKEN, system=QWEN_SYSTEM, max_length=None, path=None):
        step_id = _token_id(tokenizer, step_token, path=path, what="step separator")
        super().__init__(tokenizer, step_token, step_id, max_length or context_length(body, tokenizer))
        self.backbone, self.head, self.system = body, head, system

    def prepare(self, problem, steps):
        if getattr(self.tokenizer, "chat_template", None):
            messages = [{"role": "system", "content": self.system}, {"role": "user", "content": problem}]
            problem = self.tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
        return problem, steps

    classifier_name = None  # a token-classification body's classifier, read apart (``classifier_of``)

    @property
    def has_step_head(self):
        return self.head is not None or self.classifier is not None

    @property
    def classifier(self):
        """A token-classification body's classifier when its logits are base model -> it, else None."""
        return None if self.head is not None or self.classifier_name is None else getattr(self._model, self.classifier_name)

    @property
    def _model(self):
        """The Hugging Face model under a peft wrapper (LoRA training), or the backbone itself."""
        return self.backbone.get_base_model() if hasattr(self.backbone, "get_base_model") else self.backbone

    def step_features(self, input_ids, attention_mask, position_ids=None):
        if not self.has_step_head:
            raise TypeError(f"{type(self.backbone).__name__}: its classifier cannot be read apart from its base model")
        base = self.backbone if self.head is not None else self._model.base_model
        return base(input_ids=input_ids, attention_mask=_mask(attention_mask, self.backbone), position_ids=position_ids,
                    use_cache=False).last_hidden_state

    def step_logits(self, features):
        return (self.head if self.head is not None else self.classifier)(features).float()

    def forward(self, input_ids, attention_mask, position_ids=None):
        if self.has_step_head:
            return super().forward(input_ids, attention_mask, position_ids)
        return self.backbone(input_ids=input_ids, attention_mask=_mask(attention_mask, self.backbone), position_ids=position_ids,
                         use_cache=False).logits.float()


    def save_layout(self, directory):
        """A token classifier as ``save_pretrained`` writes it; the released layout as released: one
        safetensors file of ``model.*`` and ``score.0/score.2`` tensors beside the config it was read
        with (its architecture and ``auto_map`` kept, and the remote code's ``*.py`` files copied from the
        directory it was loaded from), so ``load_qwen_prm`` reads it as it read the original."""
        if self.head is None:
            return super().save_layout(directory)
        from safetensors.torch import save_file

        tensors = {f"model.{k}": v for k, v in self.backbone.state_dict().items()}
        tensors |= {f"score.{k}": v for k, v in self.head.state_dict().items()}
        save_file({k: v.detach().contiguous().cpu() for k, v in tensors.items()}, str(Path(directory) / "model.safetensors"),
                  metadata={"format": "pt"})
        self.backbone.config.save_pretrained(directory)
        self.tokenizer.save_pretrained(directory)
        source = self.meta.get("path")
        for code in sorted(Path(source).glob("*.py")) if source else ():
            shutil.copyfile(code, Path(directory) / code.name)


def classifier_of(body):
    """The attribute name of the 2-label classifier of a ``*ForTokenClassification`` model whose
    logits are its base model's last hidden state through it (the generic and BERT-style ones:
    ``score`` or ``classifier``, a ``Linear``, after a dropout that is the identity in eval mode),
    or None.

    Checked on a probe input against the model's own ``logits``: a model that does more (a CRF, a
    pooled feature, a head that is not one ``Linear``) is read whole instead.
    """
    name = next((name for name in ("score", "classifier") if isinstance(getattr(body, name, None), nn.Linear)), None)
    layer, base = getattr(body, name or "", None), getattr(body, "base_model", body)
    if layer is None or layer.out_features != 2 or base is body:
        return None
    was_training = body.training
    body.eval()
    try:
        with torch.inference_mode():
            ids = torch.arange(1, 9, device=layer.weight.device).remainder(body.config.vocab_size)[None]
            mask = torch.ones_like(ids)
            whole = body(input_ids=ids, attention_mask=mask, use_cache=False).logits.float()
            split = layer(base(input_ids=ids, attention_mask=mask, use_cache=False).last_hidden_state).float()
    except (TypeError, ValueError, AttributeError):
        return None
    finally:
        body.train(was_training)
    tolerance = 1e-4 if layer.weight.dtype == torch.float32 else 2e-2
    return name if whole.shape == split.shape and bool(((whole - split).abs().max()) <= tolerance) else None



def qwen_score_head(hidden_size, tensors, *, path=None):
    """``Linear -> ReLU -> Linear(2)`` from ``score.0.*`` and ``score.2.*`` tensors (Qwen2ForProcessRewardModel)."""
    needed = ("score.0.weight", "score.0.bias", "score.2.weight", "score.2.bias")
    missing = [name for name in needed if name not in tensors]
    if missing:
        raise ValueError(f"{path}: neither a *ForTokenClassification model nor a Qwen2ForProcessRewardModel "
                         f"checkpoint (no {', '.join(missing)} tensors)")
    head = nn.Sequential(nn.Linear(hidden_size, tensors["score.0.weight"].shape[0]), nn.ReLU(),
                         nn.Linear(tensors["score.0.weight"].shape[0], 2))
    if tensors["score.2.weight"].shape[0] != 2:
        raise ValueError(f"{path}: score.2 has {tensors['score.2.weight'].shape[0]} outputs, expected 2")
    head.load_state_dict({name.removeprefix("score."): tensors[name] for name in needed})
    return head


class TokenClassificationPRM(QwenPRM):
    """TRL ``PRMTrainer`` output: a token classifier's two logits at the step separator, no chat template."""

    layout = "token-classification"

    def __init__(self, body, tokenizer, *, step_separator=TRL_STEP_SEPARATOR, path=None):
        super().__init__(body, None, tokenizer, step_token=step_separator, system=None, path=path)

    @property
    def options(self):
        return {"step_separator": self.step_token}

    def prepare(self, problem, steps):
        return problem, steps


def load_token_classification(path, *, device, dtype, step_separator=TRL_STEP_SEPARATOR):
    from transformers import AutoModelForTokenClassification

    config = _config(path)
    if not any(name.endswith("ForTokenClassification") for name in config.get("architectures") or []):
        raise ValueError(f"{path}: config.json names no *ForTokenClassification architecture")
    tokenizer = load_tokenizer(path)
    _token_id(tokenizer, step_separator, path=path, what="step separator")  # a clear error before loading weights
    body = AutoModelForTokenClassification.from_pretrained(str(path), local_files_only=True, trust_remote_code=False,
                                                           dtype=dtype)
    if body.config.num_labels != 2:
        raise ValueError(f"{path}: a token-classification PRM needs 2 labels, this one has {body.config.num_labels}")
    model = TokenClassificationPRM(body, tokenizer, step_separator=step_separator, path=path).to(device)
    model.classifier_name = classifier_of(body)
    model.meta = {"adapter": "token-classification", "path": str(path), "step_separator": step_separator}
    return model.eval()


def load_qwen_prm(path, *, device, dtype):
    from transformers import AutoModel, AutoModelForTokenClassification

    config = _config(path)
    tokenizer = load_tokenizer(path)
    common = dict(local_files_only=True, trust_remote_code=False, dtype=dtype)
    if any(name.endswith("ForTokenClassification") for name in config.get("architectures") or []):
        body = AutoModelForTokenClassification.from_pretrained(str(path), **common)
        if body.config.num_labels != 2:
            raise ValueError(f"{path}: a token-classification PRM needs 2 labels, this one has {body.config.num_labels}")
        head = None
    else:
        body = AutoModel.from_pretrained(str(path), **common)
        head = qwen_score_head(body.config.hidden_size, _tensors(path, "score."), path=path).to(dtype)
    model = QwenPRM(body, head, tokenizer, path=path).to(device)
    model.classifier_name = classifier_of(body) if head is None else None
    model.meta = {"adapter": "qwen-prm", "path": str(path)}
    return model.eval()


class MathShepherdPRM(_Adapted):
    """Math-Shepherd layout: the LM head's ``+``/``-`` logits at the step tag."""

    layout = "math-shepherd"

    def __init__(self, lm, tokenizer, *, step_tag=SHEPHERD_STEP_TAG, good=SHEPHERD_GOOD, bad=SHEPHERD_BAD,
                 step_prefix=True, max_length=None, path=None):
        step_id = _token_id(tokenizer, step_tag, path=path, what="step tag")
        super().__init__(tokenizer, step_tag, step_id, max_length or context_length(lm, tokenizer))
        self.backbone = lm
        self.good_id = _token_id(tokenizer, good, path=path, what="good token")
        self.bad_id = _token_id(tokenizer, bad, path=path, what="bad token")
        self.step_prefix = step_prefix

    def prepare(self, problem, steps):
        if not self.step_prefix:
            return problem, steps
        return problem, [("\n" if k else " ") + f"Step {k + 1}: {text}" for k, text in enumerate(steps)]

    def step_features(self, input_ids, attention_mask, position_ids=None):
        """The decoder's last hidden states (after its final norm): what the LM head reads."""
        return self.backbone.get_decoder()(input_ids=input_ids, attention_mask=_mask(attention_mask, self.backbone),
                                     position_ids=position_ids, use_cache=False).last_hidden_state

    def step_logits(self, hidden):
        out = self.backbone.get_output_embeddings()
        rows = [self.bad_id, self.good_id]  # (INCORRECT, CORRECT): softmax over them is softmax([+, -]) reversed
        logits = hidden @ out.weight[rows].T
        if getattr(out, "bias", None) is not None:
            logits = logits + out.bias[rows]
        return logits.float()


def load_math_shepherd(path, *, device, dtype, step_prefix=True):
    from transformers import AutoModelForCausalLM

    _config(path)
    lm = AutoModelForCausalLM.from_pretrained(str(path), local_files_only=True, trust_remote_code=False, dtype=dtype)
    model = MathShepherdPRM(lm, load_tokenizer(path), step_prefix=step_prefix, path=path).to(device)
    model.meta = {"adapter": "math-shepherd", "path": str(path)}
    return model.eval()


def refuse_leaks(model, path=None):
    """Raise a ValueError when ``model`` (a published layout) lets a step's logits see later tokens.

    The adapters read every layout through a causal LM's own attention (``needs_causal_mask`` False):
    a layout built on a bidirectional backbone (a BERT token classifier) would train and score each
    step on the steps after it. Fine-tuning checks this first (``scoring.prm.training_run``).
    """
    was_training = model.training
    model.eval()
    try:
        leaks = _leaks_future(model)
    finally:
        model.train(was_training)
    if leaks:
        raise ValueError(f"{path}: the {model.layout} model's {type(model.backbone).__name__} attends to later "
                         "tokens, so a step's score would depend on the steps after it; Stepmark cannot fine-tune "
                         "or score it in this layout (it needs a causal backbone)")
    return model


# A registration's smoke example: two short steps (``validate``).
SMOKE_EXAMPLE = ("What is 2 + 3?", ["2 + 3 = 5.", "So the answer is 5."])


def validate(name, path, *, device=None, **options):
    """Load the PRM at ``path`` in layout ``name``, find its step token, score a smoke example.

    Returns what a registration stores: the layout, the step token and its id, the context
    length and the smoke example's step scores. Raises ``ValueError``/``OSError`` (a layout
    error, a missing file, tensor or token) with the adapter's message otherwise.
    """
    from scoring.prm.layouts import inspect

    layout = inspect(path, name)
    model = load_adapter(layout, path, device=device, **options)
    return {"layout": layout, "options": options, **smoke_check(model, path)}


def smoke_check(model, path=None):
    """Score ``SMOKE_EXAMPLE`` with a loaded model: every step must get a probability, else a ValueError."""
    import math

    result = score_solutions(model, [SMOKE_EXAMPLE])[0]
    bad = [p for p in result.step_scores if p is None or not math.isfinite(p) or not 0 <= p <= 1]
    if bad or len(result.step_scores) != len(SMOKE_EXAMPLE[1]):
        raise ValueError(f"{path}: the smoke example's steps were not all scored ({result.step_scores}): the "
                         f"step token {model.step_token!r} is not where the scorer reads it")
    return {"step_token": model.step_token, "step_token_id": model.step_token_id, "max_length": model.max_length,
            "smoke_example": list(SMOKE_EXAMPLE), "smoke_scores": [round(p, 6) for p in result.step_scores]}
