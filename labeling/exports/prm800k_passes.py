"""Reading submitted assignments ("passes") in bounded batches, for the exporters.

``iter_passes(filters)`` walks a project's submitted assignments by id (keyset pagination,
``BATCH`` at a time) and, per batch, reads the batch's problems, the steps of its solutions and
its ratings in one query each, joining them in Python. It yields plain tuples, never model
instances: export speed is dominated by how little Python does per rating, and memory by one
batch.
"""
import datetime
import json
import uuid

from django.db import connection

from ..imports.prm800k_record import export_timestamp

BATCH = 2000

# The batch is cut from the assignment table alone (by primary key) before any join, so a
# batch costs the same at the end of a large project as at its start.
_PASSES_SQL = """
SELECT a.id, {labeler}, {timestamp}, a.generation, a.is_quality_control, a.is_screening, a.total_time,
       a.finish_reason, a.source_shape, a.solution_id, s.has_pre_generated, s.final_answer, s.verifier_score,
       s.num_steps, s.problem_id
FROM (
    SELECT * FROM labeling_assignment a
    WHERE a.project_id = %s AND a.state = 'submitted' AND a.id > %s {filters}
    ORDER BY a.id
    LIMIT %s
) a
JOIN labeling_solution s ON s.id = a.solution_id
LEFT JOIN labeling_annotator an ON an.id = a.annotator_id
ORDER BY a.id
"""
# PostgreSQL writes the labeler and the timestamp as PRM800K text itself (parsing them into
# objects only to format them again is a tenth of an export's time).
_PG_COLUMNS = {
    "labeler": "an.uuid::text",
    "timestamp": """to_char(a.submitted_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US')""",
}
_SQLITE_COLUMNS = {"labeler": "an.uuid", "timestamp": "a.submitted_at"}

# Three single-table reads joined in Python: each plan is an index scan whatever the
# statistics say (right after a bulk import they say little), and a solution's steps and a
# problem's text cross the wire once per batch, not once per rating or per pass.
_PROBLEMS_SQL = "SELECT id, problem, ground_truth_solution, ground_truth_answer FROM labeling_problem WHERE id {in}"
_STEPS_SQL = "SELECT id, solution_id, position, alternative, text, source, author_id FROM labeling_step WHERE solution_id {in}"
_RATINGS_SQL = "SELECT assignment_id, step_id, value, flagged, chosen FROM labeling_rating WHERE assignment_id {in}"

# A rating row: (alternative, text, source, own, value, flagged, chosen); own = the assignment
# wrote this step itself (PRM800K's human_completion).
ALTERNATIVE, TEXT, SOURCE, OWN, VALUE, FLAGGED, CHOSEN = range(7)


class Pass:
    """One submitted assignment with its ratings by position.

    ``positions`` maps a position to its rating rows (see ``ALTERNATIVE`` ... ``CHOSEN``) in
    alternative order; ``pre_generated`` is the solution's step list (phase 2) or None.
    """

    __slots__ = (
        "id", "labeler", "timestamp", "generation", "is_quality_control", "is_screening", "total_time",
        "finish_reason", "shape", "solution_id", "has_pre_generated", "final_answer", "verifier_score",
        "num_steps", "problem_id", "problem", "ground_truth_solution", "ground_truth_answer", "positions",
        "pre_generated",
    )

    def __init__(self, row, postgres):
        (self.id, labeler, timestamp, self.generation, self.is_quality_control, self.is_screening,
         self.total_time, self.finish_reason, shape, self.solution_id, self.has_pre_generated, self.final_answer,
         self.verifier_score, self.num_steps, self.problem_id) = row
        if postgres:
            # As datetime.isoformat() writes it: no fraction when the microseconds are 0.
            if timestamp is not None and timestamp.endswith(".000000"):
                timestamp = timestamp[:-7]
        else:
            # SQLite keeps a UUID as 32 hex digits and a time as text (or a naive datetime, UTC).
            labeler = None if labeler is None else str(uuid.UUID(str(labeler)))
            if timestamp is not None:
                if isinstance(timestamp, str):
                    timestamp = datetime.datetime.fromisoformat(timestamp)
                if timestamp.tzinfo is None:
                    timestamp = timestamp.replace(tzinfo=datetime.timezone.utc)
                timestamp = export_timestamp(timestamp)
        # Django has psycopg hand JSON back as text, as SQLite does.
        self.shape = json.loads(shape) if isinstance(shape, str) else shape
        self.labeler, self.timestamp = labeler, timestamp
        self.positions = {}
        self.pre_generated = None


def iter_passes(filters, *, batch=None):
    """Yield a ``Pass`` for each submitted assignment ``filters`` keeps, in id order."""
    batch = batch or BATCH
    where, params = _filter_sql(filters)
    postgres = connection.vendor == "postgresql"
    sql = _PASSES_SQL.format(filters=where, **(_PG_COLUMNS if postgres else _SQLITE_COLUMNS))
    last_id = 0
    while True:
        cursor = connection.cursor().cursor  # the driver's own: no debug logging of big batches
        try:
            cursor.execute(sql, [filters.project_id, last_id, *params, batch])
            passes = [Pass(row, postgres) for row in cursor.fetchall()]
            if not passes:
                return
            _fill(cursor, passes, postgres)
        finally:
            cursor.close()
        yield from passes
        last_id = passes[-1].id


def _fill(cursor, passes, postgres):
    problems = {row[0]: row[1:] for row in _select_in(cursor, _PROBLEMS_SQL, list({p.problem_id for p in passes}), postgres)}
    # step id -> (id, solution, position, alternative, text, source, author)
    steps = {row[0]: row for row in _select_in(cursor, _STEPS_SQL, list({p.solution_id for p in passes}), postgres)}
    by_id = {p.id: p for p in passes}
    for assignment_id, step_id, value, flagged, chosen in _select_in(cursor, _RATINGS_SQL, list(by_id), postgres):
        _, _, position, alternative, text, source, author_id = steps[step_id]
        positions = by_id[assignment_id].positions
        row = (alternative, text, source, author_id == assignment_id, value, flagged, chosen)
        rows = positions.get(position)
        if rows is None:
            positions[position] = [row]
        else:
            rows.append(row)
    phase2 = {p.solution_id: p.num_steps for p in passes if p.has_pre_generated}
    own_steps = {}
    if phase2:
        for _, solution_id, position, alternative, text, _, author_id in steps.values():
            if alternative == 0 and author_id is None and solution_id in phase2:
                own_steps.setdefault(solution_id, {})[position] = text
    for p in passes:
        p.problem, p.ground_truth_solution, p.ground_truth_answer = problems[p.problem_id]
        for rows in p.positions.values():
            if len(rows) > 1:
                rows.sort()  # by alternative, unique within a position
        if p.has_pre_generated:
            own = own_steps.get(p.solution_id, {})
            p.pre_generated = [own[i] for i in range(p.num_steps) if i in own]


def _filter_sql(filters):
    where, params = [], []
    if filters.generations is not None:
        generations = list(filters.generations)
        if not generations:
            where.append("AND FALSE")
        else:
            where.append(f"AND a.generation IN ({', '.join(['%s'] * len(generations))})")
            params.extend(generations)
    if filters.since is not None:
        where.append("AND a.submitted_at >= %s")
        params.append(connection.ops.adapt_datetimefield_value(filters.since))
    if filters.until is not None:
        where.append("AND a.submitted_at < %s")
        params.append(connection.ops.adapt_datetimefield_value(filters.until))
    if not filters.include_quality_control:
        where.append("AND NOT a.is_quality_control")
    excluded = list(filters.exclude_annotator_ids or ())
    if excluded:
        where.append(f"AND (a.annotator_id IS NULL OR a.annotator_id NOT IN ({', '.join(['%s'] * len(excluded))}))")
        params.extend(excluded)
    return " ".join(where), params


def _select_in(cursor, sql, values, postgres):
    if not values:
        return []
    if postgres:
        cursor.execute(sql.format(**{"in": "= ANY(%s)"}), [values])
    else:
        cursor.execute(sql.format(**{"in": f"IN ({', '.join(['%s'] * len(values))})"}), values)
    return cursor.fetchall()
