"""bench/gpu_figures.py: packed rows score as padded rows do, and the tiny CPU run gives every figure.

No GPU here: the same code runs on a tiny Qwen2 config on the CPU (``--device cpu --tiny``).
"""
import json

import torch

from bench.gpu_figures import DATA, SCORING_WAYS, TRAINERS, build_prm, main, pack_rows, score_packed
from bench.gpu_scoring import TINY
from scoring.prm.data import read_prm800k
from scoring.prm.inputs import encode_solution
from scoring.prm.scorer import score_encoded


def test_packed_rows_score_as_padded_rows():
    prm = build_prm(TINY, torch.device("cpu"), torch.float32, 512)
    examples = read_prm800k(DATA, alternatives=False, limit=12)
    rows = [row for e in examples
            for row in encode_solution(prm.tokenizer, e.problem, e.steps, step_token_id=prm.step_token_id,
                                       max_length=prm.max_length, overflow=prm.overflow)][:24]
    bins = pack_rows([len(row) for row in rows], 1024)
    assert len(bins) < len(rows) and max(map(len, bins)) > 2  # rows really share packed rows
    assert all(sum(len(rows[i]) for i in b) <= 1024 for b in bins)
    padded = score_encoded(prm, rows, max_tokens=2048, max_batch=8, share_prefixes=False)
    packed = score_packed(prm, rows, pack_tokens=1024, max_tokens=2048, max_batch=8)
    assert [len(x) for x in packed] == [row.n_scored for row in rows]
    assert max(abs(a - b) for x, y in zip(padded, packed) for a, b in zip(x, y)) < 1e-4


def test_tiny_cpu_run_gives_every_figure(tmp_path):
    # A budget of a few seconds: the figures' clock times at least one step whatever the budget.
    out = tmp_path / "figures.json"
    assert main(["--device", "cpu", "--tiny", "--out", str(out), "--peak-tflops", "1", "--budget", "4",
                 "--repeats", "1"]) == 0
    figures = json.loads(out.read_text())
    assert figures["errors"] == {}
    assert set(figures["scoring"]) == {"padded", "packed-1024"} and len(SCORING_WAYS) == 2
    for values in figures["scoring"].values():
        for key in ("tokens_per_s", "rows_per_s", "steps_per_s", "padding_share", "mfu"):
            assert values[key] is not None and values[key] >= 0, key
        assert values["max_abs_diff_vs_padded"] < 1e-4
    for name in TRAINERS:
        values = figures["training"][name]
        assert values["timed_steps"] >= 1
        for key in ("tokens_per_s", "labelled_steps_per_s", "tflops", "mfu"):
            assert values[key] > 0, (name, key)
    assert figures["training"]["ratio_stepmark_over_trl"]["labelled_steps_per_s"] > 0
    assert figures["meta"]["trl"] and figures["meta"]["wall_s"] > 0
