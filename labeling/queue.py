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

Order: solutions chosen by the PRM (newest generation first, then ``selection_rank``), then
the rest by id. Gold items come through ``pick_quality_control`` at the project's rate and
bypass overlap. Screening items (``Solution.is_screening``) are never served from the main
queue: ``screening.work_gate`` (read under the annotator's lock) says whether the annotator
may work in the project at all and whether they are in screening, in which case
``pick_quality_control`` serves the screening items in order and nothing else follows
(see labeling/screening.py).
"""
import hashlib
import math
from datetime import timedelta

from django.db import transaction
from django.db.models import Count, Exists, F, OuterRef, Q, Subquery
from django.db.models.functions import Coalesce
from django.utils import timezone

from . import screening
from .models import Annotator, Assignment, Generation, Solution

LIVE_STATES = (Assignment.ACTIVE, Assignment.SUBMITTED)
REAP_BATCH = 50
# Rounds of "everything open was locked by someone else: wait for them, look again".
MAX_ROUNDS = 50


def next_assignment(annotator, project, now=None):
    """Return the assignment ``annotator`` should work on next in ``project``, or None.

    The annotator's own unfinished assignment comes back first (lease renewed; an expired one
    only when its slot is still free). Otherwise a gold item when ``pick_quality_control``
    says so, else the first open solution in queue order that the annotator has never had.
    None when the project is inactive, the annotator is paused (everywhere, or in this project
    by ``screening.work_gate``: failed screening, paused by a lead or by their gold score), or
    nothing is left for them. An annotator in screening gets screening items only.
    """
    now = now or timezone.now()
    if not project.is_active:
        return None
    for _ in range(MAX_ROUNDS):
        with transaction.atomic():
            # One person's tabs take turns, so nobody ends up holding two fresh assignments.
            person = (
                Annotator.objects.select_for_update(of=("self",))
                .annotate(project_state=screening.state_subquery(project))
                .get(pk=annotator.pk)
            )
            if person.status != Annotator.ACTIVE:
                return None
            gate = screening.work_gate(person, project, now, state=person.project_state)
            if gate is None:
                return None
            own = _resume_own(person, project, now)
            if own is not None:
                return own
            in_screening = gate == screening.SCREENING
            gold = _claim_quality_control(person, project, now, in_screening)
            if gold is not None or in_screening:
                return gold
            _reap_lapsed(project, now)
            found = _claim_open(person, project, now)
            if found is not None:
                return found
            busy = _busy_candidate(person, project, now)
        if busy is None:
            return None
        _wait_for(busy)
    return None


def pick_quality_control(annotator, project, in_screening=False):
    """Return a gold Solution to serve now, or None: the quality-control hook.

    In screening (``in_screening``), the next screening item the annotator has not had.
    Otherwise gold is due on about ``project.quality_control_rate`` of an annotator's
    hand-outs, deterministically from their uuid and how many assignments they have in the
    project (so tests and leads can predict it, and annotators are not all served gold at the
    same moment). The item is the lowest-id gold solution the annotator has not seen;
    screening items are left out.
    """
    if in_screening:
        return screening.next_screening_item(annotator, project)
    rate = project.quality_control_rate
    if rate <= 0:
        return None
    count = Assignment.objects.filter(annotator=annotator, project=project).count()
    if not quality_control_due(annotator, count, rate):
        return None
    seen = Assignment.objects.filter(solution=OuterRef("pk"), annotator=annotator)
    return (
        Solution.objects.filter(project=project, is_gold=True, is_screening=False)
        .filter(~Exists(seen))
        .order_by("pk")
        .first()
    )


def quality_control_due(annotator, count, rate):
    """True when hand-out number ``count`` (0-based) of ``annotator`` should be gold.

    Spreads ``rate`` evenly: over n hand-outs the annotator gets n * rate gold items, give or
    take one, starting at a phase taken from their uuid.
    """
    phase = int(hashlib.sha256(str(annotator.uuid).encode()).hexdigest()[:8], 16) / 2**32
    return math.floor((count + 1) * rate + phase) > math.floor(count * rate + phase)


def touch(assignment, now=None):
    """Renew the lease of an active assignment after activity (every draft save).

    The caller holds the solution's row lock (labeling/labelling.py does).
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
    """
    solution = Solution.objects.select_for_update().get(pk=assignment.solution_id)
    assignment.refresh_from_db()
    return solution


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
        _expire_lapsed([solution.pk], now)
        if _count_live(solution.pk) >= assignment.project.overlap:
            _recount([solution.pk])
            return False
    assignment.state = Assignment.ACTIVE
    assignment.save(update_fields=["state"])
    _recount([solution.pk])
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
    mine = (
        Assignment.objects.filter(annotator=annotator, project=project, state=Assignment.ACTIVE)
        .order_by("-pk")
        .first()
    )
    if mine is None:
        slot_free = (
            Q(solution__live_assignments__lt=project.overlap) | Q(solution__is_gold=True) | Q(solution__is_screening=True)
        )
        mine = (
            Assignment.objects.filter(annotator=annotator, project=project, state=Assignment.EXPIRED)
            .filter(slot_free)
            .order_by(F("last_activity_at").desc(nulls_last=True), "-pk")
            .first()
        )
    if mine is None:
        return None
    solution = lock_solution(mine)
    mine.project, mine.solution = project, solution
    if not ensure_active(mine, solution, now):
        return None
    return _renew(mine, project, now)


def _reap_lapsed(project, now):
    lapsed = (
        Assignment.objects.filter(project=project, state=Assignment.ACTIVE, lease_expires_at__lt=now)
        .order_by()
        .values_list("solution_id", flat=True)
        .distinct()[:REAP_BATCH]
    )
    ids = list(lapsed)
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


def _count_live(solution_id):
    return Assignment.objects.filter(solution_id=solution_id, state__in=LIVE_STATES).count()


def _recount(solution_ids):
    live = (
        Assignment.objects.filter(solution=OuterRef("pk"), state__in=LIVE_STATES)
        .order_by()
        .values("solution")
        .annotate(n=Count("pk"))
        .values("n")
    )
    Solution.objects.filter(pk__in=solution_ids).update(live_assignments=Coalesce(Subquery(live), 0))


def _generations(project):
    """(generation id or None, number) in queue order: newest first, unselected last."""
    rows = list(Generation.objects.filter(project=project).order_by("-number").values_list("pk", "number"))
    return rows + [(None, None)]


def _open_solutions(annotator, project, generation_id, level):
    """Ordinary solutions of one generation holding ``level`` live assignments, in queue order.

    One counter value at a time, so that solution_open_idx (project, generation,
    live_assignments, selection_rank, id) hands rows over in order: no sort of the open set,
    no walk over the full ones.
    """
    seen = Assignment.objects.filter(solution=OuterRef("pk"), annotator=annotator)
    open_ = Solution.objects.filter(
        project=project, is_gold=False, is_screening=False, live_assignments=level
    ).filter(~Exists(seen))
    if generation_id is None:
        open_ = open_.filter(generation__isnull=True)
    else:
        open_ = open_.filter(generation_id=generation_id)
    # The constant leading columns are named too: PostgreSQL does not count "generation IS
    # NULL" as an equality, and without them sorts the whole open set instead.
    return open_.order_by(
        "project_id", "generation_id", "live_assignments", F("selection_rank").asc(nulls_last=True), "pk"
    )


def _next_open(annotator, project, generation_id):
    """Lock the first open solution of a generation in queue order, passing locked rows."""
    levels = list(range(project.overlap))
    if len(levels) > 1:
        # Look (without locking) at the head of each counter value; take the earliest first.
        heads = []
        for level in levels:
            head = _open_solutions(annotator, project, generation_id, level).values_list("selection_rank", "pk").first()
            if head is not None:
                heads.append(((head[0] is None, head[0] or 0, head[1]), level))
        levels = [level for _, level in sorted(heads)]
    for level in levels:
        candidate = (
            _open_solutions(annotator, project, generation_id, level).select_for_update(skip_locked=True).first()
        )
        if candidate is not None:
            return candidate
    return None


def _claim_open(annotator, project, now):
    for generation_id, number in _generations(project):
        while True:
            candidate = _next_open(annotator, project, generation_id)
            if candidate is None:
                break
            _expire_lapsed([candidate.pk], now)
            live = _count_live(candidate.pk)
            if live < project.overlap:
                return _hand_out(annotator, project, candidate, number, now)
            # The counter was behind (work added outside the queue): correct it, look again.
            Solution.objects.filter(pk=candidate.pk).update(live_assignments=live)
    return None


def _claim_quality_control(annotator, project, now, in_screening=False):
    gold = pick_quality_control(annotator, project, in_screening)
    if gold is None:
        return None
    # Blocking is safe here: this transaction holds no other solution's lock yet, and whoever
    # holds a gold row's lock waits for nothing else.
    gold = Solution.objects.select_for_update().get(pk=gold.pk)
    number = Generation.objects.filter(pk=gold.generation_id).values_list("number", flat=True).first()
    return _hand_out(annotator, project, gold, number, now)


def _hand_out(annotator, project, solution, generation_number, now):
    assignment = Assignment.objects.create(
        project=project,
        solution=solution,
        annotator=annotator,
        state=Assignment.ACTIVE,
        handed_out_at=now,
        last_activity_at=now,
        lease_expires_at=now + timedelta(seconds=project.lease_seconds),
        generation=generation_number,
        is_quality_control=solution.is_gold,
        is_screening=solution.is_screening,
    )
    _recount([solution.pk])
    return assignment


def _busy_candidate(annotator, project, now):
    """A solution with work for ``annotator`` that another transaction holds locked, or None."""
    for generation_id, _ in _generations(project):
        for level in range(project.overlap):
            pk = _open_solutions(annotator, project, generation_id, level).values_list("pk", flat=True).first()
            if pk is not None:
                return pk
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
