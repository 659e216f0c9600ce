"""Throughput: how much people rate, how fast, and how long the current generation has left.

Every figure is aggregated in the database (GROUP BY and window functions) and only the
aggregated rows reach Python. The SQL is written to run on PostgreSQL and on SQLite (the
demo); the two vendors differ only in the date and epoch expressions in ``_VENDOR``.

Definitions (submitted passes with an annotator, ``since <= submitted_at < until``; days are
UTC calendar days of ``submitted_at``):

- ``passes``: solutions submitted. ``steps``: ratings with a value in those passes, every
  alternative counted (each one is a rating someone had to give).
- ``median_step_seconds``: the median over passes of ``total_time / steps``. ``total_time`` is
  the visible time the client measured (labeling/work/submission.py), so a tab left in the
  background does not count; gaps between ``Rating.rated_at`` stamps would not see that, and
  a draft saved in one request stamps many ratings at once.
- ``median_pass_seconds``: the median of ``total_time`` over passes.
- ``active_hours``: time in working sessions. A session is a run of one annotator's submits
  less than ``SESSION_GAP`` (10 minutes) apart; a pass submitted within the gap counts the
  time since the previous submit, a pass that opens a session counts its own ``total_time``.
  Clock hours with activity would count 09:55-10:05 as two hours; sessions do not.

Project figures: ``queue_depth`` per generation (ordinary solutions, not gold nor screening,
with fewer live assignments, active or submitted, than the project's overlap, and the slots
left), passes done today, and ``eta``: the current generation's remaining slots times the
median seconds per pass over the last ``PACE_WINDOW`` days, divided by the annotators who
submitted in the last 24 hours. That is working time if everyone active keeps working at the
median pace, not calendar time. A median under ``MIN_PACE_SECONDS`` gives no estimate: it
comes from passes whose time was not measured (imports record 0 s) or from rating without
reading, and it promised "65 slots ≈ 8 s left" (issue #30).
"""
from contextlib import contextmanager
from datetime import timedelta

from django.db import connection, transaction
from django.utils import timezone

from labeling.models import Assignment, Rating

SESSION_GAP = 600  # seconds between submits that still count as one working session
PACE_WINDOW = 7  # days of submits the ETA's pace is measured on
MIN_PACE_SECONDS = 5  # a median pass shorter than this is no pace to estimate from

_VENDOR = {
    "postgresql": {
        "day": "to_char(a.submitted_at AT TIME ZONE 'UTC', 'YYYY-MM-DD')",
        "epoch": "extract(epoch FROM a.submitted_at)",
    },
    "sqlite": {
        "day": "strftime('%%Y-%%m-%%d', a.submitted_at)",
        "epoch": "((julianday(a.submitted_at) - 2440587.5) * 86400.0)",
    },
}

# One row per pass; then each pass in two buckets (its day, and the whole window: NULL) so a
# single scan of the ratings gives both per-day and per-annotator figures; medians by
# row_number over each bucket, which both vendors run.
_PER_ANNOTATOR_SQL = """
WITH p AS (
    SELECT a.annotator_id AS ann, {day} AS day, {epoch} AS t, a.total_time / 1000.0 AS secs,
           count(r.id) AS steps
    FROM labeling_assignment a
    LEFT JOIN labeling_rating r ON r.assignment_id = a.id AND r.value IS NOT NULL
    WHERE a.project_id = %s AND a.state = 'submitted' AND a.annotator_id IS NOT NULL {window}
    GROUP BY a.id, a.annotator_id, a.submitted_at, a.total_time
),
s AS (
    SELECT ann, day, secs, steps,
           CASE WHEN steps > 0 THEN secs / steps END AS per_step,
           t - lag(t) OVER (PARTITION BY ann ORDER BY t) AS gap
    FROM p
),
b AS (
    SELECT ann, day AS bucket, secs, steps, per_step, gap FROM s
    UNION ALL
    SELECT ann, NULL AS bucket, secs, steps, per_step, gap FROM s
),
ranked AS (
    SELECT b.*,
           row_number() OVER (PARTITION BY ann, bucket ORDER BY per_step IS NULL, per_step) AS rs,
           count(per_step) OVER (PARTITION BY ann, bucket) AS ns,
           row_number() OVER (PARTITION BY ann, bucket ORDER BY secs IS NULL, secs) AS rp,
           count(secs) OVER (PARTITION BY ann, bucket) AS np
    FROM b
)
SELECT ann, bucket, count(*), sum(steps),
       avg(CASE WHEN rs IN ((ns + 1) / 2, (ns + 2) / 2) THEN per_step END),
       avg(CASE WHEN rp IN ((np + 1) / 2, (np + 2) / 2) THEN secs END),
       sum(CASE WHEN gap IS NOT NULL AND gap < {gap} THEN gap ELSE coalesce(secs, 0) END) / 3600.0
FROM ranked
GROUP BY ann, bucket
ORDER BY ann, bucket
"""

_QUEUE_SQL = """
SELECT g.number, count(*),
       sum(CASE WHEN coalesce(l.n, 0) < %s THEN 1 ELSE 0 END),
       sum(CASE WHEN coalesce(l.n, 0) < %s THEN %s - coalesce(l.n, 0) ELSE 0 END)
FROM labeling_solution s
LEFT JOIN labeling_generation g ON g.id = s.generation_id
LEFT JOIN (
    SELECT solution_id, count(*) AS n FROM labeling_assignment
    WHERE project_id = %s AND state IN ('active', 'submitted') GROUP BY solution_id
) l ON l.solution_id = s.id
WHERE s.project_id = %s AND NOT s.is_gold AND NOT s.is_screening
GROUP BY g.number
ORDER BY g.number
"""

_MEDIAN_SQL = """
SELECT avg(secs) FROM (
    SELECT a.total_time / 1000.0 AS secs,
           row_number() OVER (ORDER BY a.total_time) AS r, count(*) OVER () AS n
    FROM labeling_assignment a
    WHERE a.project_id = %s AND a.state = 'submitted' AND a.total_time IS NOT NULL
          AND a.submitted_at >= %s
) x WHERE r IN ((n + 1) / 2, (n + 2) / 2)
"""


def _project_id(project):
    return getattr(project, "pk", project)


def _window_sql(since, until):
    clauses, params = [], []
    if since is not None:
        clauses.append("AND a.submitted_at >= %s")
        params.append(since)
    if until is not None:
        clauses.append("AND a.submitted_at < %s")
        params.append(until)
    return " ".join(clauses), params


@contextmanager
def analytic_cursor():
    """A cursor for one large aggregate: on PostgreSQL with room to sort and hash in memory,
    and without JIT compilation (which costs more than it saves on these queries)."""
    with transaction.atomic(), connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            cursor.execute("SET LOCAL work_mem = '64MB'")
            cursor.execute("SET LOCAL jit = off")
        yield cursor


def _fetch(sql, params):
    with analytic_cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.fetchall()


def _number(x, digits=3):
    return None if x is None else round(float(x), digits)


def annotator_throughput(project, *, since=None, until=None):
    """Per annotator: totals over the window and one row per day they submitted.

    Returns ``{annotator id: {"passes", "steps", "median_step_seconds",
    "median_pass_seconds", "active_hours", "days": [{"day": "YYYY-MM-DD", same keys}]}}``;
    annotators without a submitted pass in the window are absent.
    """
    vendor = _VENDOR.get(connection.vendor, _VENDOR["postgresql"])
    window, params = _window_sql(since, until)
    sql = _PER_ANNOTATOR_SQL.format(window=window, gap=SESSION_GAP, **vendor)
    result = {}
    for ann, bucket, passes, steps, per_step, per_pass, hours in _fetch(sql, [_project_id(project), *params]):
        row = {
            "passes": passes,
            "steps": int(steps or 0),
            "median_step_seconds": _number(per_step),
            "median_pass_seconds": _number(per_pass),
            "active_hours": _number(hours),
        }
        entry = result.setdefault(ann, {"days": []})
        if bucket is None:
            entry.update(row)
        else:
            entry["days"].append({"day": bucket, **row})
    return result


def daily_totals(per_annotator):
    """The project's passes, steps and active hours per day, summed from ``annotator_throughput``."""
    days = {}
    for entry in per_annotator.values():
        for row in entry["days"]:
            total = days.setdefault(row["day"], {"day": row["day"], "passes": 0, "steps": 0,
                                                 "active_hours": 0.0, "annotators": 0})
            total["passes"] += row["passes"]
            total["steps"] += row["steps"]
            total["active_hours"] += row["active_hours"] or 0.0
            total["annotators"] += 1
    for total in days.values():
        total["active_hours"] = round(total["active_hours"], 3)
    return [days[d] for d in sorted(days)]


def queue_depth(project):
    """Per generation (None: solutions no generation chose): solutions, open ones, slots left."""
    overlap = project.overlap
    rows = _fetch(_QUEUE_SQL, [overlap, overlap, overlap, project.pk, project.pk])
    return [
        {"generation": number, "solutions": total, "open": int(open_ or 0), "remaining_slots": int(slots or 0)}
        for number, total, open_, slots in rows
    ]


def project_throughput(project, *, now=None):
    """Queue depth by generation, work done today, and the ETA of the current generation.

    ``eta`` holds ``remaining_slots`` (of the highest generation), ``median_pass_seconds``
    over the last ``PACE_WINDOW`` days, ``active_annotators`` (submitted in the last 24 hours)
    and ``seconds`` (None when nobody is active or there is no pace yet, or a pace under
    ``MIN_PACE_SECONDS``; ``reason`` then says which).
    """
    now = now or timezone.now()
    today = now.astimezone(timezone.get_current_timezone()).replace(hour=0, minute=0, second=0, microsecond=0)
    submitted = Assignment.objects.filter(project=project, state=Assignment.SUBMITTED)
    depth = queue_depth(project)
    generations = [row for row in depth if row["generation"] is not None]
    current = max(generations, key=lambda row: row["generation"]) if generations else (depth[0] if depth else None)
    pace = _fetch(_MEDIAN_SQL, [project.pk, now - timedelta(days=PACE_WINDOW)])[0][0]
    active = submitted.filter(submitted_at__gte=now - timedelta(hours=24), annotator__isnull=False)
    active = active.values("annotator").distinct().count()
    remaining = current["remaining_slots"] if current else 0
    if pace is None:
        seconds, reason = None, f"nobody submitted a timed pass in the last {PACE_WINDOW} days"
    elif float(pace) < MIN_PACE_SECONDS:
        seconds, reason = None, (f"the median pass of the last {PACE_WINDOW} days took {float(pace):.1f} s, "
                                 f"under {MIN_PACE_SECONDS} s: too short to estimate from")
    elif not active:
        seconds, reason = None, "nobody submitted in the last 24 hours"
    else:
        seconds, reason = remaining * float(pace) / active, None
    return {
        "queue_depth": depth,
        "done_today": {
            "passes": submitted.filter(submitted_at__gte=today).count(),
            "steps": Rating.objects.filter(
                assignment__project=project, assignment__state=Assignment.SUBMITTED,
                assignment__submitted_at__gte=today, value__isnull=False,
            ).count(),
        },
        "eta": {
            "generation": current["generation"] if current else None,
            "remaining_slots": remaining,
            "median_pass_seconds": _number(pace),
            "active_annotators": active,
            "seconds": None if seconds is None else round(seconds),
            "reason": reason,
        },
    }
