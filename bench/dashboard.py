"""The lead dashboard at scale: a million step ratings, cold compute and cached page loads.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/stepmark_bench DJANGO_DEBUG=1 \\
        .venv/bin/python -m bench.dashboard [--solutions 44000] [--annotators 200] [--reuse]

Fills a project in SQL (INSERT ... SELECT generate_series, seeded ``random()``): phase-2
solutions of 6 to 15 steps in four generations, each rated by ``overlap`` 3 of 200
annotators over 30 days of working hours; a solution's true first error (60% have one) is
found exactly by most passes, a step early or late by some, missed by others; a few
annotators rate everything +1 and stop at nothing; 20 gold items rated by 100 annotators
each. About a million ratings with the defaults.

Then prints: the time to compute the whole dashboard cold (``build_dashboard``, goal < 3 s),
its parts, and page loads of ``GET /api/projects/{id}/dashboard/`` through Django's test
Client served from the cache (goal < 200 ms), with the cache backend in use and the load
average (the machine may be shared). ``--reuse`` keeps the filled data of an earlier run.

The benchmark owns its database: a name not ending in ``bench`` gets ``_bench`` appended.
"""
import argparse
import os
import statistics
import sys
import time

from bench._database import migrate
from bench.import_export import _prepare_database, _use_bench_database

PROJECT = "bench dashboard"
GOALS = {"cold": 3.0, "cached": 0.2}

FILL_SQL = """
SELECT setseed(0.42);
INSERT INTO labeling_generation (project_id, number, created_at)
    SELECT %(project)s, g, now() FROM generate_series(0, 3) g;
INSERT INTO labeling_problem (project_id, problem, ground_truth_answer, subject, source_id, content_hash, created_at)
    SELECT %(project)s, 'Find $x$ if $' || g || 'x = ' || 2 * g || '$.', '2', 'Algebra', '', md5('p' || g), now()
    FROM generate_series(1, 1000) g;
CREATE TEMP TABLE sol_truth AS
    SELECT g AS n, 6 + (g * 7919) %% 10 AS steps,
           CASE WHEN random() < 0.6 THEN floor(random() * (6 + (g * 7919) %% 10))::int END AS error_at,
           g <= 20 AS gold
    FROM generate_series(1, %(solutions)s) g;
INSERT INTO labeling_solution (project_id, problem_id, generator, final_answer, is_correct, has_pre_generated,
        generation_id, selection_rank, is_gold, is_screening, num_steps, content_hash, created_at, live_assignments)
    SELECT %(project)s, (SELECT min(id) FROM labeling_problem WHERE project_id = %(project)s) + t.n %% 1000,
           'bench', '2', t.error_at IS NULL, true,
           CASE WHEN t.gold THEN NULL ELSE
               (SELECT id FROM labeling_generation WHERE project_id = %(project)s AND number = t.n %% 4) END,
           CASE WHEN t.gold THEN NULL ELSE t.n END, t.gold, false, t.steps, md5('s' || t.n), now(),
           CASE WHEN t.gold THEN 100 ELSE %(overlap)s END
    FROM sol_truth t;
CREATE TEMP TABLE sol AS
    SELECT s.id, t.* FROM labeling_solution s JOIN sol_truth t ON md5('s' || t.n) = s.content_hash
    WHERE s.project_id = %(project)s;
INSERT INTO labeling_step (solution_id, position, alternative, text, source)
    SELECT s.id, p, 0, 'Step ' || p || ': so $x = ' || p || '$.', 'model'
    FROM sol s, generate_series(0, s.steps - 1) p;
CREATE TEMP TABLE ann AS
    SELECT row_number() OVER (ORDER BY id) - 1 AS k, id,
           0.55 + 0.4 * random() AS skill, row_number() OVER (ORDER BY id) <= 4 AS lazy
    FROM labeling_annotator ORDER BY id;
CREATE TEMP TABLE pass AS
    SELECT s.id AS solution_id, s.n, s.steps, s.error_at, s.gold, a.id AS annotator_id, a.skill, a.lazy,
           now() - (s.n %% 30) * interval '1 day' - interval '8 hours' + random() * interval '9 hours' AS submitted_at,
           (20 + random() * 280)::int * 1000 AS total_time,
           (s.n %% 4) AS generation, random() AS luck
    FROM sol s
    JOIN generate_series(0, %(overlap)s - 1) AS j(c) ON NOT s.gold
    JOIN ann a ON a.k = (s.n * 7 + j.c * 67) %% %(annotators)s
    UNION ALL
    SELECT s.id, s.n, s.steps, s.error_at, s.gold, a.id, a.skill, a.lazy,
           now() - (a.k %% 30) * interval '1 day' - interval '8 hours' + random() * interval '9 hours',
           (20 + random() * 280)::int * 1000, NULL, random()
    FROM sol s JOIN ann a ON s.gold AND a.k %% 2 = s.n %% 2;
ALTER TABLE pass ADD COLUMN seen int;
-- Where this pass puts the first error: exact with the annotator's skill, else a step off or missed.
UPDATE pass SET seen = CASE
    WHEN lazy OR error_at IS NULL THEN NULL
    WHEN luck < skill THEN error_at
    WHEN luck < skill + (1 - skill) / 2 THEN least(steps - 1, greatest(0, error_at + CASE WHEN luck > 0.5 THEN 1 ELSE -1 END))
    ELSE NULL END;
INSERT INTO labeling_assignment (project_id, solution_id, annotator_id, state, created_at, last_activity_at,
        handed_out_at, submitted_at, total_time, finish_reason, finish_note, generation,
        is_quality_control, is_screening)
    SELECT %(project)s, solution_id, annotator_id, 'submitted', submitted_at, submitted_at,
           submitted_at - total_time * interval '1 millisecond', submitted_at, total_time,
           CASE WHEN seen IS NULL THEN 'solution' ELSE 'found_error' END, '', generation, gold, false
    FROM pass;
INSERT INTO labeling_rating (assignment_id, step_id, value, flagged, chosen, rated_at)
    SELECT a.id, st.id,
           CASE WHEN st.position = p.seen THEN -1
                WHEN p.lazy THEN 1
                WHEN random() < 0.1 THEN 0 ELSE 1 END,
           NULL, true, a.submitted_at
    FROM pass p
    JOIN labeling_assignment a ON a.solution_id = p.solution_id AND a.annotator_id = p.annotator_id
    JOIN labeling_step st ON st.solution_id = p.solution_id AND st.alternative = 0
         AND st.position <= coalesce(p.seen, p.steps - 1);
INSERT INTO labeling_goldrating (step_id, value, approved_at)
    SELECT st.id, CASE WHEN st.position = s.error_at THEN -1 ELSE 1 END, now()
    FROM sol s JOIN labeling_step st ON st.solution_id = s.id
    WHERE s.gold AND st.position <= coalesce(s.error_at, s.steps - 1);
UPDATE labeling_annotator SET status = 'paused', status_reason = 'gold score below threshold'
    WHERE id IN (SELECT id FROM ann WHERE lazy);
"""


def fill(solutions, annotators, overlap=3):
    from django.contrib.auth import get_user_model
    from django.db import connection, transaction

    from labeling.models import Annotator, Project

    User = get_user_model()
    User.objects.filter(username__startswith="bench-").delete()
    users = User.objects.bulk_create(
        [User(username=f"bench-annotator-{k:03d}", password="!") for k in range(annotators)]
    )
    Annotator.objects.bulk_create([Annotator(user=u) for u in users])
    project = Project.objects.create(name=PROJECT, overlap=overlap, quality_control_rate=0.02)
    with transaction.atomic(), connection.cursor() as cursor:
        params = {"project": project.pk, "solutions": solutions, "overlap": overlap, "annotators": annotators}
        for statement in FILL_SQL.split(";\n"):
            if statement.strip():
                cursor.execute(statement, params)
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")
    return project


def _timed(function, *args, **kwargs):
    start = time.perf_counter()
    result = function(*args, **kwargs)
    return result, time.perf_counter() - start


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m bench.dashboard", description=__doc__.split("\n\n")[0])
    parser.add_argument("--solutions", type=int, default=44_000)
    parser.add_argument("--annotators", type=int, default=200)
    parser.add_argument("--reuse", action="store_true", help="keep the data of an earlier run")
    parser.add_argument("--loads", type=int, default=20, help="cached page loads to time")
    args = parser.parse_args(argv)
    _use_bench_database()
    if args.reuse:
        migrate()  # others' new columns, keeping the data
    else:
        _prepare_database()
    from django.conf import settings
    from django.contrib.auth import get_user_model
    from django.test import Client

    from labeling.access.roles import grant_role
    from labeling.models import Project, Rating
    from labeling.stats import cache as stats_cache
    from labeling.stats import dashboard, throughput

    project = Project.objects.filter(name=PROJECT).first()
    if project is None:
        project, seconds = _timed(fill, args.solutions, args.annotators)
        print(f"filled in {seconds:.1f}s", flush=True)
    ratings = Rating.objects.filter(assignment__project=project).count()
    print(f"project {project.pk}: {ratings:,} step ratings, {args.annotators} annotators, overlap {project.overlap}")
    load_before = os.getloadavg()
    from bench.import_export import _server_cpu

    db_cpu = _server_cpu()

    def part(name, function, *args, **kwargs):
        wall, cpu, db = time.perf_counter(), time.process_time(), db_cpu()
        result = function(*args, **kwargs)
        parts.append((name, time.perf_counter() - wall, time.process_time() - cpu, db_cpu() - db))
        return result

    parts = []
    columns = part("load ratings", dashboard.load_columns, project)
    table = part("rating table", dashboard.table_of, columns)
    part("alpha, over time, per generation, CIs", dashboard.agreement_figures, columns, table, bucket="day",
         replicates=200)
    part("kappa matrix", dashboard.kappa_matrix, table)
    work = part("annotator throughput SQL", throughput.annotator_throughput, project)
    part("project throughput SQL", throughput.project_throughput, project)
    gold = part("rolling gold scores SQL", dashboard.gold_scores, project)
    part("annotator rows (per_annotator)", dashboard.annotator_rows, project, table, work, gold)
    cold = []
    for _ in range(3):
        wall, cpu = time.perf_counter(), time.process_time()
        dashboard.build_dashboard(project)
        cold.append((time.perf_counter() - wall, time.process_time() - cpu))

    lead = get_user_model().objects.filter(username="bench-lead").first()
    if lead is None:
        lead = get_user_model().objects.create_user("bench-lead", password=None)
        grant_role(lead, "lead", project)
    client = Client()
    client.force_login(lead)
    url = f"/api/projects/{project.pk}/dashboard/"
    stats_cache.bump(project)
    first = _timed(client.get, url)
    cached = []
    for _ in range(args.loads):
        response, seconds = _timed(client.get, url)
        assert response.status_code == 200, response.status_code
        cached.append(seconds)
    size = len(response.content)
    load_after = os.getloadavg()

    print(f"\ncache backend: {settings.CACHES['stats']['BACKEND']}")
    print(f"load average before: {load_before[0]:.2f}, after: {load_after[0]:.2f} ({os.cpu_count()} CPUs)")
    print(f"\n{'part (one after another)':<40} {'wall s':>7} {'CPU s':>7} {'DB CPU s':>9}")
    for name, wall, cpu, db in parts:
        print(f"{name:<40} {wall:>7.3f} {cpu:>7.3f} {db:>9.3f}")
    print(f"\n{'measure':<40} {'median s':>9} {'max s':>7}  goal")
    walls = [w for w, _ in cold]
    print(f"{'dashboard cold (build_dashboard) x3':<40} {statistics.median(walls):>9.3f} {max(walls):>7.3f}  "
          f"< {GOALS['cold']} s  (Python CPU {statistics.median(c for _, c in cold):.2f} s)")
    print(f"{'first API load after a submit (miss)':<40} {first[1]:>9.3f} {first[1]:>7.3f}")
    print(f"{f'API load from cache x{args.loads}':<40} {statistics.median(cached):>9.3f} {max(cached):>7.3f}  "
          f"< {GOALS['cached']} s  ({size / 1e3:,.0f} kB JSON)")
    print("CPU s: this Python process; DB CPU s: its PostgreSQL connection (build_dashboard runs the\n"
          "aggregates on a second connection beside the numpy work). On a shared machine wall time\n"
          "also counts waiting for a CPU: see the load average.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
