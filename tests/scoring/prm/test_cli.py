"""``python -m scoring``: train a tiny PRM, score with it, evaluate, all on small files."""
import argparse
import json
import math
import runpy
import sys

import pytest

from labeling.data import open_text
from scoring.prm.cli import build_parser, main
from scoring.prm.data import read_gsm8k_examples


def test_every_option_is_explained(monkeypatch, capsys):
    parser = build_parser()
    commands = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    assert set(commands.choices) == {"train", "score", "evaluate", "simulate"}
    for name, sub in commands.choices.items():
        for action in sub._actions:
            assert action.help, f"{name} {action.option_strings} has no help"
    # ``python -m scoring``'s own module, as -m runs it (in this process: a new one imports torch for 5 s).
    monkeypatch.setattr(sys, "argv", ["python -m scoring", "score", "--help"])
    with pytest.raises(SystemExit) as done:
        runpy.run_module("scoring", run_name="__main__", alter_sys=True)
    out = capsys.readouterr().out
    assert done.value.code == 0 and "--checkpoint" in out and "--aggregation" in out


@pytest.fixture
def files(tmp_path, data_dir, processbench_items):
    train = tmp_path / "train.jsonl"
    with open_text(data_dir / "prm800k" / "phase1_train.reconstructed.jsonl.gz") as source:
        train.write_text("".join(next(source) for _ in range(6)))
    gsm = tmp_path / "gsm8k.jsonl"
    with open_text(data_dir / "gsm8k" / "example_model_solutions.jsonl.gz") as source:
        gsm.write_text("".join(next(source) for _ in range(3)))
    candidates = tmp_path / "candidates.jsonl"
    candidates.write_text("".join(json.dumps(r) + "\n" for r in read_gsm8k_examples(gsm)))
    bench = tmp_path / "bench.json"
    bench.write_text(json.dumps(processbench_items[:6]))
    return {"train": train, "candidates": candidates, "bench": bench, "dir": tmp_path}


def test_train_score_evaluate_round_trip(files, tiny_bases, capsys):
    tmp = files["dir"]
    ckpt = tmp / "prm"
    assert main(["train", "--data", str(files["train"]), "--out", str(ckpt), "--base", str(tiny_bases["bert"]),
                 "--max-steps", "3", "--epochs", "3", "--max-batch", "8", "--max-length", "256", "--val-fraction", "0.34", "--quiet", "--lr", "1e-3"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["steps"] == 3 and summary["validation"]["steps"] > 0
    meta = json.loads((ckpt / "stepmark_prm.json").read_text())
    assert meta["neutral"] == "positive" and meta["aggregation"] == "prod" and len(meta["training_data"][0]["sha256"]) == 64
    log = [json.loads(line) for line in (tmp / "prm.metrics.jsonl").read_text().splitlines()]
    assert log[0]["event"] == "start" and log[-1]["event"] == "end"
    assert summary["plot"] == str(tmp / "prm.metrics.png") and (tmp / "prm.metrics.png").read_bytes()[:4] == b"\x89PNG"

    scored = tmp / "scored.jsonl"
    assert main(["score", "--checkpoint", str(ckpt), "--input", str(files["candidates"]), "--output", str(scored)]) == 0
    records = [json.loads(line) for line in scored.read_text().splitlines()]
    assert len(records) == 12 and records[0]["generator"] == "6b_finetuning"  # fields carried through
    for record in records:
        assert len(record["step_scores"]) == len(record["steps"]) and record["unscored_steps"] == 0
        assert record["score"] == pytest.approx(math.prod(record["step_scores"]))

    report_path = tmp / "report.json"
    assert main(["evaluate", "--input", str(scored), "--aggregation", "min", "--output", str(report_path)]) == 0
    report = json.loads(report_path.read_text())
    assert report["best_of_n"]["problems"] == 3 and report["best_of_n"]["mean_candidates"] == 4
    capsys.readouterr()

    assert main(["evaluate", "--checkpoint", str(ckpt), "--input", str(files["bench"])]) == 0
    report = json.loads(capsys.readouterr().out)
    labels = [item["label"] for item in json.loads(files["bench"].read_text())]
    assert report["processbench"]["erroneous"] == sum(label != -1 for label in labels)
    assert 0 <= report["processbench_steps"]["auroc"] <= 1

    assert main(["evaluate", "--checkpoint", str(ckpt), "--input", str(files["train"])]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["steps"]["steps"] > 0 and report["steps"]["negative_steps"] > 0
    assert main(["evaluate", "--checkpoint", str(ckpt), "--input", str(files["train"]), "--neutral", "ignore"]) == 0
    without_neutral = json.loads(capsys.readouterr().out)
    assert without_neutral["steps"]["steps"] < report["steps"]["steps"]  # the 0-rated steps left out


def test_bad_input_fails_with_file_line_and_field(files, capsys):
    broken = files["dir"] / "broken.jsonl"
    broken.write_text(json.dumps({"problem": "p", "steps": ["a"]}) + "\n" + json.dumps({"problem": "p"}) + "\n")
    assert main(["evaluate", "--input", str(broken), "--format", "candidates"]) == 2
    assert "broken.jsonl:2: field 'steps': missing" in capsys.readouterr().err
    assert main(["evaluate", "--input", str(files["candidates"])]) == 2  # no scores, no checkpoint
    assert "candidates.jsonl:1: field 'step_scores'" in capsys.readouterr().err


def test_train_and_evaluate_read_trl_files_as_written(files, tiny_bases, capsys):
    """A TRL export (an export filtered by agreement between label sources among them) trains and
    evaluates as it is: JSONL and Parquet, its labels taken as written, bad rows named."""
    import pyarrow
    import pyarrow.parquet

    from scoring.prm.data import detect_format, read_training

    tmp = files["dir"]
    rows = [{"prompt": f"Find {i}.", "completions": [f"step {i}.{j}" for j in range(3)],
             "labels": [True, i % 2 == 0, False], "label_sources": ["people", "judge"]}
            for i in range(8)][:-1] + [{"prompt": "Find 7.", "completions": ["a", "b"], "labels": [True, True]}]
    jsonl = tmp / "agreed.jsonl"
    jsonl.write_text("".join(json.dumps(r) + "\n" for r in rows))
    parquet = tmp / "agreed.parquet"
    pyarrow.parquet.write_table(pyarrow.Table.from_pylist([{k: r[k] for k in ("prompt", "completions", "labels")}
                                                           for r in rows]), parquet)
    assert detect_format(jsonl) == detect_format(parquet) == "trl"
    from_jsonl, from_parquet = read_training(jsonl), read_training(parquet)
    assert from_jsonl == from_parquet and len(from_jsonl) == 8
    assert from_jsonl[0].labels == [1, 1, 0] and from_jsonl[1].labels == [1, 0, 0]

    ckpt = tmp / "prm-agreed"
    assert main(["train", "--data", str(parquet), "--out", str(ckpt), "--base", str(tiny_bases["bert"]),
                 "--max-steps", "2", "--epochs", "3", "--max-batch", "8", "--max-length", "128", "--val-fraction", "0.25",
                 "--quiet"]) == 0
    assert json.loads(capsys.readouterr().out)["steps"] == 2
    assert main(["evaluate", "--checkpoint", str(ckpt), "--input", str(jsonl)]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["steps"]["steps"] == 23 and report["steps"]["negative_steps"] == 7 + 3

    bad = tmp / "bad.jsonl"
    bad.write_text(json.dumps(rows[0]) + "\n" + json.dumps({**rows[0], "labels": [True, "yes", False]}) + "\n")
    assert main(["train", "--data", str(bad), "--out", str(tmp / "never"), "--base", str(tiny_bases["bert"])]) == 2
    assert "bad.jsonl:2: field 'labels[1]': expected true or false" in capsys.readouterr().err
    assert main(["train", "--data", str(files["candidates"]), "--out", str(tmp / "never"),
                 "--base", str(tiny_bases["bert"])]) == 2
    assert "no step labels to train on" in capsys.readouterr().err
