"""``python -m scoring``: train a tiny PRM, score with it, evaluate, all on small files."""
import argparse
import json
import math
import subprocess
import sys

import pytest

from labeling.data import open_text
from scoring.prm.cli import build_parser, main
from scoring.prm.data import read_gsm8k_examples
from tests.conftest import ROOT


def test_every_option_is_explained():
    parser = build_parser()
    commands = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    assert set(commands.choices) == {"train", "score", "evaluate", "simulate"}
    for name, sub in commands.choices.items():
        for action in sub._actions:
            assert action.help, f"{name} {action.option_strings} has no help"
    out = subprocess.run([sys.executable, "-m", "scoring", "score", "--help"], cwd=ROOT, capture_output=True, text=True, check=True)
    assert "--checkpoint" in out.stdout and "--aggregation" in out.stdout


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
