"""Throughput of the one-pass batched PRM scorer against the naive way, on CPU with MiniLM.

The naive way runs one forward pass per step prefix (problem + steps 1..k), one at a time, and
reads the last separator: what a PRM without prefix causality would have to do. It runs each
distinct prefix once (a prefix shared by several solutions is not run again). Past MiniLM's
512 tokens both ways read a step in the same sliding window (the problem, the steps just
before, the step: ``scoring.prm.inputs.encode_solution``); ``--overflow unscored`` leaves those
steps out of both instead.

The scorer reads every step of a solution in one pass, batches solutions of similar length,
and reads solutions that begin alike as one prefix tree (``scoring.prm.packing``). It is timed
twice: as it runs (``one-pass, trees``) and with the trees off (``one-pass, rows``: one row a
solution, what it did before trees). All three score the same steps; the script checks that
they agree.

Four workloads by default, because the gain grows with the steps a solution has and with
what solutions share:

- ``trajectories``: the PRM800K phase-1 test trajectories (MATH, 17 steps a solution);
- ``records``: the same records with every rated alternative, what ``python -m scoring
  evaluate`` reads from a PRM800K file: each alternative is the trajectory's prefix followed
  by the alternative, so most of its tokens are the trajectory's;
- ``processbench``: ProcessBench's GSM8K solutions (5 steps, one solution a problem);
- ``pool``: OpenAI's GSM8K candidate pool, four model solutions a problem (what active
  learning scores): the candidates of a problem share the problem's tokens.

On a CPU every way is compute-bound, so the gain is about the ratio of tokens pushed through
the model, which the script prints too. ``--tokens-only`` prints only those, at MiniLM's 512
tokens and at longer contexts, without running the model. ``--context N`` times a model of
MiniLM's shape whose position table holds N tokens, with random weights (speed does not depend
on them): what the same scorer does when a solution's steps fit in one row.

    .venv/bin/python bench/scoring_throughput.py [--workloads trajectories records processbench pool]
        [--data FILE] [--solutions 100] [--min-steps 1] [--overflow window|unscored] [--threads 2]
        [--tokens-only [--contexts 1024 4096]] [--context 2048]
"""
import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from labeling.data import data_path  # noqa: E402 (after the repository is on the path)

WORKLOADS = {
    "trajectories": data_path("prm800k/phase1_test.reconstructed.jsonl.gz"),
    "records": data_path("prm800k/phase1_test.reconstructed.jsonl.gz"),
    "processbench": data_path("processbench/gsm8k.json.gz"),
    "pool": data_path("gsm8k/example_model_solutions.jsonl.gz"),
}


def distinct_prefixes(solutions):
    """Every distinct ``(problem, steps[:k])`` of ``solutions``, in first-seen order."""
    seen = {}
    for problem, steps in solutions:
        for k in range(1, len(steps) + 1):
            seen.setdefault((problem, tuple(steps[:k])), None)
    return list(seen)


def naive_scores(prm, prefixes):
    """``{prefix: P(correct) of its last step}``, one forward pass per prefix (None: cannot be read)."""
    import torch

    from scoring.prm.inputs import collate, pad_id
    from scoring.prm.model import CORRECT

    scores = {}
    with torch.inference_mode():
        for problem, steps in prefixes:
            row = prefix_row(prm, problem, list(steps))
            if row is None:
                scores[problem, steps] = None
                continue
            batch = collate([row], pad_token_id=pad_id(prm.tokenizer))
            logits = prm(batch["input_ids"], batch["attention_mask"])
            scores[problem, steps] = torch.softmax(logits[0, row.step_positions[-1]], -1)[CORRECT].item()
    return scores


def prefix_row(prm, problem, steps, max_length=None):
    """The one row the naive way runs for the last of ``steps`` (None: it cannot be read).

    Past the context (``max_length``, by default the PRM's) that is the window the PRM reads
    it in: the problem, the steps just before it, then it.
    """
    from scoring.prm.inputs import encode_solution

    row = encode_solution(prm.tokenizer, problem, steps, step_token_id=prm.step_token_id,
                          max_length=max_length or prm.max_length, overflow=prm.overflow)[-1]
    return row if row.n_scored and row.first_step + row.n_scored == len(steps) else None


def token_counts(prm, solutions, prefixes, max_length=None):
    """Tokens each way pushes through the model at a context of ``max_length`` (default the
    PRM's): ``(naive, rows, trees)``. On a compute-bound device the speed-up follows them."""
    from scoring.prm.inputs import encode_solution
    from scoring.prm.packing import pack, pair_cost, tree_limit

    max_length = max_length or prm.max_length
    encoded = [row for problem, steps in solutions
               for row in encode_solution(prm.tokenizer, problem, steps, step_token_id=prm.step_token_id,
                                          max_length=max_length, overflow=prm.overflow) if row.n_scored]
    naive = sum(len(row) for row in (prefix_row(prm, p, list(s), max_length) for p, s in prefixes) if row is not None)
    trees = pack([row.input_ids for row in encoded], max_tokens=tree_limit(max_length), pair_cost=pair_cost(prm))[0]
    return naive, sum(map(len, encoded)), sum(map(len, trees))


def load(workload, path, limit, min_steps=1):
    """``(problem, steps)`` pairs of the first ``limit`` solutions (records, for ``records``) with at
    least ``min_steps`` steps, from a PRM800K, ProcessBench, candidate or GSM8K-examples file."""
    from scoring.prm.data import (
        detect_format,
        prm800k_examples,
        read_jsonl,
        read_solutions,
    )

    if detect_format(path) != "prm800k":
        found = [(r["problem"], r["steps"]) for r in read_solutions(path)]
        return [pair for pair in found if len(pair[1]) >= min_steps][:limit]
    alternatives = workload == "records"
    solutions, records = [], 0
    for line, record in read_jsonl(path):
        examples = prm800k_examples(record, alternatives=alternatives, path=path, line=line)
        if not examples or len(examples[0].steps) < min_steps:
            continue  # the trajectory comes first
        solutions += [(e.problem, e.steps) for e in examples]
        records += 1
        if records == limit:
            break
    return solutions


def print_token_counts(prm, workload, path, solutions, prefixes, contexts):
    n_steps = sum(len(steps) for _, steps in solutions)
    print(f"\n{workload} ({path.name}): {len(solutions)} solutions, {n_steps} steps, {len(prefixes)} distinct step prefixes")
    for context in contexts:
        naive, rows, trees = token_counts(prm, solutions, prefixes, context)
        print(f"  context {context:6d}: naive {naive:12,}  rows {rows:10,} ({naive / rows:5.2f}x fewer)  "
              f"trees {trees:10,} ({naive / trees:5.2f}x fewer)", flush=True)


def minilm_shaped(context, overflow):
    """A PRM of MiniLM's shape (and tokenizer) with a ``context``-token position table and random weights."""
    import torch
    from transformers import AutoConfig, AutoModel

    from scoring.prm.model import default_base_model, load_tokenizer, prm_on

    base = default_base_model()
    config = AutoConfig.from_pretrained(str(base), local_files_only=True)
    config.max_position_embeddings = context
    torch.manual_seed(0)
    backbone = AutoModel.from_config(config, attn_implementation="sdpa")
    return prm_on(backbone, load_tokenizer(base), max_length=context, overflow=overflow)


def timed(function, *args, **kwargs):
    start = time.perf_counter()
    result = function(*args, **kwargs)
    return result, time.perf_counter() - start


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--workloads", nargs="+", choices=tuple(WORKLOADS), default=list(WORKLOADS),
                        help="what to score (default: all four)")
    parser.add_argument("--data", type=Path, default=None,
                        help="read every workload from this file instead of its default one")
    parser.add_argument("--solutions", type=int, default=100,
                        help="solutions per workload; PRM800K records for 'records' (default 100)")
    parser.add_argument("--min-steps", type=int, default=1,
                        help="only solutions (trajectories) with at least this many steps (the gain grows with them)")
    parser.add_argument("--overflow", choices=("window", "unscored"), default="window",
                        help="steps past MiniLM's 512 tokens: read through the sliding window (the default of new PRMs) "
                             "or left unscored, every way (default window)")
    parser.add_argument("--threads", type=int, default=2, help="torch CPU threads (default 2)")
    parser.add_argument("--max-tokens", type=int, default=None, help="padded tokens per batch (scorer's CPU default)")
    parser.add_argument("--max-batch", type=int, default=None, help="rows per batch (scorer's CPU default)")
    parser.add_argument("--tokens-only", action="store_true",
                        help="time nothing: print the tokens each way pushes through the model, at MiniLM's context "
                             "and at each of --contexts (what bounds the speed-up on a compute-bound device)")
    parser.add_argument("--contexts", type=int, nargs="*", default=[1024, 4096],
                        help="with --tokens-only, the other contexts to count at (default 1024 4096)")
    parser.add_argument("--context", type=int, default=None,
                        help="time a model of MiniLM's shape with an N-token context and random weights instead of MiniLM")
    args = parser.parse_args()

    import torch

    from scoring.prm.model import default_base_model, new_prm
    from scoring.prm.packing import tree_limit
    from scoring.prm.scorer import batching, encode_solutions, score_solutions

    torch.set_num_threads(args.threads)
    # an untrained head costs the same as a trained one
    if args.context:
        prm = minilm_shaped(args.context, args.overflow)
    else:
        prm = new_prm(default_base_model(), device="cpu", overflow=args.overflow)
    max_tokens, max_batch = batching("cpu", args.max_tokens, args.max_batch)
    options = dict(max_tokens=max_tokens, max_batch=max_batch)
    shape = f"MiniLM-L6's shape, {args.context}-token context, random weights" if args.context else "MiniLM-L6"
    print(f"{shape} on CPU, {args.threads} threads, torch {torch.__version__}; batches of at most "
          f"{max_tokens} padded tokens and {max_batch} rows; trees of at most {tree_limit(prm.max_length)} tokens; "
          f"past {prm.max_length} tokens: {args.overflow}", flush=True)
    for workload in args.workloads:
        path = args.data or WORKLOADS[workload]
        solutions = load(workload, path, args.solutions, args.min_steps)
        prefixes = distinct_prefixes(solutions)
        if args.tokens_only:
            print_token_counts(prm, workload, path, solutions, prefixes, [prm.max_length, *args.contexts])
            continue
        score_solutions(prm, solutions[:8])  # warm-up
        n_steps = sum(len(steps) for _, steps in solutions)
        print(f"\n{workload} ({path.name}): {len(solutions)} solutions, {n_steps} steps "
              f"({n_steps / len(solutions):.1f} a solution), {len(prefixes)} distinct step prefixes", flush=True)
        trees, trees_s = timed(score_solutions, prm, solutions, **options)
        rows, rows_s = timed(score_solutions, prm, solutions, share_prefixes=False, **options)
        naive, naive_s = timed(naive_scores, prm, prefixes)
        n_read = sum(score is not None for score in naive.values())  # the distinct steps given a score
        for name, seconds in (("one-pass, trees", trees_s), ("one-pass, rows", rows_s), ("naive per-prefix", naive_s)):
            print(f"{name:>16}: {seconds:7.2f} s  {len(solutions) / seconds:8.1f} solutions/s  "
                  f"{n_read / seconds:8.1f} steps scored/s   naive / this: {naive_s / seconds:5.1f}x", flush=True)
        diff = max(max(abs(a - naive[problem, tuple(steps[: k + 1])]), abs(a - b))
                   for (problem, steps), tree, row in zip(solutions, trees, rows)
                   for k, (a, b) in enumerate(zip(tree.step_scores, row.step_scores)) if a is not None)
        unscored = sum(score is None for score in naive.values())
        windowed = sum(row.n_scored for rows in encode_solutions(prm, solutions) for row in rows[1:])
        naive_tokens, row_tokens, tree_total = token_counts(prm, solutions, prefixes)
        print(f"max |score difference| between the three: {diff:.2e}   steps read through the sliding window: "
              f"{windowed}   distinct steps unscored every way: {unscored}")
        print(f"tokens through the model: naive {naive_tokens:,}, rows {row_tokens:,} ({naive_tokens / row_tokens:.2f}x "
              f"fewer), trees {tree_total:,} ({naive_tokens / tree_total:.2f}x fewer): the speed-up a compute-bound "
              "device gets from the tokens alone", flush=True)
    print("\ngoal: one-pass batched >= 10x the naive way on CPU")


if __name__ == "__main__":
    main()
