"""Throughput of the one-pass batched PRM scorer against the naive way, on CPU with MiniLM.

The naive way runs one forward pass per step prefix (problem + steps 1..k), one solution at a
time, and reads the last separator: what a PRM without prefix causality would have to do.
The batched scorer reads every step of a solution in one pass and batches solutions of
similar length. Both score the same ProcessBench GSM8K solutions; the script checks they agree.

    .venv/bin/python bench/scoring_throughput.py [--solutions 200] [--threads 2]
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

    from scoring.inputs import collate, encode, pad_id
    from scoring.model import CORRECT

    results = []
    with torch.inference_mode():
        for problem, steps in solutions:
            scores = []
            for k in range(len(steps)):
                row = encode(prm.tokenizer, problem, steps[: k + 1], step_token_id=prm.step_token_id, max_length=prm.max_length)
                if row.n_scored <= k:
                    scores.append(None)
                    continue
                batch = collate([row], pad_token_id=pad_id(prm.tokenizer))
                logits = prm(batch["input_ids"], batch["attention_mask"])
                scores.append(torch.softmax(logits[0, row.step_positions[-1]], -1)[CORRECT].item())
            results.append(scores)
    return results


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data" / "processbench" / "gsm8k.json")
    parser.add_argument("--solutions", type=int, default=200, help="how many solutions (default 200)")
    parser.add_argument("--threads", type=int, default=2, help="torch CPU threads (default 2)")
    parser.add_argument("--max-tokens", type=int, default=16384, help="padded tokens per batch (default 16384)")
    parser.add_argument("--max-batch", type=int, default=64, help="solutions per batch (default 64)")
    args = parser.parse_args()

    import torch

    from scoring.model import default_base_model, new_prm
    from scoring.scorer import score_solutions

    torch.set_num_threads(args.threads)
    items = json.loads(args.data.read_text())[: args.solutions]
    solutions = [(item["problem"], item["steps"]) for item in items]
    n_steps = sum(len(steps) for _, steps in solutions)
    prm = new_prm(default_base_model(), device="cpu")  # an untrained head costs the same as a trained one
    score_solutions(prm, solutions[:8])  # warm-up

    print(f"{len(solutions)} solutions, {n_steps} steps, MiniLM-L6 on CPU, {args.threads} threads, torch {torch.__version__}", flush=True)
    start = time.perf_counter()
    batched = score_solutions(prm, solutions, max_tokens=args.max_tokens, max_batch=args.max_batch)
    batched_s = time.perf_counter() - start
    print(f"batched one-pass: {batched_s:7.2f} s  {len(solutions) / batched_s:8.1f} solutions/s  {n_steps / batched_s:8.1f} steps/s", flush=True)
    start = time.perf_counter()
    naive = naive_scores(prm, solutions)
    naive_s = time.perf_counter() - start
    print(f"naive per-prefix: {naive_s:7.2f} s  {len(solutions) / naive_s:8.1f} solutions/s  {n_steps / naive_s:8.1f} steps/s")

    diff = max(abs(a - b) for one, other in zip(batched, naive) for a, b in zip(one.step_scores, other)
               if a is not None and b is not None)
    print(f"speed-up: {naive_s / batched_s:.1f}x   max |score difference|: {diff:.2e}")
    print(f"tokens through the model, naive / one-pass: {prefix_tokens(prm, solutions):.2f}x "
          "(the speed-up a compute-bound device gets from the one pass alone, before batching)")


def prefix_tokens(prm, solutions):
    from scoring.inputs import encode

    full = naive = 0
    for problem, steps in solutions:
        for k in range(1, len(steps) + 1):
            naive += len(encode(prm.tokenizer, problem, steps[:k], step_token_id=prm.step_token_id, max_length=prm.max_length))
        full += len(encode(prm.tokenizer, problem, steps, step_token_id=prm.step_token_id, max_length=prm.max_length))
    return naive / full


if __name__ == "__main__":
    main()
