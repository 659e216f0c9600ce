"""The annotator task queue: which solution a person rates next.

The assignment row is the lease: ``state='active'`` with ``lease_expires_at`` in the future
holds one of the solution's ``project.overlap`` slots; there is no separate lock table that
could go stale. A lapsed lease (active, ``lease_expires_at < now``) counts as free: whoever
next needs the slot marks it ``expired``. An expired assignment keeps its ratings; when its
owner comes back and the slot is still free, it is reactivated (see ``next_assignment`` and
``ensure_active``).

Concurrency. Every change to a solution's assignments (hand-out, reactivation, expiry,
submit, draft save) happens while holding that Solution row's lock (``SELECT ... FOR
UPDATE``), and ``Solution.live_assignments`` (active + submitted) is recounted under that
lock. Claimers lock candidate rows with ``skip_locked`` so they pass each other instead of
queueing. Blocking locks are taken only in this order, before any skip-locked one: the
annotator's own row (one person's tabs take turns), the solution of their own assignment,
a gold or screening solution; and whoever holds a solution lock never waits for another
solution's lock while holding it (a submit's quality-control follow-up writes only score and
standing rows, which nobody holding the annotator's lock waits for unless inserting the
annotator's first standing). That rules out deadlocks. On SQLite (the demo) row locks do not exist,
but settings open every transaction with ``BEGIN IMMEDIATE``, which serialises writers.

The counter is a hint for the index, the recount under the lock is the truth: work added
behind the queue's back (imports) makes the counter low, which the first claim corrects.
After deleting assignments by hand, run ``recount_live_assignments(project)``.

Cost. ``next`` runs on every task an annotator takes, so its fixed-shape statements are
written as SQL (the ``_SQL`` strings below; plain SQL that PostgreSQL and SQLite both take):
building them with the ORM cost several times what the database spends on them. On
PostgreSQL the common case (no own work to resume, no lapsed lease, a plain standing; gold
or not) goes further: the ``stepmark_hand_out`` function does the same steps in the same
lock order in one round trip, and returns the payload's steps with the hand-out; anything
else it declines and the Python path below runs. Nine statements and their BEGIN/COMMIT
become one call, and no solution lock is held across a round trip to the web process; what
that buys the loop is measured in docs/performance.md. ``STEPMARK_QUEUE_FUNCTIONS=0`` turns it off (and
submission's ``stepmark_lock_sheet``).

Where the hand-out rules live. Written here only (the function recognises the case and
declines): a paused annotator, the screening gate (``screening.work_gate``), own work to
resume (``_resume_own``), lapsed leases to reap (``_survey``, ``_reap_lapsed``), waiting for a
locked row (``_busy_candidate``); whether gold is due (``quality_control_due``) is drawn here
and handed to the function. Written twice, here (``_claim_gold``, ``_SQL_GOLD``, ``_claim_open``,
``_next_open``, ``_SQL_OPEN``, ``_count_live``, ``_hand_out``) and in the function: a random
unseen gold item when due (after lapsed leases are reaped, before ordinary work), the order, overlap,
never gold or screening or a solution the annotator had as ordinary work, a counter behind,
skipping locked rows. The function's body is one versioned file,
labeling/work/sql/stepmark_hand_out.v<n>.sql (the newest is what the database runs; the
migrations load the files); tests/labeling/work/test_queue_function.py runs one scenario per
rule, and random sessions, through both paths.

Order: solutions chosen by the PRM (newest generation first, then ``selection_rank``), then
the rest by queue key (a fixed scramble of the id: a problem's candidates are not served back
to back). Gold items come through ``_claim_gold`` at the project's rate, due by a draw from
server-side randomness per hand-out (``quality_control_due``), each annotator's in an order of
their own, and bypass overlap; a gold hand-out makes the same kind of statements as any other
(on PostgreSQL the function serves both). Screening items (``Solution.is_screening``) are never served from the main
queue: ``screening.work_gate`` (read under the annotator's lock) says whether the annotator
may work in the project at all and whether they are in screening, in which case
``_claim_screening`` serves the screening items in order and nothing else follows
(see labeling/quality/screening.py).
"""
import secrets
from datetime import timedelta

from django.conf import settings
from django.db import connection, transaction
from django.db.models import Count, Exists, OuterRef, Subquery
from django.db.models.functions import Coalesce
from django.utils import timezone

from labeling.models import Annotator, Assignment, Generation, Problem, Solution
from labeling.models.content import QUEUE_KEY_MODULUS, queue_key
from labeling.quality import screening
from labeling.work import rows

LIVE_STATES = (Assignment.ACTIVE, Assignment.SUBMITTED)
# What may change on an assignment while nobody holds its solution's lock; its project,
# solution and annotator never change.
MUTABLE_FIELDS = ("state", "last_activity_at", "lease_expires_at", "submitted_at", "total_time", "finish_reason",
                  "finish_note", "submit_key")
REAP_BATCH = 50
# Rounds of "everything open was locked by someone else: wait for them, look again".
MAX_ROUNDS = 50


def next_assignment(annotator, project, now=None):
    """Return the assignment ``annotator`` should work on next in ``project``, or None.

    The annotator's own unfinished assignment comes back first (lease renewed; an expired one
    only when its slot is still free). Otherwise, after lapsed leases are reaped, a gold item
    the annotator has not had when one is due (``quality_control_due``), else the first open
    solution in queue order that the annotator has never had.
    None when the project is inactive, the annotator is paused (everywhere, or in this project
    by ``screening.work_gate``: failed screening, paused by a lead or by their gold score), or
    nothing is left for them. An annotator in screening gets screening items only.
    """
    now = now or timezone.now()
    if not project.is_active:
        return None
    # One draw per request, whichever path serves it and however many rounds it takes: whether
    # gold is due, and where in queue-key order to look for a gold item (``_claim_gold``).
    gold_start = _draw.randrange(QUEUE_KEY_MODULUS) if quality_control_due(project.quality_control_rate) else None
    if uses_functions():
        handed = _hand_out_in_one(annotator, project, now, gold_start)
        if handed is not None:
            return handed
    for _ in range(MAX_ROUNDS):
        with transaction.atomic():
            # One person's tabs take turns, so nobody ends up holding two fresh assignments.
            row = _fetch(_SQL_PERSON + _lock(), [project.pk, annotator.pk])
            if not row:
                raise Annotator.DoesNotExist(f"No annotator {annotator.pk}.")
            status, project_state = row[0]
            if status != Annotator.ACTIVE:
                return None
            gate = screening.work_gate(annotator, project, now, state=project_state)
            if gate is None:
                return None
            own = _resume_own(annotator, project, now)
            if own is not None:
                return own
            if gate == screening.SCREENING:
                return _claim_screening(annotator, project, now)
            lapsed, generations = _survey(project, now)
            _reap_lapsed(lapsed, now)
            found = _claim_open(annotator, project, now, generations, gold_start)
            if found is not None:
                return found
            busy = _busy_candidate(annotator, project, now)
        if busy is None:
            return None
        _wait_for(busy)
    return None


def quality_control_due(rate):
    """Whether the hand-out being made should be gold: true with probability ``rate``.

    Drawn from the operating system's randomness, once per request: nothing an annotator
    sees or counts (their id, how many tasks they had, the time) says when gold comes, and
    two annotators' gold positions have nothing in common. Over n hand-outs that makes about
    n * rate gold items (while unseen ones are left).
    """
    return rate > 0 and _draw.random() < rate


_draw = secrets.SystemRandom()


def touch(assignment, now=None):
    """Renew the lease of an active assignment after activity (every draft save).

    The caller holds the solution's row lock (labeling/work/submission.py does).
    """
    now = now or timezone.now()
    assignment.last_activity_at = now
    assignment.lease_expires_at = now + timedelta(seconds=assignment.project.lease_seconds)
    Assignment.objects.filter(pk=assignment.pk).update(
        last_activity_at=assignment.last_activity_at, lease_expires_at=assignment.lease_expires_at
    )


def lock_solution(assignment):
    """Take the row lock of the assignment's solution and reload the assignment.

    Call inside ``transaction.atomic()`` before changing the assignment or its ratings.
    Only ``MUTABLE_FIELDS`` are reloaded (the rest cannot change), in a statement of its
    own after the lock: read together with the lock they could predate the lock holder's
    commit.
    """
    locked = rows.fetch_one(_SQL_SOLUTION + _lock(), [assignment.solution_id], Solution)
    if locked is None:
        raise Solution.DoesNotExist(f"Solution {assignment.solution_id} no longer exists.")
    fresh = rows.fetch_one(_SQL_RELOAD, [assignment.pk], (Assignment, _RELOADED))
    if fresh is None:
        raise Assignment.DoesNotExist(f"Assignment {assignment.pk} no longer exists.")
    for name in MUTABLE_FIELDS:
        setattr(assignment, name, getattr(fresh[0], name))
    return locked[0]


def ensure_active(assignment, solution, now=None):
    """Make ``assignment`` hold its slot again if it can; True when it is active.

    Active (even with a lapsed lease: nobody took the slot, or it would be expired) stays
    active. Expired comes back when the solution still has a free slot (gold and screening
    items always do). Submitted never. The caller holds the solution's lock.
    """
    now = now or timezone.now()
    if assignment.state == Assignment.ACTIVE:
        return True
    if assignment.state != Assignment.EXPIRED:
        return False
    if not _bypasses_overlap(solution):
        if _count_live(solution.pk, now) >= assignment.project.overlap:
            _recount_one(solution.pk)
            return False
    assignment.state = Assignment.ACTIVE
    assignment.save(update_fields=["state"])
    _recount_one(solution.pk)
    return True


def recount_live_assignments(project):
    """Set every solution's ``live_assignments`` from its assignments (repair after deletes)."""
    _recount(Solution.objects.filter(project=project).values("pk"))


# Internals -----------------------------------------------------------------------------


def _bypasses_overlap(solution):
    return solution.is_gold or solution.is_screening


def _renew(assignment, project, now):
    assignment.last_activity_at = now
    assignment.lease_expires_at = now + timedelta(seconds=project.lease_seconds)
    assignment.save(update_fields=["last_activity_at", "lease_expires_at"])
    return assignment


def _resume_own(annotator, project, now):
    # At most one candidate: holding one blocking solution lock at a time cannot deadlock.
    # The newest active one, else the expired one touched last whose slot is free.
    row = _fetch(_SQL_RESUME, [annotator.pk, project.pk, project.overlap])
    if not row:
        return None
    assignment_id, solution_id = row[0]
    solution = Solution.objects.select_for_update().get(pk=solution_id)
    mine = Assignment.objects.get(pk=assignment_id)  # read under the lock
    mine.project, mine.solution = project, solution
    if not ensure_active(mine, solution, now):
        return None
    return _renew(mine, project, now)


def _survey(project, now):
    """``(lapsed, generations)``: up to ``REAP_BATCH`` solutions with a lapsed lease, and ``_generations``.

    One statement for both: a hand-out reads them every time, and each round trip costs the
    web process and the database more than the reading does.
    """
    found = _fetch(_SQL_SURVEY, [project.pk, project.pk, _when(now), REAP_BATCH])
    lapsed = [pk for lapse, pk, number in found if lapse]
    generations = sorted(((pk, number) for lapse, pk, number in found if not lapse), key=lambda g: -g[1])
    return lapsed, generations + [(None, None)]


def _reap_lapsed(ids, now):
    """Mark the lapsed leases of solutions ``ids`` expired, where nobody holds the solution."""
    if not ids:
        return
    locked = list(
        Solution.objects.filter(pk__in=ids).select_for_update(skip_locked=True).values_list("pk", flat=True)
    )
    if locked:
        _expire_lapsed(locked, now)
        _recount(locked)


def _expire_lapsed(solution_ids, now):
    Assignment.objects.filter(
        solution_id__in=solution_ids, state=Assignment.ACTIVE, lease_expires_at__lt=now
    ).update(state=Assignment.EXPIRED)


def _count_live(solution_id, now):
    """Live assignments of the solution, after marking its lapsed leases expired (caller holds the lock)."""
    ((live, lapsed),) = _fetch(_SQL_COUNT_LIVE, [_when(now), solution_id])
    if lapsed:
        _expire_lapsed([solution_id], now)
    return live - lapsed


def _recount(solution_ids):
    live = (
        Assignment.objects.filter(solution=OuterRef("pk"), state__in=LIVE_STATES)
        .order_by()
        .values("solution")
        .annotate(n=Count("pk"))
        .values("n")
    )
    Solution.objects.filter(pk__in=solution_ids).update(live_assignments=Coalesce(Subquery(live), 0))


def _recount_one(solution_id):
    _execute(_SQL_RECOUNT_ONE, [solution_id])


def _generations(project):
    """(generation id or None, number) in queue order: newest first, unselected last."""
    return _fetch(_SQL_GENERATIONS, [project.pk]) + [(None, None)]


def _open_solutions(annotator, project, generation_id, level, columns, join=""):
    """Ordinary solutions of one generation holding ``level`` live assignments, in queue order.

    One counter value at a time, so that solution_open_idx (project, generation,
    live_assignments, selection_rank, id) hands rows over in order: no sort of the open set,
    no walk over the full ones. Returns ``(sql, params)`` selecting ``columns`` (of the
    solution ``s`` and what ``join`` adds).
    """
    generation = "s.generation_id IS NULL" if generation_id is None else "s.generation_id = %s"
    params = [project.pk, *([] if generation_id is None else [generation_id]), level, annotator.pk]
    return _SQL_OPEN.format(columns=columns, join=join, generation=generation), params


def _levels(annotator, project, generation_id):
    """The counter values with open work for the annotator in a generation, the one whose head
    comes first in queue order first; empty when the generation has nothing open for them.

    Read even with one counter value (overlap 1): whether any ordinary work is open decides
    whether a due gold item may be served (``_claim_open``), and a gold and an ordinary
    hand-out must make the same statements.
    """
    # Look (without locking) at the head of each counter value, all in one statement (each
    # part a subquery: SQLite takes no parenthesised SELECT in a compound); take the earliest first.
    parts, params = [], []
    for level in range(project.overlap):
        sql, part_params = _open_solutions(annotator, project, generation_id, level,
                                           f"{level} AS level, s.selection_rank, {_QUEUE_KEY}")
        parts.append(f"SELECT * FROM ({sql}) h{level}")
        params += part_params
    heads = _fetch(" UNION ALL ".join(parts), params)
    return [level for level, rank, key in sorted(heads, key=lambda h: (h[1] is None, h[1] or 0, h[2]))]


def _next_open(annotator, project, generation_id, levels):
    """Lock the first open solution of a generation in queue order, passing locked rows."""
    for level in levels:
        # With the problem, which the hand-out's payload shows (only the solution is locked).
        sql, params = _open_solutions(annotator, project, generation_id, level, _CANDIDATE_COLUMNS, _CANDIDATE_JOIN)
        found = rows.fetch_one(sql + _lock(skip_locked=True), params, (Solution, _CANDIDATE), (Problem, _PROBLEM))
        if found is not None:
            candidate, candidate.problem = found
            return candidate
    return None


def _claim_open(annotator, project, now, generations, gold_start=None):
    """Hand out the first open solution in queue order, or, when gold is due (``gold_start``),
    a gold item tried in place of the first candidate: up to there a gold hand-out makes the
    statements of an ordinary one, so its time does not tell.

    Gold is served only where ordinary work is open for the annotator: with none left, the
    answer is "no work" whatever the draw, so an empty queue is never followed by gold (a
    hand-out after a 204 would otherwise be gold every time)."""
    for generation_id, number in generations:
        while True:
            levels = _levels(annotator, project, generation_id)
            if not levels:
                break  # nothing open here for them: the next generation
            if gold_start is not None:
                gold, gold_start = _claim_gold(annotator, project, now, gold_start), None
                if gold is not None:
                    return gold
            candidate = _next_open(annotator, project, generation_id, levels)
            if candidate is None:
                break
            live = _count_live(candidate.pk, now)
            if live < project.overlap:
                return _hand_out(annotator, project, candidate, number, now, live=live)
            # The counter was behind (work added outside the queue): correct it, look again.
            Solution.objects.filter(pk=candidate.pk).update(live_assignments=live)
    return None


def _claim_screening(annotator, project, now):
    item = screening.next_screening_item(annotator, project)
    if item is None:
        return None
    # Blocking is safe here: this transaction holds no other solution's lock yet, and whoever
    # holds a screening row's lock waits for nothing else.
    item = Solution.objects.select_for_update().get(pk=item.pk)
    number = Generation.objects.filter(pk=item.generation_id).values_list("number", flat=True).first()
    return _hand_out(annotator, project, item, number, now)


def _claim_gold(annotator, project, now, start):
    """Hand out a random gold item the annotator has not had, or None when none is left.

    The first such item from the random point ``start`` in queue-key order, wrapping round to
    the lowest key, found and locked in one statement (``_SQL_GOLD``): two probes of
    solution_gold_idx however many gold items there are (a random sort of them all made gold
    hand-outs measurably slower than ordinary ones). Then the steps
    of ordinary work (``_claim_open``): ``_count_live`` (gold bypasses overlap, but its counter
    is kept) and ``_hand_out``. Blocking on the lock is safe: this transaction holds no other
    solution's lock yet, and whoever holds a gold row's lock waits for nothing else.
    """
    found = rows.fetch_one(_SQL_GOLD + _lock(of="s"), [project.pk, start, annotator.pk, project.pk, annotator.pk],
                           (Solution, _CANDIDATE), (Problem, _PROBLEM), extra=1)
    if found is None:
        return None
    gold, gold.problem, number = found
    return _hand_out(annotator, project, gold, number, now, live=_count_live(gold.pk, now))


def _hand_out(annotator, project, solution, generation_number, now, live=None):
    """Create the active assignment of ``annotator`` on the locked ``solution`` and recount it.

    ``live``: the solution's live assignments counted under the lock (``_count_live``), so the
    new count is known without counting again; on PostgreSQL the insert and the counter's
    update then go in one statement.
    """
    assignment = Assignment(
        project=project,
        solution=solution,
        annotator=annotator,
        state=Assignment.ACTIVE,
        created_at=now,
        handed_out_at=now,
        last_activity_at=now,
        lease_expires_at=now + timedelta(seconds=project.lease_seconds),
        generation=generation_number,
        is_quality_control=solution.is_gold,
        is_screening=solution.is_screening,
    )
    if not connection.features.can_return_columns_from_insert:  # SQLite before 3.35
        assignment.save(force_insert=True)
        _recount_one(solution.pk)
        return assignment
    # Written SQL, not save(): no signal listens to a hand-out (stats_cache only to submits).
    params = [project.pk, solution.pk, annotator.pk, *[_when(now)] * 3, _when(assignment.lease_expires_at),
              generation_number, solution.is_gold, solution.is_screening]
    if live is not None and connection.vendor == "postgresql":
        ((assignment.pk,),) = _fetch(_SQL_RECOUNTED + _SQL_HAND_OUT, [live + 1, solution.pk, *params])
    else:
        ((assignment.pk,),) = _fetch(_SQL_HAND_OUT, params)
        _recount_one(solution.pk)
    assignment._state.adding, assignment._state.db = False, connection.alias
    return assignment


def uses_functions():
    """True where the queue's PostgreSQL functions (labeling/work/sql/) serve the loop."""
    return connection.vendor == "postgresql" and settings.STEPMARK_QUEUE_FUNCTIONS


def _hand_out_in_one(annotator, project, now, gold_start):
    """The common hand-out in one round trip (``stepmark_hand_out``, labeling/work/sql/), or None.

    None means the function saw something it leaves to the full path (own work to resume,
    screening, lapsed leases, a paused annotator, nothing open that nobody holds), and the
    full path runs as if the function had not been asked. A gold item (``gold_start`` not
    None: drawn by the caller) is handed out here like any other. The assignment comes back as
    ``_hand_out`` builds it, with the payload's step rows attached (``payload_rows``), so the
    response reads nothing more.
    """
    lease = now + timedelta(seconds=project.lease_seconds)
    found = _fetch(_SQL_HAND_OUT_FUNCTION, [project.pk, annotator.pk, now, lease, project.overlap,
                                            project.requires_screening, gold_start])
    if not found:
        return None
    assignment_id, solution_id, problem_id, generation_id, number, is_gold, problem_text, answer = found[0][:8]
    solution = Solution.from_db(connection.alias, ["id", "problem_id", "generation_id", "is_gold", "is_screening"],
                                [solution_id, problem_id, generation_id, is_gold, False])
    solution.problem = Problem.from_db(connection.alias, ["id", "problem", "ground_truth_answer"],
                                       [problem_id, problem_text, answer])
    assignment = Assignment(
        pk=assignment_id, project=project, solution=solution, annotator=annotator, state=Assignment.ACTIVE,
        created_at=now, handed_out_at=now, last_activity_at=now, lease_expires_at=lease, generation=number,
        is_quality_control=is_gold, is_screening=False,
    )
    assignment._state.adding, assignment._state.db = False, connection.alias
    # In _SQL_PAYLOAD's shape (labelling_serializers): a new assignment has no ratings.
    assignment.payload_rows = [(*row[8:], None, None, None) for row in found[1:]]
    return assignment


def _busy_candidate(annotator, project, now):
    """A solution with work for ``annotator`` that another transaction holds locked, or None."""
    for generation_id, _ in _generations(project):
        for level in range(project.overlap):
            sql, params = _open_solutions(annotator, project, generation_id, level, "s.id")
            row = _fetch(sql, params)
            if row:
                return row[0][0]
    seen = Assignment.objects.filter(solution=OuterRef("solution_id"), annotator=annotator)
    return (
        Assignment.objects.filter(
            project=project,
            state=Assignment.ACTIVE,
            lease_expires_at__lt=now,
            solution__is_gold=False,
            solution__is_screening=False,
        )
        .filter(~Exists(seen))
        .values_list("solution_id", flat=True)
        .first()
    )


def _wait_for(solution_id):
    """Block until whoever holds the solution's lock commits (holding no other lock)."""
    with transaction.atomic():
        list(Solution.objects.filter(pk=solution_id).select_for_update().values_list("pk"))


# SQL -------------------------------------------------------------------------------------

# The queue's last key (labeling/models/content.py) as written in a statement with
# parameters, where "%" is written "%%".
_QUEUE_KEY = queue_key("s.id").replace("%", "%%")

_ACTIVE, _EXPIRED, _SUBMITTED = f"'{Assignment.ACTIVE}'", f"'{Assignment.EXPIRED}'", f"'{Assignment.SUBMITTED}'"

# The annotator's status and their standing in the project (None: no row), to lock.
_SQL_PERSON = """SELECT a.status, (SELECT st.state FROM labeling_annotatorprojectstatus st
    WHERE st.annotator_id = a.id AND st.project_id = %s) FROM labeling_annotator a WHERE a.id = %s"""

# The state IN (...) is implied by the rest; it lets PostgreSQL read an index by state with a
# plain scan, which skips entries of submitted rows once seen (migration 0011 says why).
_SQL_RESUME = f"""SELECT a.id, a.solution_id FROM labeling_assignment a
    JOIN labeling_solution s ON s.id = a.solution_id
    WHERE a.annotator_id = %s AND a.project_id = %s AND a.state IN ({_ACTIVE}, {_EXPIRED}) AND (a.state = {_ACTIVE}
        OR (a.state = {_EXPIRED} AND (s.live_assignments < %s OR s.is_gold OR s.is_screening)))
    ORDER BY CASE WHEN a.state = {_ACTIVE} THEN 0 ELSE 1 END, CASE WHEN a.state = {_ACTIVE} THEN a.id END DESC,
        a.last_activity_at DESC NULLS LAST, a.id DESC
    LIMIT 1"""

_SQL_SOLUTION = f"SELECT {rows.columns(Solution, 's')} FROM labeling_solution s WHERE s.id = %s"

_RELOADED = ("id", *MUTABLE_FIELDS)
_SQL_RELOAD = f"SELECT {rows.columns(Assignment, 'a', _RELOADED)} FROM labeling_assignment a WHERE a.id = %s"

# (0, generation id, number) per generation and (1, solution id, NULL) per solution with a
# lapsed lease (up to a limit).
_SQL_SURVEY = f"""SELECT 0, id, number FROM labeling_generation WHERE project_id = %s
    UNION ALL SELECT 1, solution_id, NULL FROM (SELECT DISTINCT solution_id FROM labeling_assignment
        WHERE project_id = %s AND state = {_ACTIVE} AND lease_expires_at < %s LIMIT %s) lapsed"""

_SQL_HAND_OUT = f"""INSERT INTO labeling_assignment (project_id, solution_id, annotator_id, state, created_at,
        handed_out_at, last_activity_at, lease_expires_at, finish_note, generation, is_quality_control, is_screening)
    VALUES (%s, %s, %s, {_ACTIVE}, %s, %s, %s, %s, '', %s, %s, %s) RETURNING id"""

# Prefixed to _SQL_HAND_OUT on PostgreSQL: the counter's new value set in the same statement.
_SQL_RECOUNTED = "WITH recounted AS (UPDATE labeling_solution SET live_assignments = %s WHERE id = %s) "

# (live, of which lapsed) assignments of one solution.
_SQL_COUNT_LIVE = f"""SELECT COUNT(*), COALESCE(SUM(CASE WHEN state = {_ACTIVE} AND lease_expires_at < %s
    THEN 1 ELSE 0 END), 0) FROM labeling_assignment WHERE solution_id = %s AND state IN ({_ACTIVE}, {_SUBMITTED})"""

_SQL_RECOUNT_ONE = f"""UPDATE labeling_solution SET live_assignments = (SELECT COUNT(*) FROM labeling_assignment a
    WHERE a.solution_id = labeling_solution.id AND a.state IN ({_ACTIVE}, {_SUBMITTED})) WHERE id = %s"""

_SQL_GENERATIONS = "SELECT id, number FROM labeling_generation WHERE project_id = %s ORDER BY number DESC"

# The constant leading columns are in the ORDER BY too: PostgreSQL does not count
# "generation IS NULL" as an equality, and without them sorts the whole open set instead.
_SQL_OPEN = f"""SELECT {{columns}} FROM labeling_solution s {{join}}
    WHERE s.project_id = %s AND {{generation}} AND s.live_assignments = %s AND NOT s.is_gold AND NOT s.is_screening
        AND NOT EXISTS (SELECT 1 FROM labeling_assignment a WHERE a.solution_id = s.id AND a.annotator_id = %s)
    ORDER BY s.project_id, s.generation_id, s.live_assignments, s.selection_rank NULLS LAST, {_QUEUE_KEY}
    LIMIT 1"""

# What a hand-out and its payload read of the solution and its problem (the rest loads if
# asked for).
_CANDIDATE = ("id", "problem", "generation", "is_gold", "is_screening")
_PROBLEM = ("id", "problem", "ground_truth_answer")
_CANDIDATE_COLUMNS = f"{rows.columns(Solution, 's', _CANDIDATE)}, {rows.columns(Problem, 'pr', _PROBLEM)}"
_CANDIDATE_JOIN = "JOIN labeling_problem pr ON pr.id = s.problem_id"


# The first gold item of the project from a queue key on (else from the lowest) that the
# annotator has not had, with its problem and its generation's number: to lock (FOR UPDATE OF s).
# Each probe is a walk of solution_gold_idx; the outer query re-checks is_gold under the lock.
_GOLD_PROBE = f"""SELECT s.id FROM labeling_solution s
        WHERE s.project_id = %s AND s.is_gold AND NOT s.is_screening AND {_QUEUE_KEY} >= {{bound}}
            AND NOT EXISTS (SELECT 1 FROM labeling_assignment a WHERE a.solution_id = s.id AND a.annotator_id = %s)
        ORDER BY s.project_id, {_QUEUE_KEY} LIMIT 1"""
_SQL_GOLD = f"""SELECT {_CANDIDATE_COLUMNS}, (SELECT g.number FROM labeling_generation g WHERE g.id = s.generation_id)
    FROM labeling_solution s {_CANDIDATE_JOIN}
    WHERE s.is_gold AND s.id = (SELECT probe.id FROM (
        SELECT 0 AS part, id FROM ({_GOLD_PROBE.format(bound="%s")}) later
        UNION ALL SELECT 1 AS part, id FROM ({_GOLD_PROBE.format(bound="0")}) earlier) probe
        ORDER BY probe.part LIMIT 1)"""

_SQL_HAND_OUT_FUNCTION = "SELECT * FROM stepmark_hand_out(%s, %s, %s, %s, %s, %s, %s)"


def _lock(skip_locked=False, of=None):
    """The row-lock clause for the first table of a statement, or of the table aliased ``of``
    (none on SQLite: writers are serialised)."""
    if not connection.features.has_select_for_update:
        return ""
    if skip_locked:
        return " FOR UPDATE OF s SKIP LOCKED"
    return f" FOR UPDATE OF {of}" if of else " FOR UPDATE"


def _when(moment):
    return connection.ops.adapt_datetimefield_value(moment)


def _fetch(sql, params):
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.fetchall()


def _execute(sql, params):
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
