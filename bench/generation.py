"""Wall time of one generation over a candidate pool, on CPU with MiniLM: scoring vs selection.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/stepmark_bench DJANGO_DEBUG=1 \\
        .venv/bin/python -m bench.generation [--pool 10000] [--batch 256] [--threads 2] [--size 100]

The pool is real solutions from data/: GSM8K's example model solutions (5,276) and
ProcessBench's GSM8K solutions (400); beyond that the GSM8K solutions repeat under another
generator name (distinct rows, same texts and so the same scoring cost). The benchmark runs
the job functions the worker runs (``scoring.champions``, ``scoring.jobs``) in this process:
building the initial PRM on MiniLM, scoring the pool in batches with progress rows, and
selecting the generation.
It owns its database (see bench/import_export.py): its labelling tables are emptied first.
"""
import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from labeling.data import open_data  # noqa: E402 (after the repository is on the path)


def candidates(pool):
    """Up to ``pool`` candidate records (the ``candidates`` import format)."""
    gsm8k = []
    for line in open_data("gsm8k/example_model_solutions.jsonl.gz"):
        record = json.loads(line)
        answer = record["ground_truth"].rstrip().rpartition("\n")[2][2:].strip()
        for generator, entry in record.items():
            if isinstance(entry, dict) and "solution" in entry:
                steps = [s for s in entry["solution"].split("\n") if s.strip()]
                gsm8k.append({"problem": record["question"], "ground_truth_answer": answer, "steps": steps,
                              "generator": generator, "is_correct": entry["is_correct"]})
    bench = [{"problem": item["problem"], "ground_truth_answer": None, "steps": item["steps"],
              "generator": f"processbench:{item['generator']}", "is_correct": item["final_answer_correct"]}
             for item in json.load(open_data("processbench/gsm8k.json.gz"))]
    out = gsm8k + bench
    copy = 2
    while len(out) < pool:
        out += [{**c, "generator": f"{c['generator']}-copy{copy}"} for c in gsm8k[: pool - len(out)]]
        copy += 1
    return out[:pool]


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m bench.generation", description=__doc__.split("\n\n")[0])
    parser.add_argument("--pool", type=int, default=10_000, help="candidate solutions in the pool (default 10,000)")
    parser.add_argument("--batch", type=int, default=256, help="solutions per scoring batch (default 256)")
    parser.add_argument("--size", type=int, default=100, help="solutions the generation selects (default 100)")
    parser.add_argument("--threads", type=int, default=2, help="torch CPU threads (default 2)")
    args = parser.parse_args(argv)
    os.environ.setdefault("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/stepmark_bench")
    from bench.import_export import _prepare_database, _use_bench_database

    _use_bench_database()
    _prepare_database()
    import torch
    from django.conf import settings

    torch.set_num_threads(args.threads)
    settings.STEPMARK_CHECKPOINT_DIR = Path(tempfile.mkdtemp(prefix="stepmark-bench-checkpoints-"))
    from labeling.imports import run_import
    from labeling.models import Project
    from scoring import jobs, runs, worker
    from scoring.champions import ensure_champion
    from scoring.models import GenerationRun

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "pool.jsonl"
        path.write_text("".join(json.dumps(c) + "\n" for c in candidates(args.pool)), encoding="utf-8")
        project = Project.objects.create(name="bench generation", generation_size=args.size)
        start = time.monotonic()
        run_import("candidates", path, project)
        imported = time.monotonic() - start
    pool = runs.candidate_pool(project).count()
    print(f"pool: {pool:,} candidate solutions imported in {imported:.1f}s (not part of the generation)", flush=True)

    timings = {}
    start = time.monotonic()
    checkpoint = ensure_champion(project)
    prm = worker.get_prm(checkpoint)
    timings["initial PRM (MiniLM + head), save, load"] = time.monotonic() - start
    run = runs.start_generation(project)
    GenerationRun.objects.filter(pk=run.pk).update(state=GenerationRun.SCORING, checkpoint=checkpoint)
    run.refresh_from_db()
    start = time.monotonic()
    jobs.score_pool(run, prm, batch_size=args.batch)
    timings["scoring"] = time.monotonic() - start
    GenerationRun.objects.filter(pk=run.pk).update(state=GenerationRun.SELECTING)
    start = time.monotonic()
    run = jobs.select(run)
    timings["selection"] = time.monotonic() - start
    generation = timings["scoring"] + timings["selection"]

    print(f"\ngeneration over {pool:,} solutions on {worker.device()} ({args.threads} threads, batch {args.batch}), "
          f"selected {run.selected}, load average {os.getloadavg()[0]:.1f}")
    for name, seconds in timings.items():
        print(f"  {name:<42} {seconds:8.1f} s")
    print(f"  {'generation (scoring + selection)':<42} {generation:8.1f} s")
    print(f"  {'scoring rate':<42} {pool / timings['scoring']:8.1f} solutions/s")
    print(f"  {'share of the generation spent selecting':<42} {100 * timings['selection'] / generation:8.2f} %")
    return 0


if __name__ == "__main__":
    sys.exit(main())
