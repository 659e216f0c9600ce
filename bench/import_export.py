"""PRM800K import and export at PRM800K's scale: wall time and peak memory.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/stepmark_bench DJANGO_DEBUG=1 \\
        .venv/bin/python -m bench.import_export [--solutions 100000] [--keep-file]

Builds a phase-2 style corpus (default 100,000 solutions, about 1,000,000 step ratings) by
recombining real texts from data/ (MATH-500 problems, PRM800K phase-1 step texts),
with alternatives at some positions, gold items rated by many labelers and a few
hundred labeler UUIDs. Then, each in a fresh process so that one's peak memory does not hide
another's: import it, import it again (everything skipped), export it as PRM800K JSONL, export
it for TRL. Prints a table of wall times, rates and peak RSS.

The benchmark owns its database: a name not ending in ``bench`` gets ``_bench`` appended
(``make bench`` must never touch the test database). The database is created if missing and
migrated; its labelling tables are emptied before each run.
"""
import argparse
import datetime
import json
import os
import random
import resource
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

from bench._database import bench_database_url, create_database, migrate, use_database
from labeling.data import open_data

ROOT = Path(__file__).resolve().parent.parent
PROJECT = "bench prm800k"
GOALS = {"import": "<= 120 s", "export prm800k": "<= 20 s, < 400 MB"}


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m bench.import_export", description=__doc__.split("\n\n")[0])
    parser.add_argument("--solutions", type=int, default=100_000, help="solutions to generate (default 100,000)")
    parser.add_argument("--keep-file", action="store_true", help="keep the generated corpus and exports")
    parser.add_argument("--child", nargs="+", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    _use_bench_database()
    if args.child:
        return _child(*args.child)

    _prepare_database()
    workdir = Path(tempfile.mkdtemp(prefix="stepmark-bench-"))
    corpus = workdir / "corpus.jsonl"
    start = time.monotonic()
    stats = write_corpus(corpus, args.solutions)
    print(
        f"corpus: {stats['records']:,} records, {stats['solutions']:,} solutions, {stats['ratings']:,} step ratings, "
        f"{stats['labelers']} labelers, {corpus.stat().st_size / 1e6:,.0f} MB, built in {time.monotonic() - start:.1f}s",
        flush=True,
    )
    load = os.getloadavg()
    rows = [
        ("import", _run_child("import", corpus)),
        ("re-import (all skipped)", _run_child("import", corpus)),
        ("export prm800k", _run_child("export", workdir / "export.jsonl", "prm800k")),
        ("export prm800k gzip", _run_child("export", workdir / "export.jsonl.gz", "prm800k")),
        ("export trl", _run_child("export", workdir / "trl.jsonl", "trl")),
    ]
    print()
    print(f"load average before: {load[0]:.1f}, after: {os.getloadavg()[0]:.1f} ({os.cpu_count()} CPUs)")
    print(f"{'step':<26} {'records':>10} {'wall s':>8} {'CPU s':>7} {'DB CPU s':>9} {'records/s':>10} "
          f"{'ratings/s':>10} {'peak RSS MB':>12}  goal")
    for name, r in rows:
        print(
            f"{name:<26} {r['records']:>10,} {r['wall']:>8.1f} {r['cpu']:>7.1f} {r['db_cpu']:>9.1f} "
            f"{r['records'] / r['wall']:>10,.0f} {stats['ratings'] / r['wall']:>10,.0f} {r['rss_mb']:>12,.0f}  "
            f"{GOALS.get(name, '')}"
        )
    print("CPU s: the Python process; DB CPU s: its PostgreSQL backend. On a shared machine wall time\n"
          "also counts waiting for a CPU (see the load average); the two CPU figures do not.")
    print(f"\nfiles in {workdir}" if args.keep_file else "")
    if not args.keep_file:
        for path in workdir.iterdir():
            path.unlink()
        workdir.rmdir()
    return 0


# --- the corpus ------------------------------------------------------------------------------


def write_corpus(path, solutions, *, seed=800):
    """Write a PRM800K-format phase-2 corpus; return its counts."""
    rng = random.Random(seed)
    with open_data("math/math500.jsonl.gz") as f:
        problems = [json.loads(line) for line in f]
    texts = _step_texts()
    labelers = [str(uuid.UUID(int=rng.getrandbits(128), version=4)) for _ in range(300)]
    gold = max(1, solutions // 2000)  # gold items, each rated by many labelers
    overlap = solutions // 50  # ordinary solutions rated a second time, later in the file
    ratings = records = 0
    when = datetime.datetime(2022, 9, 1)
    question_of = {}
    with open(path, "w", encoding="utf-8") as out:
        repeated = set(rng.sample(range(gold, solutions), overlap))
        order = list(range(solutions)) + sorted(repeated) + [i for i in range(gold) for _ in range(20)]
        rng.shuffle(order)
        repeated.update(range(gold))
        taken = {}  # labelers of the solutions rated more than once
        for number, index in enumerate(order):
            question = question_of.get(index) or _question(rng, index, problems, texts)
            labeler = rng.choice(labelers)
            if index in repeated:
                question_of[index] = question
                while labeler in taken.setdefault(index, set()):
                    labeler = rng.choice(labelers)
                taken[index].add(labeler)
            when += datetime.timedelta(seconds=rng.uniform(1, 40))
            label, n = _label(rng, question["pre_generated_steps"], texts)
            record = {
                "labeler": labeler,
                "timestamp": when.isoformat(timespec="microseconds"),
                "generation": 1 + number * 10 // len(order),
                "is_quality_control_question": index < gold,
                "is_initial_screening_question": False,
                "question": question,
                "label": label,
            }
            out.write(json.dumps(record, ensure_ascii=False) + "\n")
            ratings += n
            records += 1
    return {"records": records, "solutions": solutions, "ratings": ratings, "labelers": len(labelers)}


def _step_texts():
    texts = set()
    with open_data("prm800k/phase1_train.reconstructed.jsonl.gz") as f:
        for line in f:
            for step in json.loads(line)["label"]["steps"]:
                for completion in step["completions"] or ():
                    if "# Answer" not in completion["text"]:
                        texts.add(completion["text"])
    return sorted(texts)


def _question(rng, index, problems, texts):
    problem = problems[index % len(problems)]
    length = rng.randint(7, 19)
    answer = problem["answer"] if rng.random() < 0.3 else rng.choice(problems)["answer"]
    steps = rng.sample(texts, length - 1) + [f"{rng.choice(texts)}\n\n# Answer\n\n{answer}"]
    return {
        "problem": problem["problem"],
        "ground_truth_solution": problem["solution"],
        "ground_truth_answer": problem["answer"],
        "pre_generated_steps": steps,
        "pre_generated_answer": answer,
        "pre_generated_verifier_score": rng.random(),
    }


def _label(rng, steps, texts):
    labelled, count = [], 0
    finish = "solution"
    for text in steps:
        rating = rng.choices((1, 0, -1), weights=(70, 22, 8))[0]
        completions = [{"text": text, "rating": rating, "flagged": rng.random() < 0.02 or None}]
        error = rating == -1
        if error or rng.random() < 0.05:
            for _ in range(rng.randint(1, 3)):
                completions.append({"text": rng.choice(texts), "rating": rng.choice((1, 0, -1)), "flagged": None})
        labelled.append({"completions": completions, "human_completion": None,
                         "chosen_completion": None if error else 0})
        count += len(completions)
        if error:
            finish = "found_error"
            break
    return {"steps": labelled, "total_time": rng.randint(20_000, 900_000), "finish_reason": finish}, count


# --- measuring, each step in its own process ------------------------------------------------


def _run_child(*args):
    command = [sys.executable, "-m", "bench.import_export", "--child", *map(str, args)]
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True)
    if done.returncode:
        sys.stderr.write(done.stdout + done.stderr)
        raise SystemExit(f"{' '.join(map(str, args))} failed")
    return json.loads(done.stdout.strip().splitlines()[-1])


def _child(action, path, fmt=None):
    import django

    django.setup()
    from labeling.exports import ExportFilters, write_export
    from labeling.imports import run_import
    from labeling.models import Project

    project = Project.objects.get_or_create(name=PROJECT)[0]
    server_cpu = _server_cpu()
    server_start = server_cpu()
    start = time.monotonic()
    if action == "import":
        result = run_import("prm800k", path, project)
        records = result.records
    else:
        records = write_export(fmt, ExportFilters(project_id=project.id), path)
    wall = time.monotonic() - start
    usage = resource.getrusage(resource.RUSAGE_SELF)
    print(json.dumps({"records": records, "wall": wall, "cpu": usage.ru_utime + usage.ru_stime,
                      "db_cpu": server_cpu() - server_start, "rss_mb": usage.ru_maxrss / 1024}))
    return 0


def _server_cpu():
    """A function giving the CPU seconds of this connection's PostgreSQL backend (same host)."""
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        stat = Path(f"/proc/{cursor.fetchone()[0]}/stat")
    ticks = os.sysconf("SC_CLK_TCK")

    def seconds():
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:  # the database runs elsewhere
            return float("nan")
        return (int(fields[11]) + int(fields[12])) / ticks  # utime, stime

    return seconds


# --- the database ----------------------------------------------------------------------------


def _use_bench_database():
    use_database(bench_database_url("postgres://postgres@127.0.0.1:5432/stepmark_bench", "bench",
                                    "the import/export benchmark needs PostgreSQL: set DATABASE_URL"))


def _prepare_database():
    create_database(os.environ["DATABASE_URL"])
    migrate()
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute(
            "TRUNCATE labeling_rating, labeling_step, labeling_assignment, labeling_solution, labeling_generation, "
            "labeling_problem, labeling_annotator, labeling_project CASCADE"
        )
    connection.close()


if __name__ == "__main__":
    sys.exit(main())
