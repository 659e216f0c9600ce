"""Training throughput on PRM800K with MiniLM on CPU: prefix trees against one row per example.

PRM800K phase 1 rates several candidates at each step of a trajectory; ``python -m scoring
train`` trains on each alternative as the trajectory's prefix followed by the alternative. As
rows, every alternative pushes the trajectory's prefix through the model again; as prefix
trees (``scoring.prm.packing``, the default) a record's shared tokens are computed once and the
summed loss is the same.

The script encodes the first ``--records`` records of the phase-1 training file as training
does, then times forward and backward passes over every labelled step, both ways, with the
same batch budget, and prints labelled steps per second and the tokens each way pushes
through the model. It also checks that the two losses agree (dropout off). Last, the whole
trainer (``scoring.prm.train.train``: ``PRMTrainer``, one epoch over the same trees, AdamW
steps included) on a fresh copy, with its labelled steps per second beside the bare passes'.

    .venv/bin/python bench/training_throughput.py [--records 20] [--threads 2]
"""
import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from labeling.data import data_path  # noqa: E402 (after the repository is on the path)

DATA = data_path("prm800k/phase1_train.reconstructed.jsonl.gz")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=DATA, help="PRM800K JSONL (default: phase-1 train)")
    parser.add_argument("--records", type=int, default=20, help="records to train on (default 20)")
    parser.add_argument("--threads", type=int, default=2, help="torch CPU threads (default 2)")
    args = parser.parse_args()

    import torch

    from scoring.prm.data import read_prm800k
    from scoring.prm.model import default_base_model, new_prm
    from scoring.prm.train import TrainConfig, batch_loss, encode_examples, train_batches, tree_units

    torch.set_num_threads(args.threads)
    prm = new_prm(default_base_model(), device="cpu")
    prm.eval()  # dropout off, so that both ways compute the same loss
    examples = read_prm800k(args.data, limit=args.records)
    rows, labels, dropped = encode_examples(prm, examples)
    config = TrainConfig()
    n_labels = sum(label is not None for row_labels in labels for label in row_labels)
    print(f"MiniLM-L6 on CPU, {args.threads} threads, torch {torch.__version__}; {args.records} PRM800K records: "
          f"{len(examples)} examples, {len(rows)} rows, {n_labels} labelled steps ({dropped} unread); batches as "
          f"training makes them (the CPU's padded-token budget, at most {config.max_batch} units)", flush=True)
    losses = {}
    timings = {}
    for name, share in (("trees", True), ("rows", False)):
        units, targets = tree_units(prm, rows, labels, share_prefixes=share)
        batches = train_batches(prm, units, config)
        start = time.perf_counter()
        total = 0.0
        for batch in batches:
            prm.zero_grad(set_to_none=True)
            loss, _ = batch_loss(prm, [units[i] for i in batch], [targets[i] for i in batch])
            loss.backward()
            total += float(loss.detach())
        seconds = time.perf_counter() - start
        losses[name], timings[name] = total, seconds
        print(f"{name:>5}: {len(units):5d} units, {sum(map(len, units)):8,} tokens, {len(batches):4d} batches: "
              f"{seconds:7.1f} s forward+backward, {n_labels / seconds:7.1f} labelled steps/s", flush=True)
    print(f"rows / trees: {timings['rows'] / timings['trees']:.1f}x the time; summed loss {losses['trees']:.4f} vs "
          f"{losses['rows']:.4f} (relative difference {abs(losses['trees'] - losses['rows']) / losses['rows']:.1e})")
    from scoring.prm.train import train

    fresh = new_prm(default_base_model(), device="cpu")
    start = time.perf_counter()
    summary = train(fresh, examples, [], TrainConfig(log_every=1_000_000), progress=False)
    seconds = time.perf_counter() - start
    print(f"trainer: {summary['steps']:4d} optimizer steps (one epoch of trees): {seconds:7.1f} s, "
          f"{n_labels / seconds:7.1f} labelled steps/s, {timings['trees'] / seconds:.2f}x the bare passes' rate")


if __name__ == "__main__":
    main()
