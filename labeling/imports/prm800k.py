"""Import PRM800K JSONL (see docs/prm800k-format.md): one line, one submitted assignment.

How a record lands in the tables:

- **Problem** by ``content_hash`` over (problem, ground_truth_solution, ground_truth_answer),
  an absent key counting as null.
- **Solution** by ``content_hash``. Phase 2 (the question has ``pre_generated_steps``): the
  problem hash with the pre-generated steps, answer and verifier score; its steps are
  alternative 0 at positions 0..n-1. Phase 1: the problem hash with the record's whole label
  tree (completion and human texts per position), so each trajectory is its own solution.
- **Steps**: a record's completions at a position map, in order, onto the smallest model step
  at that position with the same text and a higher alternative than the previous completion's,
  else onto a new step (alternative = largest + 1). Texts repeat within a position in the real
  data, so text alone never identifies a step; the mapping keeps each record's completions in
  alternative order, which is the order export lists them in. A human completion becomes a new
  step with its ``source`` and ``author`` = the assignment.
- **Assignment** (state submitted) with one **Rating** per listed completion; ``chosen`` marks
  the completion at ``chosen_completion`` (or the human step when the trajectory continued
  with it). ``source_hash`` (sha256 of the canonical record) makes a re-import add nothing;
  ``source_shape`` keeps what the tables cannot (see ``prm800k_record``).

Records are read in chunks of ``CHUNK`` and written in bulk (``prm800k_bulk``); memory holds one
chunk plus the labeler and generation ids. ``run_import`` wraps the whole file in one
transaction.
"""
import collections
import uuid

from django.db import connection

from formats.errors import FormatError

from ..models import Annotator, Assignment, Generation, Problem, Rating, Solution, Step
from ..models.projects import full_now
from .common import ImportResult, chunks
from .prm800k_bulk import BulkWriter
from .prm800k_record import parse_record, record_hash
from .registry import register

CHUNK = 2000
ANALYZE_AFTER_ROWS = 100_000  # new steps + ratings worth refreshing the planner's statistics for
IN_BATCH = 500  # SQLite's limit on query parameters

PROBLEM_COLUMNS = ("id", "project_id", "problem", "ground_truth_solution", "ground_truth_answer", "content_hash")
SOLUTION_COLUMNS = (
    "id", "project_id", "problem_id", "final_answer", "has_pre_generated", "generation_id", "verifier_score",
    "is_gold", "is_screening", "num_steps", "content_hash", "live_assignments",
)
ASSIGNMENT_COLUMNS = (
    "id", "project_id", "solution_id", "annotator_id", "state", "submitted_at", "total_time", "finish_reason",
    "generation", "is_quality_control", "is_screening", "source_hash", "source_shape",
)
STEP_COLUMNS = ("id", "solution_id", "position", "alternative", "text", "source", "author_id")
RATING_COLUMNS = ("id", "assignment_id", "step_id", "value", "flagged", "chosen")


@register("prm800k")
def load(records, project, *, progress):
    """Import PRM800K records into ``project``; see the module docstring."""
    job = _Import(project)
    with job.writer.row_triggers_off():
        for chunk in chunks(((line, record, record_hash(record)) for line, record in records), CHUNK):
            job.flush(chunk)
            progress.advance(len(chunk))
        job.analyze()
    return job.result


class _Import:
    def __init__(self, project):
        self.project = project
        self.writer = BulkWriter(connection)
        self.result = ImportResult(
            details={"problems": 0, "solutions": 0, "steps": 0, "ratings": 0, "annotators": 0}
        )
        self.annotators = {}  # labeler uuid -> id
        self.generations = {}  # number -> id
        writer = self.writer
        self.problem_ids, self.solution_ids = writer.ids(Problem), writer.ids(Solution)
        self.assignment_ids, self.step_ids, self.rating_ids = writer.ids(Assignment), writer.ids(Step), writer.ids(Rating)
        if writer.postgres:
            with writer.raw_cursor() as cursor:
                # Two imports into one project would hand out the same alternatives.
                cursor.execute("SELECT pg_advisory_xact_lock(hashtext('stepmark.import'), %s)", [project.id])
                cursor.execute("SELECT 1 FROM labeling_project WHERE id = %s FOR KEY SHARE", [project.id])

    def flush(self, chunk):
        self.result.records += len(chunk)
        fresh = self._fresh(chunk)
        self.result.skipped += len(chunk) - len(fresh)
        self.result.created += len(fresh)
        if not fresh:
            return
        self._annotators(fresh)
        self._generations(fresh)
        problems, problem_rows = self._problems(fresh)
        solutions, slots, solution_rows, step_rows = self._solutions(fresh, problems)
        self._check_one_pass_per_labeler(fresh, solutions)
        assignment_rows, rating_rows = [], []
        for parsed in fresh:
            self._record(parsed, solutions[parsed.solution_hash], slots, assignment_rows, step_rows, rating_rows)
        # Solution.live_assignments counts active and submitted assignments.
        passes = collections.Counter(solutions[p.solution_hash] for p in fresh)
        solution_rows = [row + (passes.pop(row[0]),) for row in solution_rows]
        write = self.writer.write
        write(Problem, PROBLEM_COLUMNS, problem_rows)
        write(Solution, SOLUTION_COLUMNS, solution_rows)
        self._count_passes(passes)
        # Which of them the passes filled (Solution.is_full), as the queue's hand-outs would say.
        Solution.objects.filter(pk__in=[row[0] for row in solution_rows] + list(passes)).update(is_full=full_now())
        write(Assignment, ASSIGNMENT_COLUMNS, assignment_rows)
        write(Step, STEP_COLUMNS, step_rows)
        write(Rating, RATING_COLUMNS, rating_rows)
        details = self.result.details
        details["problems"] += len(problem_rows)
        details["solutions"] += len(solution_rows)
        details["steps"] += len(step_rows)
        details["ratings"] += len(rating_rows)

    def _count_passes(self, passes):
        if not passes:
            return
        with self.writer.raw_cursor() as cursor:
            if self.writer.postgres:
                cursor.execute(
                    "UPDATE labeling_solution s SET live_assignments = s.live_assignments + u.n "
                    "FROM unnest(%s::bigint[], %s::int[]) AS u(id, n) WHERE s.id = u.id",
                    [list(passes), list(passes.values())],
                )
            else:
                cursor.executemany(
                    "UPDATE labeling_solution SET live_assignments = live_assignments + %s WHERE id = %s",
                    [(n, pk) for pk, n in passes.items()],
                )

    def _fresh(self, chunk):
        """The records not imported before (nor earlier in this chunk), checked and parsed.

        A record already imported was checked then: only new ones are parsed (a re-import
        costs reading and hashing).
        """
        known = {
            row[0]
            for row in self._select_in(
                "SELECT source_hash FROM labeling_assignment WHERE project_id = %s AND source_hash {in}",
                [source_hash for _, _, source_hash in chunk],
            )
        }
        fresh = []
        for line, record, source_hash in chunk:
            if source_hash not in known:
                known.add(source_hash)
                fresh.append(parse_record(record, line, source_hash))
        return fresh

    def analyze(self):
        """Refresh the planner's statistics after a large import.

        Right after a bulk load PostgreSQL still plans as if the tables were empty (autovacuum
        catches up minutes later): the export's and the queue's queries would pick index scans
        that read every row.
        """
        details = self.result.details
        if self.writer.postgres and details["steps"] + details["ratings"] >= ANALYZE_AFTER_ROWS:
            with self.writer.raw_cursor() as cursor:
                cursor.execute(
                    "ANALYZE labeling_problem, labeling_solution, labeling_step, labeling_assignment, labeling_rating"
                )

    def _annotators(self, fresh):
        wanted = {p.labeler for p in fresh if p.labeler is not None} - self.annotators.keys()
        if not wanted:
            return
        existing = dict(Annotator.objects.filter(uuid__in=wanted).values_list("uuid", "id"))
        missing = wanted - {str(u) for u in existing}
        # Another import may add the same labeler meanwhile (labelers are shared by projects).
        Annotator.objects.bulk_create([Annotator(uuid=u) for u in sorted(missing)], ignore_conflicts=True)
        self.result.details["annotators"] += len(missing)
        rows = self._select_in(
            "SELECT uuid, id FROM labeling_annotator WHERE uuid {in}",
            [uuid.UUID(u) if self.writer.postgres else uuid.UUID(u).hex for u in wanted],
            project=False,
            lock=True,
        )
        for u, pk in rows:
            self.annotators[str(u if isinstance(u, uuid.UUID) else uuid.UUID(u))] = pk

    def _generations(self, fresh):
        for number in {p.generation for p in fresh if p.generation is not None} - self.generations.keys():
            generation, _ = Generation.objects.get_or_create(project=self.project, number=number)
            self.generations[number] = generation.pk
            self._select_in("SELECT id FROM labeling_generation WHERE id {in}", [generation.pk], project=False, lock=True)

    def _problems(self, fresh):
        ids = dict(
            self._select_in(
                "SELECT content_hash, id FROM labeling_problem WHERE project_id = %s AND content_hash {in}",
                list({p.problem_hash for p in fresh}),
                lock=True,
            )
        )
        rows = []
        for parsed in fresh:
            if parsed.problem_hash not in ids:
                pk = ids[parsed.problem_hash] = next(self.problem_ids)
                rows.append((pk, self.project.id, *parsed.problem, parsed.problem_hash))
        return ids, rows

    def _solutions(self, fresh, problems):
        """Solution ids by hash, and the step slots (per solution, per position) to map onto."""
        ids = dict(
            self._select_in(
                "SELECT content_hash, id FROM labeling_solution WHERE project_id = %s AND content_hash {in}",
                list({p.solution_hash for p in fresh}),
                lock=True,
            )
        )
        self.existing_solutions = set(ids.values())
        slots = {}
        for solution_id, position, alternative, matchable, text, step_id in self._select_in(
            "SELECT solution_id, position, alternative, author_id IS NULL, text, id FROM labeling_step "
            "WHERE solution_id {in} ORDER BY solution_id, position, alternative",
            list(self.existing_solutions),
            project=False,
            lock=True,
        ):
            slot = slots.setdefault(solution_id, {}).setdefault(position, [-1, {}])
            slot[0] = max(slot[0], alternative)
            if matchable:
                slot[1].setdefault(text, []).append((alternative, step_id))
        rows, step_rows = [], []
        step_ids = self.step_ids
        for parsed in fresh:
            if parsed.solution_hash in ids:
                continue
            pk = ids[parsed.solution_hash] = next(self.solution_ids)
            state = slots[pk] = {}
            if parsed.pre_generated is not None:
                steps, answer, score = parsed.pre_generated
                for position, text in enumerate(steps):
                    step_id = next(step_ids)
                    step_rows.append((step_id, pk, position, 0, text, Step.MODEL, None))
                    state[position] = [0, {text: [(0, step_id)]}]
                num_steps = len(steps)
            else:
                answer = score = None
                num_steps = len(parsed.positions)
            rows.append((
                pk, self.project.id, problems[parsed.problem_hash], answer, parsed.pre_generated is not None,
                self.generations.get(parsed.generation), None if score is None else float(score),
                parsed.is_quality_control, parsed.is_screening, num_steps, parsed.solution_hash,
            ))
        return ids, slots, rows, step_rows

    def _check_one_pass_per_labeler(self, fresh, solutions):
        # The model allows one assignment per (solution, annotator): say so at the line.
        taken = set()
        if self.existing_solutions:
            taken.update(
                self._select_in(
                    "SELECT solution_id, annotator_id FROM labeling_assignment "
                    "WHERE annotator_id IS NOT NULL AND solution_id {in}",
                    list(self.existing_solutions),
                    project=False,
                )
            )
        for parsed in fresh:
            if parsed.labeler is None:
                continue
            key = (solutions[parsed.solution_hash], self.annotators[parsed.labeler])
            if key in taken:
                raise FormatError(
                    "this labeler already has a record for the same solution (one pass per labeler)",
                    line=parsed.line,
                    field="labeler",
                )
            taken.add(key)

    def _record(self, parsed, solution_id, slots, assignment_rows, step_rows, rating_rows):
        step_ids, rating_ids = self.step_ids, self.rating_ids
        assignment_id = next(self.assignment_ids)
        assignment_rows.append((
            assignment_id, self.project.id, solution_id, self.annotators.get(parsed.labeler), Assignment.SUBMITTED,
            parsed.submitted_at, parsed.total_time, parsed.finish_reason, parsed.generation,
            parsed.is_quality_control, parsed.is_screening, parsed.source_hash, parsed.shape,
        ))
        state = slots.setdefault(solution_id, {})
        for position, (completions, human, chosen) in enumerate(parsed.positions):
            slot = state.get(position)
            if slot is None:
                slot = state[position] = [-1, {}]
            last = -1
            for index, (text, rating, flagged) in enumerate(completions or ()):
                step_id = None
                for alternative, candidate in slot[1].get(text, ()):
                    if alternative > last:
                        step_id = candidate
                        break
                if step_id is None:
                    alternative = slot[0] = slot[0] + 1
                    step_id = next(step_ids)
                    step_rows.append((step_id, solution_id, position, alternative, text, Step.MODEL, None))
                    slot[1].setdefault(text, []).append((alternative, step_id))
                last = alternative
                rating_rows.append((next(rating_ids), assignment_id, step_id, rating, flagged, index == chosen))
            if human is not None:
                text, rating, source, flagged = human
                alternative = slot[0] = slot[0] + 1
                step_id = next(step_ids)
                step_rows.append((step_id, solution_id, position, alternative, text, source, assignment_id))
                rating_rows.append((next(rating_ids), assignment_id, step_id, rating, flagged, chosen is None))

    def _select_in(self, sql, values, *, project=True, lock=False):
        """Rows of ``sql`` whose ``{in}`` matches any of ``values`` (after the project id).

        ``lock`` takes a key-share lock on the rows (PostgreSQL): new rows will point at them.
        """
        if not values:
            return []
        prefix = [self.project.id] if project else []
        with self.writer.raw_cursor() as cursor:
            if self.writer.postgres:
                sql += " FOR KEY SHARE" if lock else ""
                cursor.execute(sql.format(**{"in": "= ANY(%s)"}), prefix + [list(values)])
                return cursor.fetchall()
            rows = []
            for start in range(0, len(values), IN_BATCH):
                batch = list(values[start:start + IN_BATCH])
                cursor.execute(sql.format(**{"in": f"IN ({', '.join(['%s'] * len(batch))})"}), prefix + batch)
                rows.extend(cursor.fetchall())
            return rows
