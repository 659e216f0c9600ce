"""Every figure the lead dashboard shows, for a project, a generation and a time window.

``build_dashboard`` returns one JSON-ready dict: agreement (Krippendorff's alpha with a
bootstrap interval overall, per day or week and per generation; first-error agreement), the
annotator x annotator Cohen's kappa matrix, one row per annotator (gold score,
rating distribution, kappa against the others' majority with its interval, mean pairwise kappa,
throughput, the wrong pre-labels their gold passes showed and how many they accepted; status and
outlier flags are added live by the API), the project's throughput (labeling/stats/throughput.py)
and, where pre-labels were ever shown, time and agreement per pre-label mode (labeling/stats/prelabels.py). The statistics are labeling/stats/agreement.py's, on the
ratings labeling/stats/agreement_data.py defines (submitted alternative-0 ratings with a value,
passes with an annotator); ``load_columns`` reads the same rows, plus the day and generation
of each pass, packed into a few binary values by PostgreSQL (a million ratings reach numpy
in a fraction of a second, where a Python row iterator takes seconds).

Agreement over time and per generation partition *items*, not ratings: a solution's step
slots belong to the period (or generation) of the latest pass submitted on it in the
filtered data, so every item is counted once, with all of its ratings, when it was complete.

Computing this on a million ratings takes seconds; pages read it through
labeling/stats/cache.py, which keeps it up to date as ratings arrive.
"""
import datetime
import threading

import numpy as np
from django.db import connection
from django.utils import timezone

from labeling.models import (
    Annotator,
    AnnotatorProjectStatus,
    Assignment,
    GoldRating,
    GoldScore,
    Project,
    Rating,
)
from labeling.stats import agreement, agreement_data, throughput
from labeling.stats import prelabels as prelabel_stats
from labeling.work import prelabels as work_prelabels

DOMAIN = (-1, 0, 1)
NO_GENERATION = -2  # stands for a pass without a generation in the int64 columns
COLUMNS = ("annotator", "solution", "position", "value", "day", "generation")
_EPOCH = datetime.date(1970, 1, 1)

# Each rating as a 28-byte big-endian record, concatenated per annotator in PostgreSQL: a
# few hundred values cross the wire instead of a million rows, and numpy reads them as they
# are. (A binary COPY sends a message per row, which costs a second of Python per million.)
_RECORD = np.dtype([("annotator", ">i8"), ("solution", ">i8"), ("position", ">i4"), ("day", ">i4"),
                    ("value", ">i2"), ("generation", ">i2")])
_RATINGS_SQL = """
SELECT string_agg(int8send(a.annotator_id) || int8send(st.solution_id) || int4send(st.position::int4)
                  || int4send(floor(extract(epoch FROM a.submitted_at) / 86400)::int4)
                  || int2send(r.value::int2) || int2send(coalesce(a.generation, {none})::int2), ''::bytea)
FROM labeling_rating r
JOIN labeling_assignment a ON a.id = r.assignment_id
JOIN labeling_step st ON st.id = r.step_id
WHERE a.project_id = %s AND a.state = 'submitted' AND a.annotator_id IS NOT NULL
      AND st.alternative = 0 AND r.value IS NOT NULL {filters}
GROUP BY a.annotator_id
"""


# Loading -------------------------------------------------------------------------------------


def load_columns(project, *, generation=None, since=None, until=None):
    """The ratings the statistics use as int64 arrays, ``{name: array}`` for ``COLUMNS``.

    ``day`` counts UTC days since 1970-01-01 of the pass's ``submitted_at``; ``generation``
    is the pass's generation number or ``NO_GENERATION``. Filters as in
    ``agreement_data.submitted_ratings``.
    """
    if connection.vendor != "postgresql":
        return _load_portable(project, generation=generation, since=since, until=until)
    filters, params = [], [getattr(project, "pk", project)]
    for clause, value in (("a.generation = %s", generation), ("a.submitted_at >= %s", since),
                          ("a.submitted_at < %s", until)):
        if value is not None:
            filters.append(f"AND {clause}")
            params.append(value)
    with throughput.analytic_cursor() as cursor:
        cursor.execute(_RATINGS_SQL.format(none=NO_GENERATION, filters=" ".join(filters)), params)
        data = b"".join(bytes(blob) for blob, in cursor.fetchall())
    rows = np.frombuffer(data, dtype=_RECORD)
    return {name: rows[name].astype(np.int64) for name in COLUMNS}


def _load_portable(project, *, generation, since, until):
    rows = agreement_data.submitted_ratings(project, "assignment__submitted_at", "assignment__generation",
                                            generation=generation, since=since, until=until)
    rows = [(a, s, p, v, (t.date() - _EPOCH).days, NO_GENERATION if g is None else g) for a, s, p, v, t, g in rows]
    flat = np.array(rows, dtype=np.int64).reshape(-1, len(COLUMNS))
    return {name: flat[:, k] for k, name in enumerate(COLUMNS)}


def table_of(columns, keep=slice(None)):
    """A ``RatingTable`` of the rows ``keep`` of ``columns``."""
    return agreement.rating_table(*(columns[name][keep] for name in COLUMNS[:4]), domain=DOMAIN)


# Agreement -----------------------------------------------------------------------------------


NO_OVERLAP = ("No step has been rated by two annotators yet, so there is no agreement to measure: "
              "it needs an overlap of at least 2 (each solution rated by two people or more).")
ONE_VALUE = "Every rating of the steps rated twice has the same value, so agreement beyond chance cannot be measured yet."


def _interval(table, replicates):
    """Alpha with its bootstrap interval, or ``{"estimate": None, "reason": why}``.

    The reason is a sentence for the lead, not the statistic's own message (issue #30: an
    overlap-1 project showed "Krippendorff's alpha is undefined: no item to resample").
    """
    try:
        ci = agreement.bootstrap_alpha(table, replicates=replicates) if replicates else None
        estimate = ci.estimate if ci else agreement.krippendorff_alpha(table)
    except agreement.AgreementUndefined:
        pairable = (agreement.value_counts(table).sum(1) >= 2).any()
        return {"estimate": None, "low": None, "high": None, "reason": ONE_VALUE if pairable else NO_OVERLAP}
    return {"estimate": _r(estimate), "low": _r(ci.low) if ci else None, "high": _r(ci.high) if ci else None}


def _grouped_alpha(table, group_of_item, replicates):
    """``[(group, alpha interval, ratings)]`` for each group of items.

    The table is sorted by item, so a stable sort by group keeps each group's rows in item
    order and its sub-table needs no new sort: only its item codes renumbered.
    """
    group = group_of_item[table.item]
    order = np.argsort(group, kind="stable")
    groups, starts = np.unique(group[order], return_index=True)
    ends = np.r_[starts[1:], len(order)]
    result = []
    for g, start, end in zip(groups.tolist(), starts.tolist(), ends.tolist()):
        rows = order[start:end]
        item = table.item[rows]
        first = np.r_[True, item[1:] != item[:-1]]
        sub = agreement.RatingTable(table.rater[rows], np.cumsum(first) - 1, table.value[rows],
                                    table.annotators, table.items[item[first]], table.domain)
        result.append((g, _interval(sub, replicates), end - start))
    return result


def _latest_per_item(columns, table, name):
    """For each item of ``table``, the largest ``name`` among the ratings of its solution."""
    solutions, solution = np.unique(columns["solution"], return_inverse=True)
    latest = np.full(len(solutions), np.iinfo(np.int64).min)
    np.maximum.at(latest, solution, columns[name])
    return latest[np.searchsorted(solutions, table.items[:, 0])]


def period_start(days, bucket):
    """Epoch day of the period (``"day"``, or ``"week"`` starting on Monday) of each epoch day."""
    return days if bucket == "day" else days - (days + 3) % 7  # 1970-01-01 was a Thursday


def _day_text(epoch_day):
    return (_EPOCH + datetime.timedelta(days=int(epoch_day))).isoformat()


def agreement_figures(columns, table, *, bucket, replicates):
    """Overall alpha, alpha per period and per generation, first-error agreement."""
    over_time, by_generation = [], []
    if len(table.rater):
        periods = period_start(_latest_per_item(columns, table, "day"), bucket)
        over_time = [{"period": _day_text(p), "alpha": a, "ratings": n}
                     for p, a, n in _grouped_alpha(table, periods, replicates)]
        generations = _latest_per_item(columns, table, "generation")
        by_generation = [{"generation": None if g == NO_GENERATION else g, "alpha": a, "ratings": n}
                         for g, a, n in _grouped_alpha(table, generations, replicates)]
    try:
        fe = agreement.first_error_agreement(table)
        first_error = {"share": _r(fe.share), "agreeing_pairs": fe.agreeing_pairs, "pairs": fe.pairs,
                       "solutions": fe.solutions}
    except agreement.AgreementUndefined as exc:
        first_error = {"share": None, "reason": str(exc)}
    return {"alpha": _interval(table, replicates), "bucket": bucket, "over_time": over_time,
            "by_generation": by_generation, "first_error": first_error}


def kappa_matrix(table):
    """``{"annotators": [ids], "kappa": rows of kappas (None: undefined or nothing shared), "shared"}``."""
    pairs = agreement.cohen_kappa_matrix(table)
    ids = table.annotators.tolist()
    kappa = [[None] * len(ids) for _ in ids]
    shared = [[0] * len(ids) for _ in ids]
    for i, a in enumerate(ids):
        for j, b in enumerate(ids):
            pair = pairs.get(a, {}).get(b)
            if pair is not None:
                kappa[i][j], shared[i][j] = _r(pair.kappa), pair.shared
    return {"annotators": ids, "kappa": kappa, "shared": shared}


# Annotators ----------------------------------------------------------------------------------


def rating_distribution(table):
    """``{annotator: {"-1": share, "0": share, "1": share, "ratings": n}}`` from the table."""
    counts = np.bincount(table.rater * 3 + table.value, minlength=len(table.annotators) * 3).reshape(-1, 3)
    result = {}
    for annotator, row in zip(table.annotators.tolist(), counts.tolist()):
        n = sum(row)
        result[annotator] = {"-1": _r(row[0] / n), "0": _r(row[1] / n), "1": _r(row[2] / n), "ratings": n}
    return result


_ROLLING_GOLD_SQL = """
SELECT annotator_id, avg(exact_share), count(*) FROM (
    SELECT annotator_id, exact_share,
           row_number() OVER (PARTITION BY annotator_id ORDER BY submitted_at DESC, id DESC) AS n
    FROM labeling_goldscore WHERE project_id = %s AND NOT is_screening
) x WHERE n <= %s GROUP BY annotator_id
"""


def gold_scores(project):
    """``{annotator: {"score", "passes"}}``: the rolling gold score of every annotator at once.

    The same figure as ``labeling.quality.gold.rolling_gold_score`` (the mean ``exact_share`` of the
    latest ``project.gold_window`` scored gold passes, screening apart), in one query.
    """
    with connection.cursor() as cursor:
        cursor.execute(_ROLLING_GOLD_SQL, [project.pk, project.gold_window])
        return {pk: {"score": _r(score), "passes": n} for pk, score, n in cursor.fetchall()}


def statuses(project, annotator_ids=None):
    """``{annotator: {"status", "status_reason"}}``: standing in the project, read now.

    The project's AnnotatorProjectStatus row (labeling/quality/screening.py) when there is one; else
    paused when the account is paused everywhere (``Annotator.status``), else active.
    Without ``annotator_ids``: only the annotators with a row or a pause (others are active).
    """
    people = Annotator.objects.all()
    rows = AnnotatorProjectStatus.objects.filter(project=project)
    if annotator_ids is None:
        people = people.filter(status=Annotator.PAUSED)
    else:
        people, rows = people.filter(pk__in=annotator_ids), rows.filter(annotator__in=annotator_ids)
    result = {pk: {"status": status, "status_reason": reason}
              for pk, status, reason in people.values_list("pk", "status", "status_reason")}
    for pk, state, reason in rows.values_list("annotator_id", "state", "reason"):
        result[pk] = {"status": state, "status_reason": reason}
    return result


def annotator_rows(project, table, work, gold, agreeing=None, wrong=None):
    """One dict per annotator who rated or submitted anything in the filtered data.

    ``work`` is ``throughput.annotator_throughput``'s answer, ``gold`` ``gold_scores``',
    ``agreeing`` ``agreement.per_annotator``'s (computed when not given), ``wrong``
    ``labeling.work.prelabels.wrong_prelabels``' (read when not given).
    Status is left out: it changes without a submit, so readers add it live (``statuses``).
    """
    ids = sorted(set(table.annotators.tolist()) | set(work))
    people = {a.pk: a for a in Annotator.objects.filter(pk__in=ids).select_related("user")}
    if agreeing is None:
        agreeing = agreement.per_annotator(table, replicates=0) if len(table.rater) else {}
    distribution = rating_distribution(table)
    if wrong is None:
        wrong = work_prelabels.wrong_prelabels(project, ids)
    rows = []
    for pk in ids:
        person, ag, done = people.get(pk), agreeing.get(pk), work.get(pk, {})
        rows.append({
            "id": pk,
            "label": str(person) if person else str(pk),
            "gold_score": gold.get(pk, {}).get("score"),
            "gold_passes": gold.get(pk, {}).get("passes", 0),
            # Wrong pre-labels (traps, the source's mistakes) their gold passes showed, and of them accepted.
            "wrong_prelabels": wrong.get(pk, (0, 0))[0],
            "wrong_prelabels_accepted": wrong.get(pk, (0, 0))[1],
            # Leave-one-out: their ratings against the majority of the others' (agreement.per_annotator).
            "kappa_majority": _r(ag.majority.estimate) if ag and ag.majority else None,
            "kappa_majority_low": _r(ag.majority.low) if ag and ag.majority and ag.majority.replicates else None,
            "kappa_majority_high": _r(ag.majority.high) if ag and ag.majority and ag.majority.replicates else None,
            "majority_items": ag.majority_items if ag else 0,
            "kappa_majority_reason": ag.reason if ag else None,
            "kappa": _r(ag.mean_kappa) if ag else None,
            "kappa_partners": ag.partners if ag else 0,
            "shared_items": ag.items if ag else 0,
            "distribution": distribution.get(pk, {"-1": None, "0": None, "1": None, "ratings": 0}),
            **{k: done.get(k) for k in ("passes", "steps", "median_step_seconds", "median_pass_seconds",
                                        "active_hours")},
        })
    return rows


# The whole dashboard -------------------------------------------------------------------------


def build_dashboard(project, *, generation=None, since=None, until=None, bucket=None, replicates=200, now=None):
    """Every figure of the dashboard as a JSON-ready dict (see the module docstring).

    ``bucket`` is ``"day"`` or ``"week"`` for agreement over time; by default days when the
    ratings span at most 60 days, else weeks. ``replicates`` bootstrap draws give the
    intervals (0: none).
    """
    if not isinstance(project, Project):
        project = Project.objects.get(pk=project)
    now = now or timezone.now()

    def database_side():
        return (throughput.annotator_throughput(project, since=since, until=until),
                throughput.project_throughput(project, now=now), gold_scores(project),
                work_prelabels.wrong_prelabels(project), prelabel_stats.by_mode(project, generation=generation))

    # The aggregates run in PostgreSQL while this thread loads the ratings and does the numpy
    # work: two cores busy instead of one.
    aside = _beside(database_side)
    columns = load_columns(project, generation=generation, since=since, until=until)
    table = table_of(columns)
    if bucket is None:
        span = int(np.ptp(columns["day"])) if len(columns["day"]) else 0
        bucket = "day" if span <= 60 else "week"
    agreeing = agreement.per_annotator(table, replicates=replicates) if len(table.rater) else {}
    figures = agreement_figures(columns, table, bucket=bucket, replicates=replicates)
    matrix = kappa_matrix(table)
    work, project_figures, gold, wrong, modes = aside()
    return {
        "project": {"id": project.pk, "name": project.name, "overlap": project.overlap},
        "filters": {"generation": generation, "since": _iso(since), "until": _iso(until)},
        "computed_at": now.isoformat(),
        "ratings": int(len(table.rater)),
        "agreement": figures,
        "kappa_matrix": matrix,
        "annotators": annotator_rows(project, table, work, gold, agreeing, wrong),
        "prelabels": modes,
        "throughput": {"daily": throughput.daily_totals(work), **project_figures},
    }


def _beside(function):
    """Start ``function`` in a thread with its own database connection; returns a function
    that waits for its result. Inside a transaction (tests, a caller's atomic block) another
    connection would not see uncommitted rows, so it runs then, in this thread, instead."""
    if connection.in_atomic_block or connection.vendor != "postgresql":
        return function
    outcome = {}

    def run():
        try:
            outcome["value"] = function()
        except BaseException as exc:  # re-raised in the caller's thread
            outcome["error"] = exc
        finally:
            connection.close()  # this thread's own connection

    thread = threading.Thread(target=run, name="dashboard-sql", daemon=True)
    thread.start()

    def result():
        thread.join()
        if "error" in outcome:
            raise outcome["error"]
        return outcome["value"]

    return result


def _iso(value):
    return value.isoformat() if value is not None else None


def _r(x, digits=4):
    return None if x is None or x != x else round(float(x), digits)


# Drill-down ----------------------------------------------------------------------------------


def annotator_passes(project, annotator, *, limit=20, offset=0):
    """One annotator's submitted passes, newest first, each step's rating beside the others'.

    Returns ``{"count", "passes": [{"id", "solution", "problem", "submitted_at", "finish_reason",
    "finish_note", "total_time", "generation", "is_quality_control", "solution_is_gold",
    "solution_is_screening" (the solution now), "gold_exact_share" (the pass's gold score, or
    None), "flagged_steps" (how many steps it flagged unsure), "steps": [{"position",
    "alternative", "text", "source", "value", "flagged", "gold" (the gold rating or None),
    "others": [{"annotator", "label", "value"}]}]}]}``. For leads only: it shows gold.
    """
    passes = Assignment.objects.filter(project=project, annotator=annotator, state=Assignment.SUBMITTED)
    count = passes.count()
    page = list(passes.select_related("solution__problem").order_by("-submitted_at", "-pk")[offset:offset + limit])
    ratings = (
        Rating.objects.filter(assignment__in=page).select_related("step")
        .order_by("assignment", "step__position", "step__alternative")
    )
    by_pass, step_ids = {}, []
    for rating in ratings:
        by_pass.setdefault(rating.assignment_id, []).append(rating)
        step_ids.append(rating.step_id)
    gold = dict(GoldRating.objects.filter(step__in=step_ids).values_list("step_id", "value"))
    others = {}
    rows = Rating.objects.filter(step__in=step_ids, assignment__state=Assignment.SUBMITTED, value__isnull=False)
    rows = rows.exclude(assignment__annotator=annotator).values_list("step_id", "assignment__annotator_id", "value")
    for step_id, other, value in rows.order_by("assignment__annotator_id"):
        others.setdefault(step_id, []).append((other, value))
    labels = {a.pk: str(a) for a in Annotator.objects.filter(
        pk__in={o for pairs in others.values() for o, _ in pairs}).select_related("user")}
    shares = dict(GoldScore.objects.filter(assignment__in=page).values_list("assignment_id", "exact_share"))
    return {
        "count": count,
        "passes": [
            {
                "id": a.pk,
                "solution": a.solution_id,
                "problem": a.solution.problem.problem,
                "submitted_at": _iso(a.submitted_at),
                "finish_reason": a.finish_reason,
                "finish_note": a.finish_note,
                "total_time": a.total_time,
                "generation": a.generation,
                "is_quality_control": a.is_quality_control or a.solution.is_gold,
                "solution_is_gold": a.solution.is_gold,
                "solution_is_screening": a.solution.is_screening,
                "gold_exact_share": shares.get(a.pk),
                "flagged_steps": sum(bool(r.flagged) for r in by_pass.get(a.pk, [])),
                "steps": [
                    {
                        "position": r.step.position, "alternative": r.step.alternative, "text": r.step.text,
                        "source": r.step.source, "value": r.value, "flagged": r.flagged,
                        "gold": gold.get(r.step_id),
                        "others": [{"annotator": o, "label": labels.get(o, str(o)), "value": v}
                                   for o, v in others.get(r.step_id, [])],
                    }
                    for r in by_pass.get(a.pk, [])
                ],
            }
            for a in page
        ],
    }
