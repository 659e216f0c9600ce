"""Throughput of the one-pass batched PRM scorer against the naive way, on CPU with MiniLM.

The naive way runs one forward pass per step prefix (problem + steps 1..k), one solution at a
time, and reads the last separator: what a PRM without prefix causality would have to do.
Past MiniLM's 512 tokens both ways read a step in the same sliding window (the problem, the
steps just before, the step: ``scoring.inputs.encode_solution``); ``--overflow unscored``
leaves those steps out of both instead.

The batched scorer reads every step of a solution in one pass and batches solutions of
similar length. Both score the same solutions; the script checks they agree.

Two sets of solutions by default, because the gain grows with the number of steps: the
PRM800K phase-1 test trajectories (MATH, 17 steps a solution, what Stepmark labels) and
ProcessBench's GSM8K solutions (5 steps). On a CPU both ways are compute-bound, so the gain
is about the ratio of tokens pushed through the model, which the script prints too.

    .venv/bin/python bench/scoring_throughput.py [--data FILE ...] [--solutions 100] [--min-steps 1]
        [--overflow window|unscored] [--threads 2]
"""
import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def naive_scores(prm, solutions):
    import torch

    from scoring.inputs import collate, pad_id
    from scoring.model import CORRECT

    results = []
    with torch.inference_mode():
        for problem, steps in solutions:
            scores = []
            for k in range(len(steps)):
                row = prefix_row(prm, problem, steps[: k + 1])
                if row is None:
                    scores.append(None)
                    continue
                batch = collate([row], pad_token_id=pad_id(prm.tokenizer))
                logits = prm(batch["input_ids"], batch["attention_mask"])
                scores.append(torch.softmax(logits[0, row.step_positions[-1]], -1)[CORRECT].item())
            results.append(scores)
    return results


def prefix_row(prm, problem, steps):
    """The one row the naive way runs for the last of ``steps`` (None: it cannot be read).

    Past the context that is the window the PRM reads it in: the problem, the steps just
    before it, then it.
    """
    from scoring.inputs import encode_solution

    row = encode_solution(prm.tokenizer, problem, steps, step_token_id=prm.step_token_id, max_length=prm.max_length,
                          overflow=prm.overflow)[-1]
    return row if row.n_scored and row.first_step + row.n_scored == len(steps) else None


DEFAULT_DATA = [
    ROOT.parent / "shared" / "data" / "prm800k" / "phase1_test.reconstructed.jsonl",
    ROOT.parent / "shared" / "data" / "processbench" / "gsm8k.json",
]


def load(path, limit, min_steps=1):
    """The first ``limit`` ``(problem, steps)`` pairs with at least ``min_steps`` steps from a
    PRM800K, ProcessBench, candidate or GSM8K-examples file."""
    from scoring.data import detect_format, read_prm800k, read_solutions

    if detect_format(path) == "prm800k":  # the trajectories only, not each alternative again
        examples = read_prm800k(path, alternatives=False, limit=None if min_steps > 1 else limit)
        found = [(e.problem, e.steps) for e in examples]
    else:
        found = [(r["problem"], r["steps"]) for r in read_solutions(path)]
    return [pair for pair in found if len(pair[1]) >= min_steps][:limit]


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, nargs="+", default=DEFAULT_DATA,
                        help="solution files (default: PRM800K phase-1 test, ProcessBench GSM8K)")
    parser.add_argument("--solutions", type=int, default=100, help="solutions per file (default 100)")
    parser.add_argument("--min-steps", type=int, default=1,
                        help="only solutions with at least this many steps (the gain grows with them)")
    parser.add_argument("--overflow", choices=("window", "unscored"), default="window",
                        help="steps past MiniLM's 512 tokens: read through the sliding window (the default of new PRMs) "
                             "or left unscored, both ways (default window)")
    parser.add_argument("--threads", type=int, default=2, help="torch CPU threads (default 2)")
    parser.add_argument("--max-tokens", type=int, default=None, help="padded tokens per batch (scorer's CPU default)")
    parser.add_argument("--max-batch", type=int, default=None, help="solutions per batch (scorer's CPU default)")
    args = parser.parse_args()

    import torch

    from scoring.model import default_base_model, new_prm
    from scoring.scorer import batching, encode_solutions, score_solutions

    torch.set_num_threads(args.threads)
    # an untrained head costs the same as a trained one
    prm = new_prm(default_base_model(), device="cpu", overflow=args.overflow)
    max_tokens, max_batch = batching("cpu", args.max_tokens, args.max_batch)
    print(f"MiniLM-L6 on CPU, {args.threads} threads, torch {torch.__version__}; batches of at most "
          f"{max_tokens} padded tokens and {max_batch} rows; past {prm.max_length} tokens: {args.overflow}", flush=True)
    for path in args.data:
        solutions = load(path, args.solutions, args.min_steps)
        score_solutions(prm, solutions[:8])  # warm-up
        n_steps = sum(len(steps) for _, steps in solutions)
        print(f"\n{path.name}: {len(solutions)} solutions, {n_steps} steps ({n_steps / len(solutions):.1f} a solution)",
              flush=True)
        start = time.perf_counter()
        batched = score_solutions(prm, solutions, max_tokens=max_tokens, max_batch=max_batch)
        batched_s = time.perf_counter() - start
        n_read = n_steps - sum(one.unscored_steps for one in batched)  # steps given a score
        print(f"batched one-pass: {batched_s:7.2f} s  {len(solutions) / batched_s:8.1f} solutions/s  "
              f"{n_read / batched_s:8.1f} steps scored/s", flush=True)
        start = time.perf_counter()
        naive = naive_scores(prm, solutions)
        naive_s = time.perf_counter() - start
        print(f"naive per-prefix: {naive_s:7.2f} s  {len(solutions) / naive_s:8.1f} solutions/s  "
              f"{n_read / naive_s:8.1f} steps scored/s")
        diff = max(abs(a - b) for one, other in zip(batched, naive) for a, b in zip(one.step_scores, other)
                   if a is not None and b is not None)
        unscored = sum(one.unscored_steps for one in batched)
        windowed = sum(row.n_scored for rows in encode_solutions(prm, solutions) for row in rows[1:])
        print(f"speed-up: {naive_s / batched_s:.1f}x   max |score difference|: {diff:.2e}   "
              f"steps read through the sliding window: {windowed}   unscored both ways: {unscored}")
        print(f"tokens through the model, naive / one-pass: {prefix_tokens(prm, solutions):.2f}x "
              "(the speed-up a compute-bound device gets from the one pass alone, before batching)", flush=True)
    print("\ngoal: one-pass batched >= 10x the naive way on CPU")


def prefix_tokens(prm, solutions):
    """Tokens the naive way pushes through the model over the tokens of the one pass.

    Only the prefixes the naive way runs count: a step that cannot be read is not run.
    """
    from scoring.inputs import encode_solution

    full = naive = 0
    for problem, steps in solutions:
        for k in range(1, len(steps) + 1):
            row = prefix_row(prm, problem, steps[:k])
            naive += len(row) if row is not None else 0
        full += sum(map(len, encode_solution(prm.tokenizer, problem, steps, step_token_id=prm.step_token_id,
                                             max_length=prm.max_length, overflow=prm.overflow)))
    return naive / full


if __name__ == "__main__":
    main()
