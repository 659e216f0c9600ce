"""A generation run at the size of a campaign: a worker's memory against the pool's size, and 1 worker against 2.

    DJANGO_DEBUG=1 REDIS_URL=redis://127.0.0.1:6379/0 .venv/bin/python -m bench.scoring_memory
        [--sizes 10000 100000] [--workers-pool 4000] [--shard-size 2000] [--workers-shard-size 250] [--batch 256] [--skip-memory]
        [--skip-workers]

- **Memory.** For each of ``--sizes``, a pool of that many synthetic candidates (GSM8K's real
  model solutions, cycled, each made distinct; four a problem) is scored by one worker process
  with a tiny random BERT (2 layers, hidden 32, MiniLM's tokenizer): the same ``scoring.shards``
  path as the GPU workers, shards claimed from the database and read one batch at a time.
  Printed: the process's RSS once the model is loaded, its peak RSS (``ru_maxrss``) after
  scoring the whole pool, the growth between the two, and then the peak after the selection
  (which reads every score of the pool, ``scoring.jobs.select``).
- **Workers.** One pool of ``--workers-pool`` candidates scored by 1 and then by 2 real Celery
  workers (``--pool=solo``, one torch thread each, queue ``gpu``), in one sitting, the same
  checkpoint, its scores deleted in between: the wall time from queuing ``run_generation`` to the
  run's ``done``, and the ratio. On a CPU the workers share the machine's cores with PostgreSQL
  and each other, so the ratio says how well the shards spread, not what GPUs would reach.

The benchmark owns its database: a PostgreSQL name not ending in ``scoringbench`` gets
``_scoringbench`` appended (default ``stepmark_scoringbench``); created if missing and migrated;
the synthetic pools are kept between runs (building 100K candidates takes a while). Figures: docs/prm.md.
"""
import argparse
import json
import os
import resource
import secrets
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

from bench._database import bench_database_url, create_database, migrate, use_database

ROOT = Path(__file__).resolve().parent.parent


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m bench.scoring_memory", description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10000, 100000], help="pool sizes for the memory figure")
    parser.add_argument("--workers-pool", type=int, default=4000, help="pool size for 1 against 2 workers")
    parser.add_argument("--shard-size", type=int, default=2000, help="STEPMARK_SHARD_SIZE for the memory figure (default 2000)")
    parser.add_argument("--workers-shard-size", type=int, default=250,
                        help="STEPMARK_SHARD_SIZE for 1 against 2 workers (default 250: enough shards to share)")
    parser.add_argument("--batch", type=int, default=256, help="STEPMARK_SCORING_BATCH (default 256)")
    parser.add_argument("--skip-memory", action="store_true")
    parser.add_argument("--skip-workers", action="store_true")
    parser.add_argument("--child", type=int, default=None, help=argparse.SUPPRESS)  # a run id: score it, print JSON
    args = parser.parse_args(argv)

    url = bench_database_url("postgres://postgres@127.0.0.1:5432/stepmark", "scoringbench",
                             "bench.scoring_memory needs PostgreSQL (DATABASE_URL=postgres://...)")
    use_database(url)
    os.environ["STEPMARK_SHARD_SIZE"] = str(args.shard_size)
    os.environ["STEPMARK_SCORING_BATCH"] = str(args.batch)
    os.environ.setdefault("STEPMARK_TORCH_THREADS", "1")
    if args.child is not None:
        import django

        django.setup()
        print(json.dumps(_score_in_this_process(args.child)), flush=True)
        return 0
    create_database(url)
    migrate()
    workdir = Path(tempfile.mkdtemp(prefix="stepmark-scoringbench-"))
    os.environ["STEPMARK_CHECKPOINT_DIR"] = str(workdir / "checkpoints")
    from django.conf import settings

    settings.STEPMARK_CHECKPOINT_DIR = workdir / "checkpoints"
    base = _tiny_base(workdir / "tiny-bert")
    print(f"tiny random BERT at {base}; shard size {args.shard_size}, batch {args.batch}, 1 torch thread a worker",
          flush=True)
    if not args.skip_memory:
        print("\npool      load RSS   peak RSS (scoring)   growth   peak RSS (+ selection)   scored/s")
        for size in args.sizes:
            run_id = _fresh_run(_pool(size, base), size)
            child = subprocess.run([sys.executable, "-m", "bench.scoring_memory", "--child", str(run_id),
                                    "--shard-size", str(args.shard_size), "--batch", str(args.batch)],
                                   cwd=ROOT, capture_output=True, text=True,
                                   # as a worker runs: with DEBUG, Django would keep the SQL of up to 9000 queries
                                   env=dict(os.environ, DJANGO_DEBUG="0", DJANGO_SECRET_KEY=secrets.token_urlsafe(50)))
            if child.returncode:
                raise SystemExit(child.stderr[-4000:])
            r = json.loads(child.stdout.strip().splitlines()[-1])
            print(f"{r['scored']:>7,}   {r['load_mb']:>6.0f} MB   {r['peak_mb']:>10.0f} MB        "
                  f"{r['peak_mb'] - r['load_mb']:>+5.0f} MB   {r['select_peak_mb']:>10.0f} MB              "
                  f"{r['scored'] / r['scoring_s']:>7.0f}", flush=True)
    if not args.skip_workers:
        os.environ["STEPMARK_SHARD_SIZE"] = str(args.workers_shard_size)  # the workers' environment
        settings.STEPMARK_SHARD_SIZE = args.workers_shard_size
        _workers(base, args.workers_pool, workdir)
    return 0


def _tiny_base(path):
    import torch
    from transformers import AutoTokenizer, BertConfig, BertModel

    from scoring.prm.model import default_base_model

    tokenizer = AutoTokenizer.from_pretrained(str(default_base_model()), local_files_only=True)
    torch.manual_seed(0)
    model = BertModel(BertConfig(vocab_size=len(tokenizer), hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
                                 intermediate_size=64, max_position_embeddings=512))
    model.save_pretrained(path)
    tokenizer.save_pretrained(path)
    return path


def _pool(size, base):
    """The project holding ``size`` synthetic candidates (built once, kept), its base model set to ``base``."""
    from labeling.analyze import analyze
    from labeling.data import open_text
    from labeling.models import Problem, Project, Solution, Step

    project, _ = Project.objects.get_or_create(name=f"bench scoring pool {size}")
    Project.objects.filter(pk=project.pk).update(base_model_path=str(base))
    project.refresh_from_db()
    have = Solution.objects.filter(project=project).count()
    if have == size:
        analyze(Problem, Solution, Step)  # a pool kept from a run that stopped before its statistics
        return project
    Problem.objects.filter(project=project).delete()
    sources = []
    with open_text(ROOT / "data" / "gsm8k" / "example_model_solutions.jsonl.gz") as handle:
        for line in handle:
            record = json.loads(line)
            for key in ("6b_finetuning", "6b_verification", "175b_finetuning", "175b_verification"):
                steps = [s for s in record[key]["solution"].split("\n") if s.strip()]
                if steps:
                    sources.append((record["question"], steps))
    if not sources:
        raise SystemExit("no solutions read from data/gsm8k/example_model_solutions.jsonl.gz")
    started = time.monotonic()
    chunk = 2000  # solutions a round
    for start in range(0, size, chunk):
        count = min(chunk, size - start)
        problems = Problem.objects.bulk_create(
            Problem(project=project, problem=f"{sources[(start + i) % len(sources)][0]} (#{start + i})",
                    content_hash=f"bench-p{start + i}") for i in range(0, count, 4))
        solutions = Solution.objects.bulk_create(
            Solution(project=project, problem=problems[i // 4], num_steps=len(sources[(start + i) % len(sources)][1]),
                     is_correct=(start + i) % 3 == 0, content_hash=f"bench-s{start + i}") for i in range(count))
        Step.objects.bulk_create(
            [Step(solution=solution, position=p, alternative=0, text=text + (f" [{start + i}]" if p == 0 else ""))
             for i, solution in enumerate(solutions) for p, text in enumerate(sources[(start + i) % len(sources)][1])],
            batch_size=5000)
    # As an import ends (labeling.imports): without statistics the planner reads the pool by the queue's
    # index, the whole project for each batch of 256 (130 ms a batch at 100K), which no real pool does.
    analyze(Problem, Solution, Step)
    print(f"built a pool of {size:,} synthetic candidates in {time.monotonic() - started:.0f} s", flush=True)
    return project


def _fresh_run(project, size):
    """A queued run on a new initial checkpoint (nothing scored yet), the pool's earlier runs gone."""
    from labeling.models import Generation, Solution
    from scoring.champions import ensure_champion
    from scoring.models import Checkpoint, GenerationRun

    GenerationRun.objects.filter(project=project).delete()
    Solution.objects.filter(project=project).update(generation=None, selection_rank=None, verifier_score=None)
    Generation.objects.filter(project=project).delete()
    Checkpoint.objects.filter(project=project).delete()  # its scores go with it
    checkpoint = ensure_champion(project)
    return GenerationRun.objects.create(project=project, checkpoint=checkpoint, size=min(100, size),
                                        state=GenerationRun.SCORING).pk


def _rss_mb():
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


def _score_in_this_process(run_id):
    """Score run ``run_id`` here, as a worker does, then select; RSS figures (MB) and the scoring time."""
    from scoring import jobs, shards, worker
    from scoring.models import GenerationRun
    from scoring.prm.scorer import score_solutions

    run = GenerationRun.objects.get(pk=run_id)
    prm = worker.get_prm(run.checkpoint)
    score_solutions(prm, [("Warm up.", ["One step.", "Two steps."])])  # the first call's allocations
    load = _rss_mb()
    started = time.monotonic()
    shards.plan(run)
    assert shards.score_claimed(run, prm)
    scoring_s = time.monotonic() - started
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    done = jobs.score_shards(run.pk)
    assert done.state == GenerationRun.DONE, done.state
    select_peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return {"scored": done.scored, "load_mb": load, "peak_mb": peak, "select_peak_mb": select_peak,
            "scoring_s": scoring_s}


def _workers(base, size, workdir):
    import redis

    from annotator.celery import app
    from django.conf import settings
    from scoring import tasks
    from scoring.models import GenerationRun, ScoringShard

    broker = settings.CELERY_BROKER_URL
    redis.Redis.from_url(broker).delete("gpu")
    project = _pool(size, base)
    print(f"\n{size:,} candidates, shards of {settings.STEPMARK_SHARD_SIZE}: wall time from queuing to done")
    times = {}
    for count in (1, 2):
        run_id = _fresh_run(project, size)
        GenerationRun.objects.filter(pk=run_id).update(state=GenerationRun.QUEUED)
        workers = [_start_worker(workdir, f"{count}-{n}") for n in range(count)]
        try:
            for name, _ in workers:
                _wait_ready(app, name)
            started = time.monotonic()
            tasks.run_generation.apply_async(args=[run_id], queue="gpu")
            while not GenerationRun.objects.filter(pk=run_id, state__in=("done", "failed")).exists():
                time.sleep(0.2)
            times[count] = time.monotonic() - started
        finally:
            for _, process in workers:
                process.terminate()
                process.wait(timeout=30)
        run = GenerationRun.objects.get(pk=run_id)
        claimed = sorted({name for name in ScoringShard.objects.filter(run_id=run_id).values_list("claimed_by", flat=True)})
        print(f"  {count} worker{'s' if count > 1 else ' '}: {times[count]:6.1f} s  ({run.state}, {run.scored:,} scored, "
              f"{run.scored / times[count]:.0f}/s; shards scored by {len(claimed)} process{'es' if len(claimed) > 1 else ''})",
              flush=True)
    print(f"  ratio 1 worker / 2 workers: {times[1] / times[2]:.2f}x", flush=True)


def _start_worker(workdir, tag):
    name = f"scoringbench-{tag}-{uuid.uuid4().hex[:6]}@localhost"
    env = dict(os.environ, DJANGO_DEBUG="0", DJANGO_SECRET_KEY=secrets.token_urlsafe(50), STEPMARK_TORCH_THREADS="1",
               OMP_NUM_THREADS="1", TOKENIZERS_PARALLELISM="false", HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1")
    log = open(workdir / f"worker-{tag}.log", "wb")
    command = [sys.executable, "-m", "celery", "-A", "annotator", "worker", "-Q", "gpu", "--pool=solo", "-c", "1",
               "-n", name, "--without-gossip", "--without-mingle", "-l", "info"]
    return name, subprocess.Popen(command, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)


def _wait_ready(app, name, timeout=120):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if app.control.ping(destination=[name], timeout=0.5):
            return
    raise SystemExit(f"worker {name} did not answer in {timeout} s")


if __name__ == "__main__":
    sys.exit(main())
