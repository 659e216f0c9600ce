"""Reading submitted assignments ("passes") in bounded batches, for the exporters.

``iter_passes(filters)`` walks a project's submitted assignments by id (keyset pagination,
``BATCH`` at a time) and, per batch, reads every rating with its step in one query and the
pre-generated steps of the batch's phase-2 solutions in another. It yields plain tuples, never
model instances: export speed is dominated by how little Python does per rating.
"""
import datetime
import json
import uuid

from django.db import connection

BATCH = 2000

_PASSES_SQL = """
SELECT a.id, an.uuid, a.submitted_at, a.generation, a.is_quality_control, a.is_screening, a.total_time,
       a.finish_reason, a.source_shape, a.solution_id, s.has_pre_generated, s.final_answer, s.verifier_score,
       p.problem, p.ground_truth_solution, p.ground_truth_answer
FROM labeling_assignment a
JOIN labeling_solution s ON s.id = a.solution_id
JOIN labeling_problem p ON p.id = s.problem_id
LEFT JOIN labeling_annotator an ON an.id = a.annotator_id
WHERE a.project_id = %s AND a.state = 'submitted' AND a.id > %s {filters}
ORDER BY a.id
LIMIT %s
"""
# own: the assignment wrote this step itself (PRM800K's human_completion).
_RATINGS_SQL = """
SELECT r.assignment_id, st.position, st.text, st.source, st.author_id = r.assignment_id, r.value, r.flagged, r.chosen
FROM labeling_rating r
JOIN labeling_step st ON st.id = r.step_id
WHERE r.assignment_id {in}
ORDER BY r.assignment_id, st.position, st.alternative
"""
_PRE_GENERATED_SQL = """
SELECT st.solution_id, st.text
FROM labeling_step st
JOIN labeling_solution s ON s.id = st.solution_id
WHERE st.solution_id {in} AND st.alternative = 0 AND st.author_id IS NULL AND st.position < s.num_steps
ORDER BY st.solution_id, st.position
"""


class Pass:
    """One submitted assignment with its ratings by position.

    ``positions`` maps a position to its rating rows ``(text, source, own, value, flagged,
    chosen)`` in alternative order; ``pre_generated`` is the solution's step list (phase 2) or
    None.
    """

    __slots__ = (
        "id", "labeler", "submitted_at", "generation", "is_quality_control", "is_screening", "total_time",
        "finish_reason", "shape", "solution_id", "has_pre_generated", "final_answer", "verifier_score",
        "problem", "ground_truth_solution", "ground_truth_answer", "positions", "pre_generated",
    )

    def __init__(self, row):
        (self.id, labeler, submitted_at, self.generation, self.is_quality_control, self.is_screening,
         self.total_time, self.finish_reason, shape, self.solution_id, self.has_pre_generated, self.final_answer,
         self.verifier_score, self.problem, self.ground_truth_solution, self.ground_truth_answer) = row
        # SQLite hands back text where PostgreSQL hands back objects.
        self.labeler = None if labeler is None else str(labeler if isinstance(labeler, uuid.UUID) else uuid.UUID(labeler))
        if isinstance(submitted_at, str):
            submitted_at = datetime.datetime.fromisoformat(submitted_at)
        if submitted_at is not None and submitted_at.tzinfo is None:
            submitted_at = submitted_at.replace(tzinfo=datetime.timezone.utc)
        self.submitted_at = submitted_at
        self.shape = json.loads(shape) if isinstance(shape, str) else shape
        self.positions = {}
        self.pre_generated = None


def iter_passes(filters, *, batch=BATCH):
    """Yield a ``Pass`` for each submitted assignment ``filters`` keeps, in id order."""
    where, params = _filter_sql(filters)
    sql = _PASSES_SQL.format(filters=where)
    last_id = 0
    postgres = connection.vendor == "postgresql"
    while True:
        cursor = connection.cursor().cursor  # the driver's own: no debug logging of big batches
        try:
            cursor.execute(sql, [filters.project_id, last_id, *params, batch])
            passes = [Pass(row) for row in cursor.fetchall()]
            if not passes:
                return
            by_id = {p.id: p for p in passes}
            current, positions = None, None
            for assignment_id, position, *rest in _select_in(cursor, _RATINGS_SQL, list(by_id), postgres):
                if assignment_id != current:
                    current, positions = assignment_id, by_id[assignment_id].positions
                rows = positions.get(position)
                if rows is None:
                    rows = positions[position] = []
                rows.append(rest)
            phase2 = list({p.solution_id for p in passes if p.has_pre_generated})
            steps = {}
            for solution_id, text in _select_in(cursor, _PRE_GENERATED_SQL, phase2, postgres):
                steps.setdefault(solution_id, []).append(text)
            for p in passes:
                if p.has_pre_generated:
                    p.pre_generated = steps.get(p.solution_id, [])
        finally:
            cursor.close()
        yield from passes
        last_id = passes[-1].id


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
