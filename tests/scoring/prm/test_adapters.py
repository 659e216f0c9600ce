"""Adapters: tiny random models in the Qwen2.5-Math-PRM, Math-Shepherd and TRL token-classification
layouts (built by tests/scoring/prm/factories.py), scored through the scorer and checked against the
head's output computed by hand on the same token ids."""
import json

import pytest
import torch

from labeling.data import open_text
from scoring.prm.adapters import QWEN_STEP_TOKEN, load_adapter, score_solutions
from scoring.prm.cli import main
from scoring.prm.metrics import earliest_error
from tests.scoring.prm.factories import (
    build_math_shepherd,
    build_qwen_prm,
    build_stepmark,
    build_token_classification,
)


@pytest.fixture(scope="module")
def solutions(processbench_items):
    return [(item["problem"], item["steps"][:4]) for item in processbench_items[:3]]


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
    from transformers import AutoTokenizer

    model = build_token_classification(tmp_path, _texts(solutions))
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


def test_qwen_process_reward_model_layout_with_chat_template(tmp_path, solutions):
    from transformers import AutoTokenizer

    reference = build_qwen_prm(tmp_path, _texts(solutions))
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
    build_qwen_prm(tmp_path, _texts(solutions), head=False)
    with pytest.raises(ValueError, match="score.0.weight"):
        load_adapter("qwen-prm", tmp_path, device="cpu")


@pytest.fixture(scope="module")
def shepherd_dir(tmp_path_factory, solutions):
    directory = tmp_path_factory.mktemp("math_shepherd")
    build_math_shepherd(directory, _texts(solutions))
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
    build_token_classification(tmp_path, _texts(solutions))
    problem, steps = solutions[0]
    branches = [(problem, steps[:k]) for k in range(1, 5)] + [(problem, steps[:1] + [steps[3]]), (problem, steps[2:])]
    for model in (load_adapter("qwen-prm", tmp_path, device="cpu"), load_adapter("math-shepherd", shepherd_dir, device="cpu")):
        shared = score_solutions(model, branches)
        alone = score_solutions(model, branches, share_prefixes=False)
        for a, b in zip(shared, alone):
            assert a.step_scores == pytest.approx(b.step_scores, abs=1e-5)


def test_trl_token_classification_layout_reads_the_step_separator(tmp_path, solutions):
    """TRL's PRMTrainer output: BOS (when any), the prompt, each step and its separator ("\\n"), label 1 = correct."""
    from transformers import AutoTokenizer

    model = build_token_classification(tmp_path, _texts(solutions), step_token=None)
    tokenizer = AutoTokenizer.from_pretrained(str(tmp_path))
    adapted = load_adapter("token-classification", tmp_path, device="cpu")
    (separator,) = tokenizer.encode("\n", add_special_tokens=False)  # as TRL's tokenize_row appends it
    assert adapted.step_token_id == separator and adapted.prepare("p", ["s"]) == ("p", ["s"])
    for (problem, steps), result in zip(solutions, score_solutions(adapted, solutions)):
        ids, positions = _row(tokenizer, problem, steps, separator)
        with torch.no_grad():
            expected = torch.softmax(model(input_ids=ids).logits[0, positions], dim=-1)[:, 1]
        assert result.step_scores == pytest.approx(expected.tolist(), abs=1e-5)
    with pytest.raises(ValueError, match="no single token for the step separator '<sep>'"):
        load_adapter("token-classification", tmp_path, device="cpu", step_separator="<sep>")
    with pytest.raises(ValueError, match="takes no option 'step_separator'"):
        load_adapter("qwen-prm", tmp_path, device="cpu", step_separator="\n")


def test_layouts_are_detected_from_the_files_and_what_is_missing_is_named(tmp_path, solutions, tiny_bases):
    """``scoring.prm.layouts`` (no torch) tells each layout apart and names the missing file or tensor;
    ``validate`` loads each, finds its step token and scores the smoke example."""
    from scoring.prm.adapters import validate
    from scoring.prm.layouts import LayoutError, detect, inspect
    from tests.scoring.prm.factories import build_stepmark

    texts = _texts(solutions)
    built = {"qwen-prm": tmp_path / "qwen", "token-classification": tmp_path / "trl", "math-shepherd": tmp_path / "shepherd",
             "stepmark": tmp_path / "stepmark"}
    build_qwen_prm(built["qwen-prm"], texts)
    build_token_classification(built["token-classification"], texts, step_token=None)
    build_math_shepherd(built["math-shepherd"], texts)
    build_stepmark(built["stepmark"], tiny_bases["bert"])
    for layout, directory in built.items():
        assert detect(directory) == layout and inspect(directory) == layout
        checked = validate("auto", directory, device="cpu")
        assert checked["layout"] == layout and len(checked["smoke_scores"]) == 2
        assert all(0 < p < 1 for p in checked["smoke_scores"])
    assert validate("auto", built["token-classification"], device="cpu")["step_token"] == "\n"
    assert validate("qwen-prm", built["qwen-prm"], device="cpu")["step_token"] == QWEN_STEP_TOKEN

    def refused(path, layout="auto"):
        with pytest.raises(LayoutError) as caught:
            inspect(path, layout)
        return str(caught.value)

    assert "No directory" in refused(tmp_path / "nowhere")
    assert "absolute path" in refused("relative/dir")
    assert "no config.json" in refused(tmp_path)
    assert "no score.0.weight, score.0.bias, score.2.weight, score.2.bias tensors" in refused(built["math-shepherd"], "qwen-prm")
    assert "no *ForCausalLM architecture" in refused(built["qwen-prm"], "math-shepherd")
    assert "no *ForTokenClassification architecture" in refused(built["qwen-prm"], "token-classification")
    assert "no stepmark_prm.json" in refused(built["qwen-prm"], "stepmark")
    (built["qwen-prm"] / "model-00002-of-00002.safetensors").unlink()
    assert "shard model-00002-of-00002.safetensors" in refused(built["qwen-prm"])
    for name in ("tokenizer.json", "tokenizer_config.json"):
        (built["math-shepherd"] / name).unlink()
    assert "no tokenizer" in refused(built["math-shepherd"])
    # the step tag is only found by loading the tokenizer: the worker's validation names it
    no_tag = tmp_path / "no_tag"
    build_token_classification(no_tag, texts, step_token=None)
    with pytest.raises(ValueError, match="no single token for the step separator '<extra_0>'"):
        validate("qwen-prm", no_tag, device="cpu")


def _dropouts(model):
    """Every dropout probability in ``model``: its nn.Dropout layers' and its attention's."""
    layers = [m.p for m in model.modules() if isinstance(m, torch.nn.Dropout)]
    return layers + [m.attention_dropout for m in model.modules() if isinstance(getattr(m, "attention_dropout", None), float)]


LAYOUTS_AT_DROPOUT_0 = {
    "stepmark": lambda path, texts, bases: build_stepmark(path, bases["qwen2"]),
    "qwen-prm": lambda path, texts, bases: build_qwen_prm(path, texts),
    "qwen-prm/token-classification": lambda path, texts, bases: build_token_classification(path, texts,
                                                                                          classifier_dropout=0.0),
    "math-shepherd": lambda path, texts, bases: build_math_shepherd(path, texts),
    "token-classification": lambda path, texts, bases: build_token_classification(path, texts, step_token=None,
                                                                                 classifier_dropout=0.0),
}


@pytest.mark.parametrize("layout", LAYOUTS_AT_DROPOUT_0)
def test_uncertainty_is_measured_in_every_layout_at_config_dropout_0(layout, tmp_path, solutions, tiny_bases):
    """Each layout, built as published with every dropout 0, reads its step head apart: the head
    passes on dropped-out features disagree, the scores are those of a plain pass, the same seed
    gives the same uncertainties, and the model is left in eval mode."""
    from scoring.prm.scorer import has_step_head

    LAYOUTS_AT_DROPOUT_0[layout](tmp_path, _texts(solutions), tiny_bases)
    model = load_adapter(layout.split("/")[0], tmp_path, device="cpu")
    assert has_step_head(model) and set(_dropouts(model)) <= {0.0}
    plain = score_solutions(model, solutions)
    measured = score_solutions(model, solutions, dropout_passes=4)
    assert not any(m.training for m in model.modules())
    assert [r.step_scores for r in measured] == [r.step_scores for r in plain]
    for r in measured:  # measured wherever a step was scored
        assert [u is None for u in r.step_uncertainty] == [p is None for p in r.step_scores]
    assert any(p is not None for r in measured for p in r.step_scores)
    assert max(r.uncertainty for r in measured if r.uncertainty is not None) > 0
    again = score_solutions(model, solutions, dropout_passes=4, dropout_seed=0)
    assert [r.step_uncertainty for r in again] == [r.step_uncertainty for r in measured]
    assert not any(m.training for m in model.modules())


def test_a_classifier_that_is_not_read_apart_falls_back_to_the_whole_model(tmp_path, solutions):
    """``classifier_of`` reads the classifier apart only when base model -> it gives the model's own
    logits; otherwise the adapter scores through the model's forward as before."""
    import types

    from scoring.prm.adapters import classifier_of
    from scoring.prm.scorer import has_step_head

    build_token_classification(tmp_path, _texts(solutions), step_token=None)
    model = load_adapter("token-classification", tmp_path, device="cpu")
    assert model.classifier_name == "score" == classifier_of(model.backbone)
    expected = score_solutions(model, solutions)
    original = model.backbone.forward
    model.backbone.forward = types.MethodType(lambda self, **kw: types.SimpleNamespace(logits=original(**kw).logits * 2),
                                          model.backbone)
    assert classifier_of(model.backbone) is None  # the probe sees logits that are not base -> score
    model.backbone.forward = original
    model.backbone.score = torch.nn.Sequential(model.backbone.score)
    assert classifier_of(model.backbone) is None  # not one Linear
    model.classifier_name = None
    assert not has_step_head(model)
    fallback = score_solutions(model, solutions, dropout_passes=2)
    assert [r.step_scores for r in fallback] == [r.step_scores for r in expected]
    assert all(r.uncertainty is not None for r in fallback)
