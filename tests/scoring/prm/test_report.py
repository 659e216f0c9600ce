"""Reports: report.json, scored.jsonl and PNG plots for each protocol, and the comparison plots."""
import json

from scoring.prm.evaluate import (
    best_of_n_protocol,
    processbench_protocol,
    steps_protocol,
)
from scoring.prm.report import plot_comparison, write_report

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def _is_png(path):
    data = path.read_bytes()
    return data[:8] == PNG_MAGIC and len(data) > 5000  # a drawn figure, not an empty canvas


def _report():
    def item(problem, label, scores):
        return {"problem": problem, "steps": ["s"] * len(scores), "label": label, "step_scores": scores}

    items = [item("A", 1, [0.9, 0.2, 0.1]), item("B", -1, [0.9, 0.6, 0.7]), item("C", 0, [0.5, 0.9]), item("D", -1, [0.8])]
    pool = [{"problem": p, "answer": a, "is_correct": c, "score": s, "step_scores": [s]}
            for p, a, c, s in [("P", "1", True, 0.7), ("P", "2", False, 0.8), ("Q", "3", True, 0.2), ("Q", "3", True, 0.1)]]
    return {"steps": steps_protocol(items), "processbench": processbench_protocol(items[2:], items[:2]),
            "best_of_n": best_of_n_protocol(pool)}, items


def test_write_report_gives_json_scores_and_a_plot_per_protocol(tmp_path):
    report, records = _report()
    written = write_report(report, tmp_path / "out", records=records, title="tiny: ")
    names = {path.name for path in written}
    assert names == {"report.json", "scored.jsonl", "steps_roc.png", "steps_calibration.png", "processbench_thresholds.png",
                     "best_of_n.png"}
    assert json.loads((tmp_path / "out" / "report.json").read_text()) == json.loads(json.dumps(report))
    assert [json.loads(line)["step_scores"] for line in (tmp_path / "out" / "scored.jsonl").read_text().splitlines()] == \
        [r["step_scores"] for r in records]
    for path in written:
        if path.suffix == ".png":
            assert _is_png(path), path


def test_a_single_protocol_section_and_the_comparison(tmp_path):
    report, _ = _report()
    assert [p.name for p in write_report(report["best_of_n"], tmp_path / "one")] == ["report.json", "best_of_n.png"]
    written = plot_comparison({"model": report, "baseline": {"steps": report["steps"]}}, tmp_path)
    assert sorted(p.name for p in written) == ["compare.png", "compare_calibration.png", "compare_roc.png"]
    assert all(_is_png(p) for p in written)


def test_training_plot_marks_the_kept_validation_run(tmp_path, monkeypatch):
    from scoring.prm import report as module
    history = [{"event": "eval", "step": 0, "val_loss": 0.70}, {"event": "train", "step": 5, "loss": 0.69},
               {"event": "train", "step": 10, "loss": 0.61}, {"event": "eval", "step": 10, "val_loss": 0.64, "best": True},
               {"event": "train", "step": 15, "loss": 0.55}, {"event": "eval", "step": 15, "val_loss": 0.66, "best": False}]
    drawn = {}
    real_save = module._save

    def spy(figure, path):
        drawn["lines"] = {line.get_label(): list(zip(line.get_xdata(), line.get_ydata())) for line in figure.axes[0].lines}
        return real_save(figure, path)

    monkeypatch.setattr(module, "_save", spy)
    path = module.plot_training(history, tmp_path / "run.png", title="tiny: ")
    assert _is_png(path)
    assert drawn["lines"]["validation loss"] == [(0, 0.70), (10, 0.64), (15, 0.66)]
    assert drawn["lines"]["kept: step 10, 0.6400"] == [(10, 0.64)]
    assert [x for x, _ in drawn["lines"]["training loss (mean since the last point)"]] == [5, 10, 15]

    # no update beat the untrained weights: the last ones are kept, and no validation run is marked
    module.plot_training([{**e, "best": False} if e.get("best") else e for e in history], tmp_path / "none.png")
    assert not any(label.startswith("kept") for label in drawn["lines"])


def test_training_plot_draws_the_trend_of_many_points(tmp_path, monkeypatch):
    from scoring.prm import report as module
    history = [{"event": "train", "step": 5 * (k + 1), "loss": float(k % 2)} for k in range(40)]  # 0, 1, 0, 1, ...
    drawn = {}
    real_save = module._save

    def spy(figure, path):
        drawn.update({line.get_label(): list(zip(line.get_xdata(), line.get_ydata())) for line in figure.axes[0].lines})
        return real_save(figure, path)

    monkeypatch.setattr(module, "_save", spy)
    assert _is_png(module.plot_training(history, tmp_path / "run.png"))
    trend = drawn["training loss, mean of the last 4 points"]
    assert [x for x, _ in trend] == [5 * (k + 1) for k in range(3, 40)]
    assert all(y == 0.5 for _, y in trend)  # the alternation averages out
