"""Can an annotator tell a gold item from ordinary work by how long the server takes?

    DJANGO_DEBUG=1 .venv/bin/python -m bench.gold_tell [--handouts 300] [--rate 0.33]
        [--paths function,python] [--sqlite]

Sets up a project of GSM8K's example model solutions (about 5,000, four per problem) with
``--gold`` of them, picked at random, made gold items, and one annotator with an API token.
The annotator then loops ``--handouts`` times in this process, one request at a time, through
Django and DRF as served (DEBUG off): ``POST /api/projects/{id}/next/``, then ``POST
/api/assignments/{id}/submit/`` with ratings. Each request's wall time is recorded; afterwards
the database says which hand-outs were gold. A gold pass's scoring job is published to the
real broker (Redis, as in production; ``--sqlite`` uses the demo's filesystem broker).

Prints per path (``function``: PostgreSQL with the hand-out function, as production runs;
``python``: ``STEPMARK_QUEUE_FUNCTIONS=0``), for ``next`` and ``submit``: how many were gold,
the median and p90 latency of gold and of ordinary requests, and the accuracy of the best
single-threshold classifier on latency (gold above or below the best threshold), against always
guessing "ordinary". In-process timing has no network jitter to hide a difference behind: a
client over a network sees less than this.

Goal (issue #18): medians within 1 ms of each other, and the classifier no better than always
guessing "ordinary" plus 5 points. What it measured: docs/performance.md.
"""
import argparse
import os
import random
import statistics
import tempfile
import time
import uuid

from bench._database import bench_database_url, create_database, migrate, use_database
from labeling.data import data_path

PROJECT = "bench gold tell"
GOAL = "goal: gold and ordinary medians within 1 ms; threshold classifier <= always-ordinary + 5 points"


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m bench.gold_tell", description=__doc__.split("\n\n")[0])
    parser.add_argument("--handouts", type=int, default=300, help="hand-outs measured (default 300)")
    parser.add_argument("--warmup", type=int, default=20, help="loops before measuring (default 20)")
    parser.add_argument("--rate", type=float, default=0.33, help="the project's quality-control rate (default 0.33)")
    parser.add_argument("--gold", type=int, default=200, help="gold items in the project (default 200)")
    parser.add_argument("--paths", default="function,python",
                        help="comma-separated: function (PostgreSQL's hand-out function), python (without it)")
    parser.add_argument("--sqlite", action="store_true", help="the embedded default (SQLite, filesystem broker)")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)

    workdir = tempfile.mkdtemp(prefix="stepmark-goldtell-")
    if args.sqlite:
        url = f"sqlite:///{workdir}/goldtell.sqlite3"
        os.environ["STEPMARK_BROKER"] = "filesystem"
        os.environ.setdefault("STEPMARK_VAR_DIR", workdir)
        paths = ["python"]
    else:
        url = bench_database_url("postgres://postgres@127.0.0.1:5432/stepmark_goldtell", "goldtell",
                                 "without --sqlite this benchmark needs PostgreSQL: set DATABASE_URL or leave it unset")
        create_database(url)
        # Its own Redis database: the gold jobs published here are dropped at the end.
        os.environ.setdefault("REDIS_URL", "redis://127.0.0.1:6379/14")
        paths = [p for p in args.paths.split(",") if p]
    use_database(url)
    migrate()
    project_id, token = _prepare(args.gold, args.rate, args.seed)
    print(f"database: {url.rsplit('@', 1)[-1]}; {args.handouts} hand-outs per path at rate {args.rate}; "
          f"load average {os.getloadavg()[0]:.1f}")
    print(GOAL)
    failed = False
    for path in paths:
        _reset(project_id)
        samples = _drive(project_id, token, args.handouts, args.warmup, functions=path == "function",
                         rng=random.Random(args.seed))
        failed |= _report(path, samples)
    _drop_jobs()
    return 1 if failed else 0


def _prepare(gold_count, rate, seed):
    """The project (imported once, ``gold_count`` random solutions made gold) and the annotator's token."""
    from django.contrib.auth import get_user_model
    from django.db import connection

    from labeling.access.roles import ANNOTATOR, grant_role
    from labeling.access.tokens import issue
    from labeling.imports import run_import
    from labeling.models import Project, Solution
    from labeling.quality import gold

    project, created = Project.objects.get_or_create(name=PROJECT, defaults={"overlap": 3})
    if created or not project.solutions.exists():
        run_import("gsm8k-examples", data_path("gsm8k/example_model_solutions.jsonl.gz"), project)
    Project.objects.filter(pk=project.pk).update(quality_control_rate=rate, gold_threshold=0.0)
    if Solution.objects.filter(project=project, is_gold=True).count() != gold_count:
        Solution.objects.filter(project=project, is_gold=True).update(is_gold=False)
        ids = sorted(Solution.objects.filter(project=project).values_list("pk", flat=True))
        for pk in random.Random(seed).sample(ids, gold_count):
            solution = Solution.objects.get(pk=pk)
            gold.set_gold(solution, {(s.position, 0): 1 for s in solution.steps.filter(alternative=0)})
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("ANALYZE")
    user, _ = get_user_model().objects.get_or_create(username="goldtell-annotator")
    grant_role(user, ANNOTATOR, project)
    key, _ = issue(user, "bench.gold_tell")  # a new one each run: only its hash is stored
    return project.pk, key


def _reset(project_id):
    from labeling.models import Assignment, GoldScore, Project
    from labeling.work import queue

    GoldScore.objects.filter(project_id=project_id).delete()
    Assignment.objects.filter(project_id=project_id).delete()
    queue.recount_live_assignments(Project.objects.get(pk=project_id))


def _drive(project_id, token, handouts, warmup, functions, rng):
    """``[(endpoint, seconds, is_gold)]`` for the measured loops, one request at a time."""
    from django.conf import settings
    from django.test import Client

    from bench.annotator_loop import plan_ratings
    from labeling.models import Assignment

    settings.DEBUG = False
    settings.STEPMARK_QUEUE_FUNCTIONS = functions
    client = Client(HTTP_AUTHORIZATION=f"Token {token}")
    timed = []
    for i in range(warmup + handouts):
        started = time.perf_counter()
        response = client.post(f"/api/projects/{project_id}/next/", content_type="application/json")
        next_seconds = time.perf_counter() - started
        assert response.status_code in (200, 201), response.content[:300]
        task = response.json()
        reason, ratings = plan_ratings(task, rng)
        body = {"finish_reason": reason, "note": "", "submit_key": uuid.uuid4().hex, "ratings": ratings}
        started = time.perf_counter()
        response = client.post(f"/api/assignments/{task['id']}/submit/", body, content_type="application/json")
        submit_seconds = time.perf_counter() - started
        assert response.status_code == 200, response.content[:300]
        if i >= warmup:
            timed.append((task["id"], next_seconds, submit_seconds))
    gold = dict(Assignment.objects.filter(pk__in=[t[0] for t in timed]).values_list("pk", "is_quality_control"))
    return ([("next", s, gold[pk]) for pk, s, _ in timed] + [("submit", s, gold[pk]) for pk, _, s in timed])


def best_threshold_accuracy(samples):
    """The accuracy of the best rule "gold when latency > t" (or "< t") over ``[(seconds, is_gold)]``."""
    ordered = sorted(samples)
    n, golds = len(ordered), sum(g for _, g in ordered)
    best = max(golds, n - golds)  # a threshold past either end: all one class
    below_gold = 0
    for i, (_, is_gold) in enumerate(ordered, start=1):
        below_gold += is_gold
        above_gold = golds - below_gold
        # "gold above": ordinary below are right, gold above are right; and the mirror rule.
        gold_above = (i - below_gold) + above_gold
        best = max(best, gold_above, n - gold_above)
    return best / n


def _report(path, samples):
    print(f"\n{path}:")
    print(f"  {'endpoint':<8} {'gold':>5} {'ordinary':>8}  {'gold p50/p90 ms':>16}  {'ordinary p50/p90 ms':>20}"
          f"  {'Δ p50 ms':>8}  {'classifier':>10}  {'always ordinary':>15}")
    failed = False
    for endpoint in ("next", "submit"):
        rows = [(s, g) for e, s, g in samples if e == endpoint]
        gold = [s * 1000 for s, g in rows if g]
        ordinary = [s * 1000 for s, g in rows if not g]
        if len(gold) < 2 or len(ordinary) < 2:
            print(f"  {endpoint:<8} too few of one kind ({len(gold)} gold, {len(ordinary)} ordinary)")
            failed = True
            continue
        delta = statistics.median(gold) - statistics.median(ordinary)
        accuracy = best_threshold_accuracy(rows)
        baseline = len(ordinary) / len(rows)
        ok = abs(delta) <= 1.0 and accuracy <= baseline + 0.05
        failed |= not ok
        print(f"  {endpoint:<8} {len(gold):>5} {len(ordinary):>8}  {_p(gold, 50):>7.1f} /{_p(gold, 90):>6.1f}  "
              f"{_p(ordinary, 50):>11.1f} /{_p(ordinary, 90):>6.1f}  {delta:>+8.2f}  {accuracy:>9.1%}  "
              f"{baseline:>14.1%}  {'ok' if ok else 'TELLS'}")
    return failed


def _p(values, q):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q / 100 * (len(ordered) - 1))))]


def _drop_jobs():
    """Drop the gold scoring jobs this run published (no worker consumes the bench's broker)."""
    from annotator.celery import app

    try:
        app.control.purge()
    except Exception as exc:  # the filesystem broker's folder goes with the temporary directory
        print(f"(queued jobs not purged: {exc})")


if __name__ == "__main__":
    raise SystemExit(main())
