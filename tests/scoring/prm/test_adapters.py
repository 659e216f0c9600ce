"""Adapters: tiny random models in the Qwen2.5-Math-PRM and Math-Shepherd layouts, scored through the
scorer and checked against the head's output computed by hand on the same token ids."""
import json

import pytest
import torch
from torch import nn

from labeling.data import open_text
from scoring.prm.adapters import QWEN_STEP_TOKEN, load_adapter, score_solutions
from scoring.prm.cli import main
from scoring.prm.metrics import earliest_error

torch.set_num_threads(2)

SMALL = dict(hidden_size=16, num_hidden_layers=2, num_attention_heads=2, num_key_value_heads=1, intermediate_size=32,
             max_position_embeddings=2048, initializer_range=0.5)
CHATML = ("{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n{% endfor %}"
          "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}")


@pytest.fixture(scope="module")
def solutions(processbench_items):
    return [(item["problem"], item["steps"][:4]) for item in processbench_items[:3]]


def _word_tokenizer(texts):
    from tokenizers import Tokenizer, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    raw = Tokenizer(models.WordLevel(unk_token="<unk>"))
    raw.pre_tokenizer = pre_tokenizers.Whitespace()
    raw.train_from_iterator(texts + ["+ - ки Step 1 2 3 4 :"], trainers.WordLevelTrainer(special_tokens=["<unk>", "<s>", "</s>"]))
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=raw, unk_token="<unk>", bos_token="<s>", eos_token="</s>")
    return tokenizer


def _byte_level_tokenizer(texts):
    """A small byte-level BPE with ``<extra_0>``, Qwen's tokenizer shape (transformers loads a qwen2
    directory's tokenizer as ``Qwen2Tokenizer``, which keeps a byte-level BPE intact)."""
    from tokenizers import ByteLevelBPETokenizer
    from transformers import AddedToken, PreTrainedTokenizerFast

    bpe = ByteLevelBPETokenizer()
    bpe.train_from_iterator(texts, vocab_size=400, special_tokens=["<|endoftext|>"])
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=bpe._tokenizer, eos_token="<|endoftext|>", pad_token="<|endoftext|>")
    tokenizer.add_tokens([AddedToken(QWEN_STEP_TOKEN, special=True, normalized=False)], special_tokens=True)
    return tokenizer


def _texts(solutions):
    return [problem for problem, _ in solutions] + [step for _, steps in solutions for step in steps]


def _row(tokenizer, problem, steps, separator_id):
    """The ids the layout's own code would build: [BOS] problem step1 <sep> step2 <sep> ..."""
    ids = [tokenizer.bos_token_id] if tokenizer.bos_token_id is not None else []
    ids += tokenizer(problem, add_special_tokens=False)["input_ids"]
    positions = []
    for step in steps:
        ids += tokenizer(step, add_special_tokens=False)["input_ids"] + [separator_id]
        positions.append(len(ids) - 1)
    return torch.tensor([ids]), positions


def test_qwen_token_classification_layout(tmp_path, solutions):
    from transformers import AutoTokenizer, Qwen2Config, Qwen2ForTokenClassification

    tokenizer = _byte_level_tokenizer(_texts(solutions))
    torch.manual_seed(1)
    model = Qwen2ForTokenClassification(Qwen2Config(vocab_size=len(tokenizer), num_labels=2, **SMALL)).eval()
    model.save_pretrained(tmp_path)
    tokenizer.save_pretrained(tmp_path)
    tokenizer = AutoTokenizer.from_pretrained(str(tmp_path))  # as the checkpoint's tokenizer is read

    adapted = load_adapter("qwen-prm", tmp_path, device="cpu")
    scored = score_solutions(adapted, solutions)
    separator = tokenizer.convert_tokens_to_ids(QWEN_STEP_TOKEN)
    for (problem, steps), result in zip(solutions, scored):
        ids, positions = _row(tokenizer, problem, steps, separator)
        with torch.no_grad():
            logits = model(input_ids=ids).logits[0, positions]
        expected = torch.softmax(logits, dim=-1)[:, 1]  # class 1 = correct
        assert result.step_scores == pytest.approx(expected.tolist(), abs=1e-5)
        assert len(set(round(p, 4) for p in result.step_scores)) > 1  # a real head, not a constant


class _ProcessRewardModel(nn.Module):
    """The released Qwen2ForProcessRewardModel's shape: ``model`` + ``score`` = Linear -> ReLU -> Linear(2)."""

    def __init__(self, config):
        from transformers import Qwen2Model

        super().__init__()
        self.model = Qwen2Model(config)
        hidden = config.hidden_size
        self.score = nn.Sequential(nn.Linear(hidden, hidden), nn.ReLU(), nn.Linear(hidden, 2))


def test_qwen_process_reward_model_layout_with_chat_template(tmp_path, solutions):
    from safetensors.torch import save_file
    from transformers import AutoTokenizer, Qwen2Config

    tokenizer = _byte_level_tokenizer(_texts(solutions) + ["system user assistant Please reason step by step"])
    tokenizer.chat_template = CHATML
    config = Qwen2Config(vocab_size=len(tokenizer), **SMALL)
    torch.manual_seed(2)
    reference = _ProcessRewardModel(config).eval()
    # stored as the released checkpoint is: model.* and score.0/score.2 tensors in shards with an index,
    # the remote-code architecture named in config.json
    shards = {"model-00001-of-00002.safetensors": {}, "model-00002-of-00002.safetensors": {}}
    for name, tensor in reference.state_dict().items():
        shards[f"model-0000{2 if name.startswith('score.') else 1}-of-00002.safetensors"][name] = tensor.contiguous()
    for file, tensors in shards.items():
        save_file(tensors, str(tmp_path / file), metadata={"format": "pt"})
    index = {"metadata": {}, "weight_map": {name: file for file, tensors in shards.items() for name in tensors}}
    (tmp_path / "model.safetensors.index.json").write_text(json.dumps(index))
    raw = config.to_dict() | {"architectures": ["Qwen2ForProcessRewardModel"],
                              "auto_map": {"AutoModel": "modeling_qwen2_rm.Qwen2ForProcessRewardModel"}}
    (tmp_path / "config.json").write_text(json.dumps(raw))
    tokenizer.save_pretrained(tmp_path)
    tokenizer = AutoTokenizer.from_pretrained(str(tmp_path))

    adapted = load_adapter("qwen-prm", tmp_path, device="cpu")
    scored = score_solutions(adapted, solutions)
    separator = tokenizer.convert_tokens_to_ids(QWEN_STEP_TOKEN)
    for (problem, steps), result in zip(solutions, scored):
        prompt = tokenizer.apply_chat_template(
            [{"role": "system", "content": adapted.system}, {"role": "user", "content": problem}],
            tokenize=False, add_generation_prompt=True)
        assert prompt.endswith("<|im_start|>assistant\n") and problem in prompt
        ids, positions = _row(tokenizer, prompt, steps, separator)
        with torch.no_grad():
            logits = reference.score(reference.model(input_ids=ids).last_hidden_state)[0, positions]
        assert result.step_scores == pytest.approx(torch.softmax(logits, -1)[:, 1].tolist(), abs=1e-5)


def test_qwen_layout_without_a_head_is_refused(tmp_path, solutions):
    from transformers import Qwen2Config, Qwen2Model

    tokenizer = _byte_level_tokenizer(_texts(solutions))
    Qwen2Model(Qwen2Config(vocab_size=len(tokenizer), **SMALL)).save_pretrained(tmp_path)
    tokenizer.save_pretrained(tmp_path)
    with pytest.raises(ValueError, match="score.0.weight"):
        load_adapter("qwen-prm", tmp_path, device="cpu")


@pytest.fixture(scope="module")
def shepherd_dir(tmp_path_factory, solutions):
    from transformers import LlamaConfig, LlamaForCausalLM

    directory = tmp_path_factory.mktemp("math_shepherd")
    tokenizer = _word_tokenizer(_texts(solutions))
    torch.manual_seed(3)
    LlamaForCausalLM(LlamaConfig(vocab_size=len(tokenizer), **SMALL)).save_pretrained(directory)
    tokenizer.save_pretrained(directory)
    return directory


def test_math_shepherd_layout(shepherd_dir, solutions):
    from transformers import AutoModelForCausalLM, AutoTokenizer

    lm = AutoModelForCausalLM.from_pretrained(str(shepherd_dir)).eval()
    tokenizer = AutoTokenizer.from_pretrained(str(shepherd_dir))
    good, bad, tag = (tokenizer.convert_tokens_to_ids(t) for t in ("+", "-", "ки"))
    adapted = load_adapter("math-shepherd", shepherd_dir, device="cpu")
    scored = score_solutions(adapted, solutions)
    for (problem, steps), result in zip(solutions, scored):
        tagged = [("\n" if k else " ") + f"Step {k + 1}: {step}" for k, step in enumerate(steps)]
        ids, positions = _row(tokenizer, problem, tagged, tag)
        assert (ids[0, positions] == tag).all()
        with torch.no_grad():
            logits = lm(input_ids=ids).logits[0, positions]  # the whole LM head, as the model card does
        expected = torch.softmax(logits[:, [good, bad]], dim=-1)[:, 0]  # P("+")
        assert result.step_scores == pytest.approx(expected.tolist(), abs=1e-5)


def test_cli_scores_and_evaluates_with_an_adapter(shepherd_dir, tmp_path, data_dir, capsys):
    with open_text(data_dir / "processbench" / "gsm8k.json.gz") as f:
        items = json.load(f)
    correct = [item for item in items if item["label"] == -1]
    wrong = [item for item in items if item["label"] != -1]
    bench, val = tmp_path / "bench.json", tmp_path / "val.json"
    bench.write_text(json.dumps(correct[:4] + wrong[:4]))
    val.write_text(json.dumps(correct[4:7] + wrong[4:7]))
    out = tmp_path / "scored.jsonl"
    assert main(["score", "--adapter", "math-shepherd", "--model", str(shepherd_dir), "--input", str(bench),
                 "--output", str(out), "--device", "cpu"]) == 0
    records = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(records) == 8 and all(len(r["step_scores"]) == len(r["steps"]) for r in records)
    assert main(["evaluate", "--adapter", "math-shepherd", "--model", str(shepherd_dir), "--input", str(bench),
                 "--protocol", "processbench", "--val-input", str(val), "--report-dir", str(tmp_path / "report"),
                 "--device", "cpu"]) == 0
    report = json.loads((tmp_path / "report" / "report.json").read_text())
    assert report["scorer"]["adapter"] == "math-shepherd"
    section = report["processbench"]
    assert section["test"]["items"] == 8 and section["validation"]["items"] == 6
    # the threshold is the validation's best, and the test figures are those at that threshold
    assert section["validation"]["f1"] == max(row["f1"] for row in section["by_threshold"]["validation"])
    scored = {r["id"]: r["step_scores"] for r in map(json.loads, (tmp_path / "report" / "scored.jsonl").read_text().splitlines())}
    errors = sum(earliest_error(scored[i["id"]], threshold=section["threshold"]) == i["label"] for i in wrong[:4])
    assert section["test"]["error_accuracy"] == errors / 4
    assert (tmp_path / "report" / "processbench_thresholds.png").stat().st_size > 1000
    capsys.readouterr()
    assert main(["score", "--adapter", "qwen-prm", "--model", str(shepherd_dir), "--input", str(bench)]) == 2
    assert "score.0.weight" in capsys.readouterr().err  # a causal LM is not a Qwen PRM


def test_adapters_read_shared_prefixes_as_trees_with_the_same_scores(shepherd_dir, solutions, tmp_path):
    """Prefix trees go to the adapters' decoders as a 4D mask with positions: the scores do not move."""
    from transformers import Qwen2Config, Qwen2ForTokenClassification

    tokenizer = _byte_level_tokenizer(_texts(solutions))
    torch.manual_seed(1)
    Qwen2ForTokenClassification(Qwen2Config(vocab_size=len(tokenizer), num_labels=2, **SMALL)).save_pretrained(tmp_path)
    tokenizer.save_pretrained(tmp_path)
    problem, steps = solutions[0]
    branches = [(problem, steps[:k]) for k in range(1, 5)] + [(problem, steps[:1] + [steps[3]]), (problem, steps[2:])]
    for model in (load_adapter("qwen-prm", tmp_path, device="cpu"), load_adapter("math-shepherd", shepherd_dir, device="cpu")):
        shared = score_solutions(model, branches)
        alone = score_solutions(model, branches, share_prefixes=False)
        for a, b in zip(shared, alone):
            assert a.step_scores == pytest.approx(b.step_scores, abs=1e-5)
