"""The annotator loop over HTTP under load: next, submit, again, by many people at once.

    DJANGO_DEBUG=1 .venv/bin/python -m bench.annotator_loop [--concurrency 32] [--duration 30]
        [--warmup 5] [--servers conf,6,2x8] [--proxy nginx|none] [--sqlite] [--think 2]
        [--profile 200 [--servers '']]

Sets up a project (overlap 3, phase-2 rules) of about 5,000 candidate solutions from real
data (GSM8K's example model solutions, four per problem), ``--concurrency`` annotators with
API tokens and, on PostgreSQL, a second project of the same solutions that they labelled
before (every solution submitted ``overlap`` times: tables the size of a deployment's, not
empty ones; see ``_seed_history``), and serves it with gunicorn (``annotator.wsgi``, DEBUG off; ``conf`` in
``--servers``, the default, is one run with gunicorn.conf.py's shape as production runs it,
each ``WxT`` one with W gthread workers of T threads, a plain ``W`` one with W sync workers,
which take a connection per request), behind nginx with deploy/nginx.conf as
docker-compose.yml runs it (``--proxy none``: the clients talk to gunicorn). Then as many client threads
as annotators, each on its own keep-alive connection, loop: ``POST /api/projects/{id}/next/``,
then ``POST /api/assignments/{id}/submit/`` with the ratings in the body (mostly every step
+1 and ``solution``; otherwise steps in order up to a -1 and ``found_error``). After a warm-up
the loops finishing within ``--duration`` seconds are counted. By default the clients loop back
to back, which measures the server's capacity (and at 32 clients the latency follows from it:
32 clients over the requests per second); ``--think`` pauses each after a loop, as people
reading and rating would, which measures the latency a team sees at a pace it keeps.

Prints loops/s, latency percentiles per endpoint, responses by status, the CPU one loop costs
(gunicorn workers, database backends and the load generator, read from /proc: on a shared
machine this is the figure that does not depend on the neighbours; CPUs divided by it is the
throughput the machine could give this loop alone), and an integrity check read from the
database once the server has stopped: every acknowledged submit is stored with
exactly the ratings it carried and nothing else is submitted; no solution holds more than
``overlap`` live assignments; nobody was handed the same solution twice.

``--sqlite`` runs the same against the embedded default (a temporary SQLite file); with
``--proxy none`` and the ``--servers``/``--keep-alive``/``--worker-connections`` that
annotator/demo.py passes, it is ``make demo``'s server. It also prints the longest single
wait of any annotator: a fair server keeps it within a few seconds.
``--profile N`` then runs N loops in this process, one at a time, and prints where a
request's time goes: SQL per calling function, and the Python functions that cost most.

``--fresh`` measures a new deployment instead: the database dropped and created, the project
imported and nothing else (no history beside it, no ANALYZE or VACUUM by the bench), so the
planner has only what the import left it (imports analyse what they wrote: labeling/analyze.py).

The benchmark owns its database: a PostgreSQL name not ending in ``loadbench`` gets
``_loadbench`` appended (default ``stepmark_loadbench``); it is created if missing and
migrated, and only the benchmark's project is reset between runs.

What it measured, run by run, and the decisions that rest on it: docs/performance.md.
"""
import argparse
import collections
import contextlib
import cProfile
import http.client
import json
import os
import pstats
import random
import resource
import runpy
import statistics
import sys
import tempfile
import threading
import time
import urllib.parse
import uuid
from pathlib import Path

from bench._database import bench_database_url, create_database, drop_database, migrate, use_database
from bench._server import children, cpu_seconds, gunicorn, nginx
from labeling.data import data_path

ROOT = Path(__file__).resolve().parent.parent
PROJECT = "bench annotator loop"
HISTORY = "bench annotator loop: history"
OVERLAP = 3
GOALS = "goals (PostgreSQL, C=32, 2 shared cores): >= 100 loops/s, p95 < 150 ms, 0 integrity violations"


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m bench.annotator_loop", description=__doc__.split("\n\n")[0])
    parser.add_argument("--concurrency", type=int, default=32, help="annotators looping at once (default 32)")
    parser.add_argument("--duration", type=float, default=30, help="measured seconds (default 30)")
    parser.add_argument("--warmup", type=float, default=5, help="seconds before measuring (default 5)")
    parser.add_argument("--servers", default="conf",
                        help="comma-separated server shapes: 'conf' (gunicorn.conf.py as production runs it: "
                             "sync workers, 2 per CPU + 2), W (W sync workers) or WxT (W gthread workers of T "
                             "threads); default conf")
    parser.add_argument("--sqlite", action="store_true", help="the embedded SQLite default instead of PostgreSQL")
    parser.add_argument("--keep-alive", type=int, default=2, metavar="SECONDS",
                        help="gunicorn's keep-alive for gthread workers; 0 closes every connection after its "
                             "response, as behind a proxy that does not keep upstream connections (default 2)")
    parser.add_argument("--worker-connections", type=int, default=None, metavar="N",
                        help="connections a gthread worker holds at most (default: gunicorn.conf.py's, 2 per "
                             "thread; more than the annotators, say 64, shows the server without the cap)")
    parser.add_argument("--proxy", choices=("nginx", "none"), default="nginx",
                        help="nginx with deploy/nginx.conf in front of gunicorn, as docker-compose.yml runs it "
                             "(the clients keep their connections to it), or none: clients talk to gunicorn "
                             "(default nginx)")
    parser.add_argument("--think", type=float, default=0, metavar="SECONDS",
                        help="each annotator pauses a random 0..2x SECONDS after a loop, as a person reading and "
                             "rating would (default 0: back to back, the server's capacity); the latency a team "
                             "sees at a pace it could keep")
    parser.add_argument("--profile", type=int, default=0, metavar="N", help="then profile N loops in-process")
    parser.add_argument("--profile-out", metavar="FILE", help="write the cProfile stats there too (pstats, snakeviz)")
    parser.add_argument("--fresh", action="store_true",
                        help="a new deployment: the database dropped and created, the project imported and nothing "
                             "else (no labelled history beside it, no ANALYZE or VACUUM by the bench): what the "
                             "planner has is what the import left (PostgreSQL)")
    args = parser.parse_args(argv)
    # --servers '' with --profile: only the in-process profile.
    servers = [_server_shape(spec) for spec in args.servers.split(",") if spec]

    workdir = tempfile.mkdtemp(prefix="stepmark-loadbench-")
    database_url = _configure(args.sqlite, workdir, fresh=args.fresh)
    start = time.monotonic()
    project_id, tokens = _prepare(args.concurrency, fresh=args.fresh)
    print(f"database: {_redacted(database_url)}; set up in {time.monotonic() - start:.1f}s", flush=True)

    results = []
    for workers, threads in servers:
        _reset(project_id, vacuum=not args.fresh)
        load_before = os.getloadavg()[0]
        with gunicorn(database_url, workers=workers, threads=threads, ready_path="/api/me/",
                      extra_args=["--keep-alive", str(args.keep_alive),
                                  *(["--worker-connections", str(args.worker_connections)]
                                    if args.worker_connections else [])],
                      headers={"Authorization": f"Token {tokens[0][0]}"}) as (port, pid), \
                (nginx(port) if args.proxy == "nginx" else contextlib.nullcontext((port, None))) as (front, proxy):
            before = _cpu_snapshot(pid, proxy)
            run = _drive(front, project_id, tokens, args.warmup, args.duration, args.think)
            run["cpu"] = _cpu_used(before, _cpu_snapshot(pid, proxy))
        per_thread = runpy.run_path(str(ROOT / "gunicorn.conf.py"))["CONNECTIONS_PER_THREAD"]
        connections = args.worker_connections or per_thread * threads
        shape = _shape_name(workers, threads) + (f" ({connections} connections a worker), keep-alive "
                                                 f"{args.keep_alive} s" if threads else "")
        shape += " behind nginx" if args.proxy == "nginx" else ""
        run.update(server=shape, load=(load_before, os.getloadavg()[0]))
        run["integrity"] = _integrity(project_id, run)
        results.append(run)
        _report(run, args)
    if len(results) > 1:
        _summary(results)
    if args.profile:
        _reset(project_id)
        _profile(project_id, tokens, args.profile, args.profile_out)
    if args.sqlite:
        for name in os.listdir(workdir):
            os.unlink(os.path.join(workdir, name))
    os.rmdir(workdir)
    return 1 if any(sum(r["integrity"].values()) for r in results) else 0


def _server_shape(spec):
    """``WxT`` (gthread: W workers of T threads) or ``W`` (W sync workers) as (W, T or 0); ``conf``: the file's."""
    if spec.strip() == "conf":
        conf = runpy.run_path(str(ROOT / "gunicorn.conf.py"))
        return conf["workers"], 0 if conf["worker_class"] == "sync" else conf.get("threads", 1)
    workers, _, threads = spec.lower().partition("x")
    return int(workers), int(threads or 0)


def _shape_name(workers, threads):
    return f"{workers}x{threads} gthread" if threads else f"{workers} sync"


# --- the database and the project --------------------------------------------------------


def _configure(sqlite, workdir, fresh=False):
    if sqlite:
        url = f"sqlite:///{workdir}/loadbench.sqlite3"
    else:
        url = bench_database_url("postgres://postgres@127.0.0.1:5432/stepmark_loadbench", "loadbench",
                                 "without --sqlite this benchmark needs PostgreSQL: set DATABASE_URL or leave it unset")
        if fresh:
            drop_database(url)
        create_database(url)
    use_database(url)
    migrate()
    return url


def _redacted(url):
    parts = urllib.parse.urlsplit(url)
    return urllib.parse.urlunsplit(parts._replace(netloc=parts.hostname or "")) if parts.password else url


def _prepare(concurrency, fresh=False):
    """The project (imported once) and ``concurrency`` annotators: [(token key, annotator id)]."""
    from django.contrib.auth import get_user_model
    from django.db import connection

    from labeling.access.roles import ANNOTATOR, grant_role
    from labeling.access.tokens import issue
    from labeling.imports import run_import
    from labeling.models import Project

    project, created = Project.objects.get_or_create(
        name=PROJECT, defaults={"overlap": OVERLAP, "instructions": "Rate each step **in order**."}
    )
    if created or not project.solutions.exists():
        result = run_import("gsm8k-examples", data_path("gsm8k/example_model_solutions.jsonl.gz"), project)
        print(f"imported {result.details['solutions']:,} solutions of {result.details['problems']:,} problems", flush=True)
        if connection.vendor == "postgresql" and not fresh:
            with connection.cursor() as cursor:
                cursor.execute("ANALYZE")
    User = get_user_model()
    tokens = []
    for i in range(concurrency):
        # No password: nobody logs in, and hashing 32 passwords would dominate the set-up.
        user, _ = User.objects.get_or_create(username=f"loadbench-{i:03d}")
        annotator = grant_role(user, ANNOTATOR, project)
        # A new token each run: only a key's hash is stored, so an old one cannot be read back.
        key, _ = issue(user, "bench.annotator_loop")
        tokens.append((key, annotator.pk))
    if not fresh:
        _seed_history([pk for key, pk in tokens])
    return project.pk, tokens


def _seed_history(annotators):
    """A second project of the same solutions, labelled before: what a deployment's tables hold.

    On empty tables PostgreSQL plans sequential scans, and a connection keeps the plans of
    its prepared statements, of the queue's functions and of its foreign-key checks: each
    of those would scan the whole table on every call as it grows during the run
    (autovacuum's re-analysis makes a server replan; this machine runs without it). So the
    loop runs beside a full pass of ``OVERLAP`` submitted assignments per solution, every
    step rated, by the same annotators, written once in SQL and kept between runs.
    """
    from django.db import connection, transaction

    from labeling.imports import run_import
    from labeling.models import Project

    if connection.vendor != "postgresql":
        return  # SQLite plans every statement anew
    history, created = Project.objects.get_or_create(name=HISTORY, defaults={"overlap": OVERLAP})
    if not created and history.assignments.exists():
        return
    if not history.solutions.exists():
        run_import("gsm8k-examples", data_path("gsm8k/example_model_solutions.jsonl.gz"), history)
    people = len(annotators)
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(
            """INSERT INTO labeling_assignment (project_id, solution_id, annotator_id, state, created_at,
                   handed_out_at, last_activity_at, lease_expires_at, submitted_at, total_time, finish_reason,
                   finish_note, is_quality_control, is_screening)
               SELECT s.project_id, s.id, (%s::bigint[])[1 + (s.id + k) %% %s], 'submitted', at, at, at,
                      at + interval '1 hour', at + interval '1 minute', 60000, 'solution', '', false, false
                 FROM labeling_solution s CROSS JOIN generate_series(0, %s - 1) k
                 CROSS JOIN LATERAL (SELECT now() - interval '30 days' + s.id * interval '1 second' AS at) t
                WHERE s.project_id = %s""",
            [annotators, people, min(OVERLAP, people), history.pk],
        )
        cursor.execute(
            """INSERT INTO labeling_rating (assignment_id, step_id, value, flagged, chosen, rated_at)
               SELECT a.id, st.id, 1, false, true, a.submitted_at
                 FROM labeling_assignment a JOIN labeling_step st ON st.solution_id = a.solution_id
                WHERE a.project_id = %s AND st.alternative = 0 AND st.author_id IS NULL""",
            [history.pk],
        )
        cursor.execute("UPDATE labeling_solution SET live_assignments = %s, is_full = %s WHERE project_id = %s",
                       [min(OVERLAP, people), people >= OVERLAP, history.pk])
    print(f"history: {history.assignments.count():,} submitted assignments in {HISTORY!r}", flush=True)


def _reset(project_id, vacuum=True):
    """Forget every assignment of the benchmark's project, so each run starts on a fresh queue."""
    from django.db import connection, transaction

    with transaction.atomic(), connection.cursor() as cursor:
        work = "SELECT id FROM labeling_assignment WHERE project_id = %s"
        cursor.execute(f"DELETE FROM labeling_rating WHERE assignment_id IN ({work})", [project_id])
        cursor.execute(f"DELETE FROM labeling_step WHERE author_id IN ({work})", [project_id])
        cursor.execute("DELETE FROM labeling_assignment WHERE project_id = %s", [project_id])
        cursor.execute("UPDATE labeling_solution SET live_assignments = 0, is_full = false WHERE project_id = %s",
                       [project_id])
    if connection.vendor == "postgresql" and vacuum:
        # Every run starts from the same tables: no dead rows of the last run, fresh statistics.
        with connection.cursor() as cursor:
            cursor.execute("VACUUM ANALYZE labeling_assignment, labeling_rating, labeling_solution, labeling_step")
    connection.close()  # the server must not wait behind this process's connection


# --- the load ---------------------------------------------------------------------------


def plan_ratings(assignment, rng):
    """``(finish_reason, ratings)`` a careful annotator would submit for the ``assignment`` payload."""
    main = [s["position"] for s in assignment["steps"] if any(a["alternative"] == 0 for a in s["alternatives"])]
    if rng.random() < 0.6:
        return "solution", [{"position": p, "alternative": 0, "value": rng.choice((1, 1, 1, 0))} for p in main]
    error = rng.randrange(len(main))
    ratings = [{"position": p, "alternative": 0, "value": rng.choice((1, 1, 1, 0))} for p in main[:error]]
    ratings.append({"position": main[error], "alternative": 0, "value": -1})
    at_error = next(s for s in assignment["steps"] if s["position"] == main[error])
    for alt in at_error["alternatives"]:  # found_error needs every alternative at the error rated
        if alt["alternative"] > 0:
            ratings.append({"position": main[error], "alternative": alt["alternative"], "value": rng.choice((1, 0, -1))})
    return "found_error", ratings


class Client:
    """One annotator on one keep-alive connection; records every request it makes."""

    def __init__(self, port, token, seed):
        self.conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
        self.headers = {"Authorization": f"Token {token}", "Content-Type": "application/json"}
        self.rng = random.Random(seed)
        self.requests = []  # (endpoint, finished at, seconds, status)
        self.loops = []  # finished at
        self.acked = {}  # assignment id -> {(position, alternative): value} of a 200 submit
        self.unanswered = set()  # assignment ids whose submit got no answer
        self.resumed = 0  # next answered 200: an earlier submit did not go through

    def call(self, endpoint, path, body=None):
        started = time.monotonic()
        try:
            self.conn.request("POST", path, body=body, headers=self.headers)
            response = self.conn.getresponse()
            data, status = response.read(), response.status
        except (OSError, http.client.HTTPException) as exc:
            self.conn.close()
            data, status = b"", type(exc).__name__
        finished = time.monotonic()
        self.requests.append((endpoint, finished, finished - started, status))
        return status, data

    def run(self, project_id, stop_at, think=0.0):
        while time.monotonic() < stop_at:
            status, data = self.call("next", f"/api/projects/{project_id}/next/")
            if status == 204:
                return  # nothing left for this annotator
            if status not in (200, 201):
                time.sleep(0.05)
                continue
            self.resumed += status == 200
            assignment = json.loads(data)
            reason, ratings = plan_ratings(assignment, self.rng)
            body = {"finish_reason": reason, "note": "", "submit_key": uuid.uuid4().hex,
                    "client_elapsed_ms": self.rng.randint(5_000, 60_000), "ratings": ratings}
            status, _ = self.call("submit", f"/api/assignments/{assignment['id']}/submit/", json.dumps(body))
            if status == 200:
                self.acked[assignment["id"]] = {(r["position"], r["alternative"]): r["value"] for r in ratings}
                self.loops.append(time.monotonic())
            elif not isinstance(status, int):
                self.unanswered.add(assignment["id"])
            if think:
                time.sleep(self.rng.uniform(0, 2 * think))  # reading and rating the next one takes a while


def _drive(port, project_id, tokens, warmup, duration, think=0.0):
    began = time.monotonic()
    measure_from, stop_at = began + warmup, began + warmup + duration
    clients = [Client(port, token, seed=i) for i, (token, _) in enumerate(tokens)]
    threads = [threading.Thread(target=c.run, args=(project_id, stop_at, think), daemon=True) for c in clients]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    ended = time.monotonic()
    window = lambda at: measure_from <= at <= stop_at  # noqa: E731
    latencies = collections.defaultdict(list)
    statuses = collections.Counter()
    for c in clients:
        for endpoint, at, seconds, status in c.requests:
            statuses[(endpoint, status)] += 1
            if window(at):
                latencies[endpoint].append(seconds)
    acked = {k: v for c in clients for k, v in c.acked.items()}
    return {
        "loops": sum(1 for c in clients for at in c.loops if window(at)),
        "seconds": duration,
        "tail": ended - stop_at,
        "latencies": latencies,
        "statuses": statuses,
        "acked": acked,
        "unanswered": set().union(*(c.unanswered for c in clients)),
        "resumed": sum(c.resumed for c in clients),
        "out_of_work": sum(1 for c in clients if c.requests and c.requests[-1][3] == 204),
        # Each annotator's median request in the window: a wide spread means the server treats
        # connections unequally (a gthread worker keeps its keep-alive connections, so a worker
        # holding more of them serves each one more slowly), not that requests vary.
        "longest_wait": _longest_wait(clients, began, stop_at),
        "client_medians": sorted(
            statistics.median(seconds for _, at, seconds, _ in c.requests if window(at))
            for c in clients if any(window(at) for _, at, _, _ in c.requests)
        ),
    }


def _longest_wait(clients, began, stop_at):
    """The longest single wait of any annotator, whole run (warm-up included), and what it was.

    Per client: each request's latency, the gap between two of its completed loops, and the
    time from the start to its first answered request (a client left in the listen queue
    waits there without a latency of its own to show). A client that got no answer at all
    waited the whole run. Returns ``(seconds, "what, which client")``; a fair server keeps
    this within a few seconds, a server that favours some connections does not.
    """
    worst = (0.0, "nothing")
    for i, c in enumerate(clients):
        answered = [(at, seconds) for _, at, seconds, status in c.requests if isinstance(status, int)]
        waits = [(answered[0][0] - began if answered else stop_at - began, "until the first answer")]
        waits += [(seconds, "one request") for _, _, seconds, _ in c.requests]
        waits += [(b - a, "between two loops") for a, b in zip(c.loops, c.loops[1:])]
        seconds, what = max(waits)
        if seconds > worst[0]:
            worst = (seconds, f"{what}, annotator {i}")
    return worst


def _cpu_snapshot(server_pid, proxy_pid=None):
    """CPU seconds so far of the server's processes, the proxy's, the database's backends and this process."""
    from django.db import connection

    backends = []
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()"
            )
            backends = [pid for (pid,) in cursor.fetchall()]
        connection.close()
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return {
        "server": {pid: cpu_seconds(pid) for pid in [server_pid, *children(server_pid)]},
        "proxy": {pid: cpu_seconds(pid) for pid in ([proxy_pid, *children(proxy_pid)] if proxy_pid else [])},
        "database": {pid: cpu_seconds(pid) for pid in backends},
        "client": usage.ru_utime + usage.ru_stime,
    }


def _cpu_used(before, after):
    # Processes started during the run (database backends of new connections) count from 0.
    used = {part: sum(s - before[part].get(pid, 0.0) for pid, s in after[part].items())
            for part in ("server", "proxy", "database")}
    used["client"] = after["client"] - before["client"]
    return used


# --- the integrity check -----------------------------------------------------------------


def _integrity(project_id, run):
    """Violations by kind, read from the database after the server stopped (all zero is right)."""
    from django.db import connection
    from django.db.models import Count

    from labeling.models import Assignment, Rating

    acked, unanswered = run["acked"], run["unanswered"]
    submitted = set(
        Assignment.objects.filter(project_id=project_id, state=Assignment.SUBMITTED).values_list("pk", flat=True)
    )
    stored = collections.defaultdict(dict)
    rows = Rating.objects.filter(assignment__project_id=project_id).values_list(
        "assignment_id", "step__position", "step__alternative", "value"
    )
    for assignment, position, alternative, value in rows:
        stored[assignment][(position, alternative)] = value
    live = Assignment.objects.filter(
        project_id=project_id, state__in=(Assignment.ACTIVE, Assignment.SUBMITTED), solution__is_gold=False,
        solution__is_screening=False,
    )
    over = live.values("solution").annotate(n=Count("pk")).filter(n__gt=OVERLAP).count()
    twice = (
        Assignment.objects.filter(project_id=project_id)
        .values("annotator", "solution").annotate(n=Count("pk")).filter(n__gt=1).count()
    )
    connection.close()
    return {
        "acknowledged submit not stored": len(set(acked) - submitted),
        "stored submit never acknowledged": len(submitted - set(acked) - unanswered),
        "stored ratings differ from the submit": sum(1 for a in set(acked) & submitted if stored[a] != acked[a]),
        f"solution with > {OVERLAP} live assignments": over,
        "annotator given a solution twice": twice,
    }


# --- printing ----------------------------------------------------------------------------


def _percentile(values, q):
    values = sorted(values)
    return values[min(len(values) - 1, int(q * len(values)))] * 1000 if values else float("nan")


def _report(run, args):
    print()
    paced = f" pausing 0-{2 * args.think:g} s between loops" if args.think else ""
    print(f"server gunicorn {run['server']}, {args.concurrency} clients{paced}, "
          f"{'SQLite' if args.sqlite else 'PostgreSQL'}; load average {run['load'][0]:.1f} before, "
          f"{run['load'][1]:.1f} after ({os.cpu_count()} CPUs, shared)")
    print(f"loops/s {run['loops'] / run['seconds']:.1f} ({run['loops']:,} next+submit loops in {run['seconds']:.0f} s "
          f"after {args.warmup:.0f} s warm-up; the last requests finished {run['tail']:.2f} s after the end)")
    print(f"{'endpoint':<8} {'requests':>9} {'req/s':>7} {'p50 ms':>8} {'p95 ms':>8} {'p99 ms':>8} {'max ms':>8}")
    for endpoint in ("next", "submit"):
        values = run["latencies"].get(endpoint, [])
        print(f"{endpoint:<8} {len(values):>9,} {len(values) / run['seconds']:>7.1f} {_percentile(values, .5):>8.1f} "
              f"{_percentile(values, .95):>8.1f} {_percentile(values, .99):>8.1f} {_percentile(values, 1):>8.1f}")
    by_status = ", ".join(f"{e} {s}: {n:,}" for (e, s), n in sorted(run["statuses"].items(), key=str))
    cpu, loops = run["cpu"], len(run["acked"]) or 1
    database = "in the gunicorn workers" if args.sqlite else f"{cpu['database'] / loops * 1000:.1f} ms"
    per_loop = sum(cpu.values()) / loops
    proxy = f"nginx {cpu['proxy'] / loops * 1000:.1f} ms, " if args.proxy == "nginx" else ""
    print(f"CPU per loop (whole run, {loops:,} loops): gunicorn {cpu['server'] / loops * 1000:.1f} ms, {proxy}"
          f"database backends {database}, load generator {cpu['client'] / loops * 1000:.1f} ms; "
          f"{sum(cpu.values()) / (run['seconds'] + args.warmup + run['tail']):.2f} CPUs busy on average")
    print(f"capacity with all {os.cpu_count()} CPUs to ourselves (CPUs / CPU per loop): "
          f"about {os.cpu_count() / per_loop:.0f} loops/s")
    print(f"responses (whole run, warm-up included): {by_status}")
    medians = run["client_medians"]
    if medians:
        print(f"median request per annotator: fastest {medians[0] * 1000:.1f} ms, "
              f"middle {medians[len(medians) // 2] * 1000:.1f} ms, slowest {medians[-1] * 1000:.1f} ms")
    longest, what = run["longest_wait"]
    print(f"longest single wait of any annotator (whole run{', pauses included' if args.think else ''}): "
          f"{longest:.2f} s ({what})")
    if run["resumed"] or run["out_of_work"] or run["unanswered"]:
        print(f"resumed assignments: {run['resumed']}, clients out of work: {run['out_of_work']}, "
              f"submits without an answer: {len(run['unanswered'])}")
    violations = run["integrity"]
    print(f"integrity: {len(run['acked']):,} acknowledged submits checked; "
          f"{sum(violations.values())} violations" + ("" if not sum(violations.values()) else ":"))
    for kind, n in violations.items():
        if n:
            print(f"  {kind}: {n}")
    print(GOALS)


def _summary(results):
    print("\nserver                            loops/s  next p95  submit p95  longest wait s  CPU ms/loop  violations  load avg")
    for r in results:
        p95 = [_percentile(r["latencies"].get(e, []), .95) for e in ("next", "submit")]
        per_loop = sum(r["cpu"].values()) / (len(r["acked"]) or 1) * 1000
        print(f"{r['server']:<33} {r['loops'] / r['seconds']:>7.1f} {p95[0]:>9.1f} {p95[1]:>11.1f} {r['longest_wait'][0]:>15.2f} {per_loop:>12.1f} "
              f"{sum(r['integrity'].values()):>11} {r['load'][1]:>9.1f}")


# --- where the time goes ----------------------------------------------------------------


def _profile(project_id, tokens, loops, out=None):
    """Run ``loops`` loops in-process, one at a time; print where a request's time goes.

    Odd loops run under cProfile, even ones without it (their figures are the clean ones).
    CPU is counted in this thread (Django, DRF, the driver) and in the database backend.
    """
    from django.conf import settings
    from django.db import connection
    from django.test import Client as DjangoClient

    settings.DEBUG = False  # as in production: no query log
    rng = random.Random(1)
    sql = collections.defaultdict(lambda: [0, 0.0])  # (endpoint, caller) -> [queries, seconds]
    clean = collections.defaultdict(lambda: [0, 0.0, 0.0, 0.0])  # endpoint -> [n, wall, own CPU, backend CPU]
    current = {"endpoint": None}

    def meter(execute, statement, params, many, context):
        started = time.perf_counter()
        try:
            return execute(statement, params, many, context)
        finally:
            entry = sql[(current["endpoint"], _caller())]
            entry[0] += 1
            entry[1] += time.perf_counter() - started

    profiler = cProfile.Profile(time.thread_time)  # CPU, not waits for the database
    clients = [DjangoClient(HTTP_AUTHORIZATION=f"Token {token}") for token, _ in tokens]

    def backend_cpu():  # SQLite runs in this thread: its CPU is in the thread's own figure
        if connection.vendor != "postgresql" or connection.connection is None:
            return 0.0
        return cpu_seconds(connection.connection.info.backend_pid)

    def call(endpoint, profiled, client, path, body=None):
        backend = backend_cpu()
        current["endpoint"] = endpoint if not profiled else None
        wall, cpu = time.perf_counter(), time.thread_time()
        if profiled:
            profiler.enable()
        response = client.post(path, body, content_type="application/json")
        if profiled:
            profiler.disable()
            return response
        n = clean[endpoint]
        n[0] += 1
        n[1] += time.perf_counter() - wall
        n[2] += time.thread_time() - cpu
        n[3] += backend_cpu() - backend
        return response

    def loop(i, profiled):
        client = clients[i % len(clients)]
        assignment = call("next", profiled, client, f"/api/projects/{project_id}/next/").json()
        reason, ratings = plan_ratings(assignment, rng)
        body = {"finish_reason": reason, "note": "", "submit_key": uuid.uuid4().hex, "ratings": ratings}
        response = call("submit", profiled, client, f"/api/assignments/{assignment['id']}/submit/", body)
        assert response.status_code == 200, response.content

    for i in range(len(clients)):  # warm up: middleware, URL resolver, connections, caches
        loop(i, profiled=False)
    clean.clear()
    with connection.execute_wrapper(meter):
        for i in range(2 * loops):
            loop(i, profiled=i % 2 == 1)
    print(f"\nprofile: {loops} loops in-process, one request at a time, Django and DRF as served "
          f"(+ {loops} more under cProfile); load average {os.getloadavg()[0]:.1f}")
    print("(wall time includes waiting for a CPU on a contended machine; the CPU figures do not;\n"
          " database backend CPU comes from /proc in 10 ms ticks, so only its average means something)")
    for endpoint in ("next", "submit"):
        n, wall, own, backend = clean[endpoint]
        rows = sorted(((k[1], *v) for k, v in sql.items() if k[0] == endpoint), key=lambda r: -r[2])
        queries = sum(r[1] for r in rows) / n
        in_sql = sum(r[2] for r in rows) / n * 1000
        print(f"\n{endpoint}: {wall / n * 1000:.1f} ms wall per request ({in_sql:.1f} ms of it in {queries:.1f} queries); "
              f"CPU {own / n * 1000:.1f} ms in Django/DRF/driver + {backend / n * 1000:.1f} ms in the database backend")
        print(f"  {'queries/req':>11} {'ms/req':>7}  caller (innermost labeling/auth frame)")
        for caller, count, seconds in rows:
            print(f"  {count / n:>11.1f} {seconds / n * 1000:>7.2f}  {caller}")
    print("\nPython functions by own CPU time (both endpoints, under cProfile):")
    if out:
        profiler.dump_stats(out)
    stats = pstats.Stats(profiler, stream=sys.stdout)
    stats.sort_stats("tottime").print_stats(20)
    print("cumulative, labelling code and serializers:")
    stats.sort_stats("cumulative").print_stats(
        r"labeling/|rest_framework/(serializers|fields|authentication|renderers|views)|markdown|nh3", 30
    )


def _caller():
    """``module.function`` of the innermost project (or auth) frame issuing a query."""
    frame = sys._getframe(2)
    while frame is not None:
        name = frame.f_code.co_filename
        if name.endswith("labeling/models/prepared.py"):  # the statement's runner: name its caller
            pass
        elif "/labeling/" in name or "rest_framework/authentication" in name or "django/contrib/auth/backends" in name:
            module = Path(name).stem if "/labeling/" not in name else name.split("/labeling/")[1][:-3].replace("/", ".")
            return f"{module}.{frame.f_code.co_name}"
        frame = frame.f_back
    return "other"


if __name__ == "__main__":
    sys.exit(main())
