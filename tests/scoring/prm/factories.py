"""Tiny random PRMs saved in each exact layout a checkpoint can be registered in (no Django).

Used by the adapters' tests (scores against the head computed by hand) and by the registry's
(``tests/scoring/test_registry.py``, the e2e worker). Each ``build_*`` writes a directory as the
published checkpoint is laid out and returns the reference module it saved.
"""
import json

import torch
from torch import nn

from scoring.prm.adapters import QWEN_STEP_TOKEN

SMALL = dict(hidden_size=16, num_hidden_layers=2, num_attention_heads=2, num_key_value_heads=1, intermediate_size=32,
             max_position_embeddings=2048, initializer_range=0.5)
CHATML = ("{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n{% endfor %}"
          "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}")
SMOKE_TEXTS = ["What is 2 + 3?", "2 + 3 = 5.", "So the answer is 5.", "system user assistant Please reason step by step"]


def word_tokenizer(texts):
    """A WordLevel tokenizer with ``+ - ки`` (Math-Shepherd's tokens) and a BOS."""
    from tokenizers import Tokenizer, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    raw = Tokenizer(models.WordLevel(unk_token="<unk>"))
    raw.pre_tokenizer = pre_tokenizers.Whitespace()
    raw.train_from_iterator(texts + ["+ - ки Step 1 2 3 4 :"], trainers.WordLevelTrainer(special_tokens=["<unk>", "<s>", "</s>"]))
    return PreTrainedTokenizerFast(tokenizer_object=raw, unk_token="<unk>", bos_token="<s>", eos_token="</s>")


def byte_level_tokenizer(texts, *, step_token=QWEN_STEP_TOKEN):
    """A small byte-level BPE with ``<extra_0>``, Qwen's tokenizer shape (transformers loads a qwen2
    directory's tokenizer as ``Qwen2Tokenizer``, which keeps a byte-level BPE intact)."""
    from tokenizers import ByteLevelBPETokenizer
    from transformers import AddedToken, PreTrainedTokenizerFast

    bpe = ByteLevelBPETokenizer()
    bpe.train_from_iterator(texts, vocab_size=400, special_tokens=["<|endoftext|>"])
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=bpe._tokenizer, eos_token="<|endoftext|>", pad_token="<|endoftext|>")
    if step_token:
        tokenizer.add_tokens([AddedToken(step_token, special=True, normalized=False)], special_tokens=True)
    return tokenizer


class ProcessRewardModel(nn.Module):
    """The released Qwen2ForProcessRewardModel's shape: ``model`` + ``score`` = Linear -> ReLU -> Linear(2)."""

    def __init__(self, config):
        from transformers import Qwen2Model

        super().__init__()
        self.model = Qwen2Model(config)
        hidden = config.hidden_size
        self.score = nn.Sequential(nn.Linear(hidden, hidden), nn.ReLU(), nn.Linear(hidden, 2))


def build_qwen_prm(directory, texts, *, seed=2, chat_template=CHATML, head=True):
    """Qwen2.5-Math-PRM as released: ``model.*`` and ``score.0/score.2`` tensors in two shards with an
    index, the remote-code architecture and ``auto_map`` in config.json. ``head=False`` leaves the
    ``score.*`` tensors out (a broken checkpoint)."""
    from safetensors.torch import save_file
    from transformers import Qwen2Config

    directory.mkdir(parents=True, exist_ok=True)
    tokenizer = byte_level_tokenizer(texts + SMOKE_TEXTS)
    if chat_template:
        tokenizer.chat_template = chat_template
    config = Qwen2Config(vocab_size=len(tokenizer), **SMALL)
    torch.manual_seed(seed)
    reference = ProcessRewardModel(config).eval()
    shards = {"model-00001-of-00002.safetensors": {}, "model-00002-of-00002.safetensors": {}}
    for name, tensor in reference.state_dict().items():
        if name.startswith("score.") and not head:
            continue
        shards[f"model-0000{2 if name.startswith('score.') else 1}-of-00002.safetensors"][name] = tensor.contiguous()
    shards = {file: tensors for file, tensors in shards.items() if tensors}
    for file, tensors in shards.items():
        save_file(tensors, str(directory / file), metadata={"format": "pt"})
    index = {"metadata": {}, "weight_map": {name: file for file, tensors in shards.items() for name in tensors}}
    (directory / "model.safetensors.index.json").write_text(json.dumps(index))
    raw = config.to_dict() | {"architectures": ["Qwen2ForProcessRewardModel"],
                              "auto_map": {"AutoModel": "modeling_qwen2_rm.Qwen2ForProcessRewardModel"}}
    (directory / "config.json").write_text(json.dumps(raw))
    tokenizer.save_pretrained(directory)
    return reference


def build_token_classification(directory, texts, *, seed=1, step_token=QWEN_STEP_TOKEN, classifier_dropout=None):
    """A ``Qwen2ForTokenClassification`` with 2 labels, saved by ``save_pretrained`` as TRL's
    ``PRMTrainer`` leaves it (``step_token=None``: no added token, TRL's ``"\\n"`` separator).
    ``classifier_dropout`` goes into its config when given (transformers' default is 0.1)."""
    from transformers import Qwen2Config, Qwen2ForTokenClassification

    directory.mkdir(parents=True, exist_ok=True)
    tokenizer = byte_level_tokenizer(texts + SMOKE_TEXTS, step_token=step_token)
    torch.manual_seed(seed)
    extra = {} if classifier_dropout is None else {"classifier_dropout": classifier_dropout}
    model = Qwen2ForTokenClassification(Qwen2Config(vocab_size=len(tokenizer), num_labels=2, **SMALL, **extra)).eval()
    model.save_pretrained(directory)
    tokenizer.save_pretrained(directory)
    return model


def build_math_shepherd(directory, texts, *, seed=3):
    """A ``LlamaForCausalLM`` whose tokenizer has ``+``, ``-`` and the step tag ``ки``."""
    from transformers import LlamaConfig, LlamaForCausalLM

    directory.mkdir(parents=True, exist_ok=True)
    tokenizer = word_tokenizer(texts + SMOKE_TEXTS)
    torch.manual_seed(seed)
    model = LlamaForCausalLM(LlamaConfig(vocab_size=len(tokenizer), **SMALL)).eval()
    model.save_pretrained(directory)
    tokenizer.save_pretrained(directory)
    return model


def build_stepmark(directory, base, *, seed=0):
    """A Stepmark checkpoint: ``base`` (a tiny backbone directory) with a fresh seeded head."""
    from scoring.prm.checkpoint import save_checkpoint
    from scoring.prm.model import new_prm

    prm = new_prm(base, device="cpu", seed=seed)
    save_checkpoint(prm, directory, meta={"base_model": str(base), "neutral": "positive", "aggregation": "prod"})
    return prm
