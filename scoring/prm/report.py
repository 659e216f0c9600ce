"""Evaluation reports on disk: ``report.json``, the scored records, and PNG plots to look at.

``write_report`` takes what ``scoring.prm.evaluate`` returns (one protocol's section, or a dict of
them) and writes into a directory:

- ``report.json``: every figure;
- ``scored.jsonl`` (when records are given): the inputs with their ``step_scores`` and
  ``score``, so figures can be recomputed without the model (``evaluate --input scored.jsonl``);
- per protocol: ``steps_roc.png`` and ``steps_calibration.png`` (reliability diagram: mean
  predicted P(correct) per bin against the observed share of correct steps, bin sizes below),
  ``processbench_thresholds.png`` (accuracy on erroneous / correct solutions and F1 against the
  threshold, validation and test, the chosen threshold marked), ``best_of_n.png`` (% solved
  against N, one line per method).

``plot_comparison`` puts several scorers' reports side by side (the bench's summary plots);
``plot_training`` draws a training run's loss curves from its metrics log (``train`` writes it
beside the log).
Plots are drawn with matplotlib's Agg backend: files only, no display needed.
"""
import json
from pathlib import Path


def _pyplot():
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib import pyplot

    return pyplot


def sections(report):
    """``{name: section}`` for every protocol section in ``report`` (itself one, or a dict of them)."""
    if isinstance(report, dict) and "protocol" in report:
        return {report["protocol"]: report}
    return {name: value for name, value in report.items() if isinstance(value, dict) and "protocol" in value}


def write_report(report, directory, *, records=None, title=""):
    """Write ``report`` (and ``records``) into ``directory``; returns the paths written."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    written = [directory / "report.json"]
    written[0].write_text(json.dumps(report, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    if records is not None:
        path = directory / "scored.jsonl"
        with open(path, "w", encoding="utf-8") as handle:
            for record in records:
                handle.write(json.dumps(record, ensure_ascii=False) + "\n")
        written.append(path)
    for section in sections(report).values():
        kind = section["protocol"]
        if kind == "steps":
            written.append(plot_roc({"": section}, directory / "steps_roc.png", title=title))
            written.append(plot_calibration({"": section["calibration"]}, directory / "steps_calibration.png", title=title))
        elif kind == "processbench":
            written.append(plot_thresholds(section, directory / "processbench_thresholds.png", title=title))
        elif kind == "best-of-n":
            written.append(plot_best_of_n(section, directory / "best_of_n.png", title=title))
    return written


def _save(figure, path):
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    _pyplot().close(figure)
    return Path(path)


def plot_roc(steps_sections, path, *, title=""):
    """ROC curves of finding incorrect steps, one per ``{label: steps section}``."""
    plt = _pyplot()
    figure, axes = plt.subplots(figsize=(5, 5))
    axes.plot([0, 1], [0, 1], color="grey", linestyle=":", linewidth=1, label="chance")
    for label, section in steps_sections.items():
        if section["roc"]:
            xs, ys = zip(*section["roc"])
            auroc = section["auroc"]
            axes.plot(xs, ys, label=f"{label + ' ' if label else ''}AUROC {auroc:.3f}")
    axes.set(xlabel="false positive rate (correct steps flagged)", ylabel="true positive rate (wrong steps found)",
             xlim=(0, 1), ylim=(0, 1.01), title=f"{title}step-level ROC, incorrect = positive")
    axes.legend(loc="lower right", fontsize=8)
    return _save(figure, path)


def plot_calibration(tables, path, *, title=""):
    """Reliability diagram for ``{label: calibration table}``, with the steps per bin underneath."""
    plt = _pyplot()
    figure, (top, bottom) = plt.subplots(2, 1, figsize=(5.5, 6.5), height_ratios=(3, 1), sharex=True)
    top.plot([0, 1], [0, 1], color="grey", linestyle=":", linewidth=1, label="perfectly calibrated")
    width = 1 / max(len(t["bins"]) for t in tables.values()) / (len(tables) + 0.5)
    for k, (label, table) in enumerate(tables.items()):
        full = [b for b in table["bins"] if b["count"]]
        ece = table["ece"]
        name = f"{label + ' ' if label else ''}ECE {ece:.3f}" if ece is not None else label
        top.plot([b["mean_predicted"] for b in full], [b["observed"] for b in full], marker="o", label=name)
        bottom.bar([b["low"] + width * (k + 0.25) for b in table["bins"]], [b["count"] for b in table["bins"]],
                   width=width, align="edge", label=label or None)
    top.set(ylabel="observed share of correct steps", xlim=(0, 1), ylim=(0, 1.02),
            title=f"{title}reliability: predicted P(correct) vs labels")
    top.legend(loc="upper left", fontsize=8)
    bottom.set(xlabel="predicted P(correct)", ylabel="steps")
    return _save(figure, path)


def plot_thresholds(section, path, *, title=""):
    """ProcessBench accuracy and F1 against the threshold; the chosen threshold marked."""
    plt = _pyplot()
    figure, axes = plt.subplots(figsize=(6.5, 4.5))
    styles = {"validation": ":", "test": "-"}
    for split, rows in section["by_threshold"].items():
        xs = [row["threshold"] for row in rows]
        for key, colour in (("f1", "C0"), ("error_accuracy", "C3"), ("correct_accuracy", "C2")):
            axes.plot(xs, [row[key] if row[key] is not None else float("nan") for row in rows], color=colour,
                      linestyle=styles.get(split, "-"), label=f"{key.replace('_', ' ')} ({split})")
    chosen = section["threshold"]
    axes.axvline(chosen, color="black", linewidth=1)
    axes.annotate(f"chosen {chosen:.3g}\ntest F1 {section['test']['f1']:.3f}", (chosen, 0.95), fontsize=8,
                  xytext=(4, 0), textcoords="offset points", va="top")
    axes.set(xlabel="threshold (a step below it is the earliest error)", ylabel="share", ylim=(0, 1.02),
             title=f"{title}ProcessBench earliest error")
    axes.legend(fontsize=7, loc="center right")
    return _save(figure, path)


def plot_best_of_n(section, path, *, title=""):
    """% of problems solved against N for each way of picking."""
    plt = _pyplot()
    figure, axes = plt.subplots(figsize=(6, 4.5))
    for method, solved in section["solved"].items():
        style = {"oracle": ":", "random": "--"}.get(method, "-")
        axes.plot(section["ns"], [100 * s if s is not None else float("nan") for s in solved], marker="o",
                  linestyle=style, label=method.replace("_", " "))
    axes.set_xscale("log", base=2)
    axes.set_xticks(section["ns"], [str(n) for n in section["ns"]])
    axes.set(xlabel="N (candidates per problem)", ylabel="% problems solved",
             title=f"{title}best-of-N ({section['candidates']} candidates, aggregation {section['aggregation']})")
    axes.legend(fontsize=8)
    return _save(figure, path)


def plot_comparison(reports, directory):
    """Side-by-side plots for ``{scorer: report}`` reports holding ``steps`` and/or ``processbench``."""
    plt = _pyplot()
    directory = Path(directory)
    written = []
    steps = {name: r["steps"] for name, r in reports.items() if "steps" in r}
    if steps:
        written.append(plot_roc(steps, directory / "compare_roc.png"))
        written.append(plot_calibration({n: s["calibration"] for n, s in steps.items()}, directory / "compare_calibration.png"))
    names = list(reports)
    figure, axes = plt.subplots(figsize=(7, 4))
    figures = {"step AUROC": [reports[n].get("steps", {}).get("auroc") for n in names],
               "ProcessBench F1": [reports[n].get("processbench", {}).get("test", {}).get("f1") for n in names]}
    width = 0.38
    for k, (label, values) in enumerate(figures.items()):
        xs = [i + (k - 0.5) * width for i in range(len(names))]
        bars = axes.bar(xs, [v or 0 for v in values], width=width, label=label)
        axes.bar_label(bars, labels=["-" if v is None else f"{v:.3f}" for v in values], fontsize=7)
    axes.set_xticks(range(len(names)), names)
    axes.set(ylim=(0, 1.05), title="PRM against the untrained model and baselines")
    axes.axhline(0.5, color="grey", linestyle=":", linewidth=1)
    axes.legend(fontsize=8)
    written.append(_save(figure, directory / "compare.png"))
    return written


def plot_training(history, path, *, title=""):
    """Training loss and validation loss against the optimizer step, from ``train``'s log events.

    ``history`` is the list of events (``scoring.prm.train.train``'s ``history``, or the lines of
    one run's metrics log); the validation run whose weights were kept (the last one marked
    ``best``) is marked. When no update beat the untrained weights, training keeps the last ones
    and nothing is marked.
    """
    plt = _pyplot()
    figure, axes = plt.subplots(figsize=(6, 4))
    steps = [(e["step"], e["loss"]) for e in history if e.get("event") == "train"]
    evals = [(e["step"], e["val_loss"]) for e in history if e.get("event") == "eval" and e.get("val_loss") is not None]
    if steps:
        axes.plot(*zip(*steps), linewidth=0.8, alpha=0.5, label="training loss (mean since the last point)")
        if len(steps) >= 20:  # a batch is a few records, so single points scatter: draw the trend too
            width = len(steps) // 10
            trend = [(steps[k][0], sum(loss for _, loss in steps[k + 1 - width:k + 1]) / width)
                     for k in range(width - 1, len(steps))]
            axes.plot(*zip(*trend), linewidth=2, color="C0", label=f"training loss, mean of the last {width} points")
    if evals:
        axes.plot(*zip(*evals), marker="o", label="validation loss")
    kept = [(e["step"], e["val_loss"]) for e in history if e.get("event") == "eval" and e.get("best")]
    if kept:
        axes.plot(*kept[-1], marker="*", markersize=14, linestyle="none", color="black",
                  label=f"kept: step {kept[-1][0]}, {kept[-1][1]:.4f}")
    axes.set(xlabel="optimizer step", ylabel="cross-entropy per labelled step", title=f"{title}training")
    axes.legend(fontsize=8)
    return _save(figure, path)
