"""The annotator task queue: which solution a person rates next, and the lease that holds it.

The assignment row is the lease: ``state='active'`` with ``lease_expires_at`` in the future
holds one of the solution's ``project.overlap`` slots; there is no separate lock table that
could go stale. A lapsed lease (active, ``lease_expires_at < now``) counts as free: whoever
next needs the slot marks it ``expired``. An expired assignment keeps its ratings; when its
owner comes back and the slot is still free, it is reactivated (``ensure_active``).

Claiming follows Label Studio's ``next_task.py``: candidates are read in queue order and
locked with ``select_for_update(skip_locked=True)``, so claimers pass each other instead of
queueing. Unlike there, a lease cannot go stale: it is the assignment row itself, and
``Solution.live_assignments`` (active + submitted) is recounted under the solution's lock on
every change, and ``Solution.is_full`` written with it: full solutions leave the queue's index
(solution_open_idx), so open work is read in queue order in one scan. The counter is a hint for
the index, the recount under the lock is the truth: work added behind the queue's back makes the
counter low, which the first claim corrects. After deleting assignments by hand, run
``recount_live_assignments``.

Lock order (it rules out deadlocks). Blocking locks are taken only in this order, before any
skip-locked one: the annotator's own row (one person's tabs take turns), the solution of their
own assignment, a gold or screening solution; and whoever holds a solution lock never waits
for another solution's lock while holding it (a submit's quality-control follow-up writes only
score and standing rows). On SQLite (the demo) row locks do not exist, but settings open every
transaction with ``BEGIN IMMEDIATE``, which serialises writers.

Order: solutions chosen by the PRM (newest generation first, then ``selection_rank``), then
the rest by queue key (a fixed scramble of the id, so a problem's candidates are not served
back to back). Gold items bypass overlap and come at the project's rate, due by a draw from
server-side randomness per hand-out (``quality_control_due``), each annotator's from a random
point in queue-key order, and only where ordinary work is open for the annotator: with none
left the answer is "no work" whatever the draw (a hand-out after a 204 would otherwise be gold
every time). A gold hand-out makes the statements of an ordinary one, so its time does not
tell. Screening items never come from the main queue: ``screening.work_gate`` says whether the
annotator may work in the project and whether they are in screening, in which case
``_claim_screening`` serves screening items only (labeling/quality/screening.py).

Every hand-out says which rule served it in ``assignment.served_by`` (``SERVED_BY``), logged at
debug level for whoever investigates the queue; no annotator-facing answer carries it.
"""
import logging
import secrets
from datetime import timedelta

from django.db import transaction
from django.db.models import BigIntegerField, Count, Exists, F, Func, OuterRef, Subquery
from django.db.models.functions import Coalesce
from django.utils import timezone

from labeling.errors import DomainError
from labeling.models import Annotator, AnnotatorProjectStatus, Assignment, Generation, Solution
from labeling.models.content import QUEUE_KEY_MODULUS, QUEUE_KEY_MULTIPLIER
from labeling.models.projects import full_now
from labeling.models.prepared import first, prepared, prepared_update
from labeling.models.unique import unique_or_none
from labeling.quality import screening

from . import prelabels

log = logging.getLogger(__name__)

LIVE_STATES = (Assignment.ACTIVE, Assignment.SUBMITTED)
# What a hand-out reads of the solution it claims, and of its problem (the payload shows it).
CLAIMED_FIELDS = ("project_id", "problem_id", "generation_id", "is_gold", "is_screening", "num_steps",
                  "problem__problem", "problem__ground_truth_answer")
# What may change on an assignment while nobody holds its solution's lock; its project,
# solution and annotator never change.
MUTABLE_FIELDS = ("state", "last_activity_at", "lease_expires_at", "submitted_at", "total_time", "finish_reason",
                  "finish_note", "submit_key")
REAP_BATCH = 50
# Rounds of "everything open was locked by someone else: wait for them, look again".
MAX_ROUNDS = 50
# Why a hand-out was served (``assignment.served_by``).
SERVED_BY = ("resumed", "screening", "gold", "queue")



class _QueueKey(Func):
    """The queue key (labeling/models/content.py) with its constants written into the statement, as
    in solution_open_idx and solution_gold_idx: as parameters, PostgreSQL would not match the indexes."""

    template = f"((%(expressions)s * {QUEUE_KEY_MULTIPLIER}) %%%% {QUEUE_KEY_MODULUS})"
    output_field = BigIntegerField()


QUEUE_KEY = _QueueKey(F("id"))

LEASE_LOST = (
    "Your lease on this assignment expired and the solution went to another annotator; "
    "your ratings are kept, but this assignment can no longer change. Take the next task."
)


class LeaseLost(DomainError):
    """The assignment's lease lapsed and its slot went to someone else: it can no longer change."""

    def __init__(self):
        super().__init__(LEASE_LOST, status=409)


def next_assignment(annotator, project, now=None):
    """Return the assignment ``annotator`` should work on next in ``project``, or None.

    The annotator's own unfinished assignment comes back first (lease renewed; an expired one
    only when its slot is still free). Otherwise, after lapsed leases are reaped, a gold item
    the annotator has not had when one is due, else the first open solution in queue order
    that the annotator has never had. None when the project is inactive, the annotator is
    paused (everywhere, or in this project by ``screening.work_gate``: failed screening, paused
    by a lead or by their gold score), or nothing is left for them. An annotator in screening
    gets screening items only.
    """
    now = now or timezone.now()
    if not project.is_active:
        return None
    # One draw per request however many rounds it takes: whether gold is due, and where in
    # queue-key order a gold item is looked for (``_gold_beside_open``).
    gold = Gold(quality_control_due(project.quality_control_rate), _draw.randrange(QUEUE_KEY_MODULUS))
    for _ in range(MAX_ROUNDS):
        with transaction.atomic():
            found, busy = _one_round(annotator, project, now, gold)
        if found is not None:
            log.debug("assignment %s served by %s", found.pk, found.served_by)
            return found
        if busy is None:
            return None
        _wait_for(busy)
    return None


class Gold:
    """This request's draw: whether a gold item is ``due``, and the queue key its search ``start``s from."""

    def __init__(self, due, start):
        self.due, self.start = due, start


def _one_round(annotator, project, now, gold):
    """``(assignment, None)``, or ``(None, a solution another transaction holds)``, or ``(None, None)``."""
    # One person's tabs take turns, so nobody ends up holding two fresh assignments.
    row = first(_lock_annotator(annotator.pk, project.pk))
    if row is None:
        raise Annotator.DoesNotExist(f"No annotator {annotator.pk}.")
    status, state = row
    if status != Annotator.ACTIVE:
        return None, None
    gate = screening.work_gate(annotator, project, now, state=state)
    if gate is None:
        return None, None
    own = _resume_own(annotator, project, now)
    if own is not None:
        return _served(own, "resumed"), None
    if gate == screening.SCREENING:
        return _claim_screening(annotator, project, now), None
    _reap_lapsed(project, now)
    found = _claim_open(annotator, project, now, gold)
    if found is not None:
        return found, None
    return None, _busy_candidate(annotator, project, now)


@prepared
def _lock_annotator(annotator_id, project_id):
    """The annotator's status, locked, with their standing in the project: one statement, not two."""
    standing = Subquery(AnnotatorProjectStatus.objects.filter(annotator=OuterRef("pk"), project_id=project_id)
                        .values("state")[:1])
    return (Annotator.objects.select_for_update(of=("self",)).filter(pk=annotator_id)
            .values_list("status", standing).order_by()[:1])


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
    assignment.save(update_fields=["last_activity_at", "lease_expires_at"])


def lock_solution(assignment):
    """Take the row lock of the assignment's solution and reload what may have changed on the assignment.

    Call inside ``transaction.atomic()`` before changing the assignment or its ratings.
    ``MUTABLE_FIELDS`` are reloaded in a statement of their own after the lock: read together
    with the lock they could predate the lock holder's commit.
    """
    solution = first(_lock_solution(assignment.solution_id))
    if solution is None:
        raise Solution.DoesNotExist(f"Solution {assignment.solution_id} no longer exists.")
    mutable = first(_mutable_fields(assignment.pk))
    if mutable is None:
        raise Assignment.DoesNotExist(f"Assignment {assignment.pk} no longer exists.")
    for name, value in zip(MUTABLE_FIELDS, mutable):
        setattr(assignment, name, value)
    return solution


@prepared
def _lock_solution(solution_id):
    return Solution.objects.select_for_update().filter(pk=solution_id).order_by()[:1]


@prepared
def _mutable_fields(assignment_id):
    return Assignment.objects.filter(pk=assignment_id).values_list(*MUTABLE_FIELDS).order_by()[:1]


def require_lease(assignment, solution, now=None):
    """Raise ``LeaseLost`` unless ``assignment`` holds (or takes back) its slot; the caller holds the lock.

    The one place the lease decides a save or a submit (``ensure_active`` says how).
    """
    if not ensure_active(assignment, solution, now):
        raise LeaseLost()


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
    live = _count_live(solution.pk, now)
    if not _bypasses_overlap(solution) and live >= assignment.project.overlap:
        _set_live(solution.pk, live)
        return False
    assignment.state = Assignment.ACTIVE
    assignment.save(update_fields=["state"])
    _set_live(solution.pk, live + 1)
    return True


def recount_live_assignments(project):
    """Set every solution's ``live_assignments`` from its assignments (repair after deletes)."""
    live = (Assignment.objects.filter(solution=OuterRef("pk"), state__in=LIVE_STATES).order_by()
            .values("solution").annotate(n=Count("pk")).values("n"))
    solutions = Solution.objects.filter(project=project)
    solutions.update(live_assignments=Coalesce(Subquery(live), 0))
    solutions.update(is_full=full_now())


# Internals -----------------------------------------------------------------------------


def _served(assignment, why):
    assignment.served_by = why
    return assignment


def _bypasses_overlap(solution):
    return solution.is_gold or solution.is_screening


def _resume_own(annotator, project, now):
    """The annotator's own unfinished assignment in the project, lease renewed, or None.

    The active one touched last, else the expired one touched last whose slot is free. At most one
    candidate: holding one blocking solution lock at a time cannot deadlock.
    """
    # Read by annotator and state (assignment_annotator_idx) in every project, the project checked
    # here: with the project in the WHERE, PostgreSQL may read the project's index instead and walk
    # every assignment of the project, a little more with each hand-out, whenever its statistics
    # predate the project's work (a new project until the next ANALYZE; docs/performance.md). An
    # annotator holds few unfinished assignments, so the choice is made here, not in an ORDER BY.
    active, free = [], []
    for project_id, pk, solution_id, state, touched, live, gold, screening_item in _unfinished(annotator.pk):
        if project_id != project.pk:
            continue
        if state == Assignment.ACTIVE:
            # Touched last, not newest: a pass reopened by an undo (submission.unsubmit) comes back
            # before the task handed out after its submit.
            active.append((touched is not None, touched, pk, solution_id))
        elif live < project.overlap or gold or screening_item:
            free.append((touched is not None, touched, pk, solution_id))
    if not active and not free:
        return None
    assignment_id, solution_id = max(active)[2:] if active else max(free)[2:]
    solution = Solution.objects.select_for_update(of=("self",)).select_related("problem").get(pk=solution_id)
    assignment = Assignment.objects.get(pk=assignment_id)  # read under the lock
    assignment.project, assignment.solution = project, solution
    if not ensure_active(assignment, solution, now):
        return None
    assignment.last_activity_at = now
    assignment.lease_expires_at = now + timedelta(seconds=project.lease_seconds)
    assignment.save(update_fields=["last_activity_at", "lease_expires_at"])
    return assignment


@prepared
def _unfinished(annotator_id):
    return Assignment.objects.filter(annotator_id=annotator_id,
                                     state__in=(Assignment.ACTIVE, Assignment.EXPIRED)).values_list(
        "project_id", "pk", "solution_id", "state", "last_activity_at", "solution__live_assignments",
        "solution__is_gold", "solution__is_screening")


def _reap_lapsed(project, now):
    """Mark lapsed leases expired on up to ``REAP_BATCH`` solutions nobody holds."""
    lapsed = _lapsed(project.pk, now)
    if not lapsed:
        return
    locked = list(Solution.objects.filter(pk__in=lapsed).select_for_update(skip_locked=True)
                  .values_list("pk", flat=True))
    if not locked:
        return
    Assignment.objects.filter(solution_id__in=locked, state=Assignment.ACTIVE,
                              lease_expires_at__lt=now).update(state=Assignment.EXPIRED)
    live = (Assignment.objects.filter(solution=OuterRef("pk"), state__in=LIVE_STATES).order_by()
            .values("solution").annotate(n=Count("pk")).values("n"))
    Solution.objects.filter(pk__in=locked).update(live_assignments=Coalesce(Subquery(live), 0))
    Solution.objects.filter(pk__in=locked).update(is_full=full_now())


@prepared
def _lapsed(project_id, now):
    return (Assignment.objects.filter(project_id=project_id, state=Assignment.ACTIVE, lease_expires_at__lt=now)
            .values_list("solution_id", flat=True).distinct()[:REAP_BATCH])


def _count_live(solution_id, now):
    """Live assignments of the solution, after marking its lapsed leases expired (the caller holds its lock)."""
    live = _live(solution_id)
    lapsed = sum(1 for state, lease in live if state == Assignment.ACTIVE and lease < now)
    if lapsed:
        Assignment.objects.filter(solution_id=solution_id, state=Assignment.ACTIVE,
                                  lease_expires_at__lt=now).update(state=Assignment.EXPIRED)
    return len(live) - lapsed


@prepared
def _live(solution_id):
    return Assignment.objects.filter(solution_id=solution_id, state__in=LIVE_STATES).values_list(
        "state", "lease_expires_at")


@prepared_update
def _set_live(solution_id, live):
    return Solution.objects.filter(pk=solution_id), {"live_assignments": live, "is_full": full_now(live)}


def _generations(project):
    """``[(generation id or None, number)]`` in queue order: newest first, unselected last."""
    return [*_generation_rows(project.pk), (None, None)]


@prepared
def _generation_rows(project_id):
    return Generation.objects.filter(project_id=project_id).order_by("-number").values_list("id", "number")


def _open(annotator_id, project_id, generation_id):
    """Ordinary solutions of one generation with a free slot (by the counter) that the annotator
    never had, in queue order.

    solution_open_idx (project, generation, selection_rank, queue key), which holds only
    solutions that are not full, hands the rows over in order: no sort of the open set, no walk
    over the full ones. The leading columns are in the ORDER BY too: PostgreSQL does not count
    "generation IS NULL" as an equality, and without them sorts the whole open set. Within one
    generation every rank is set (a selection's) or none is (the unselected), so where a
    database puts NULL ranks does not matter.
    """
    return (_open_anywhere(annotator_id, project_id).filter(generation_id=generation_id)
            .order_by("project_id", "generation_id", "selection_rank", QUEUE_KEY))


def _open_anywhere(annotator_id, project_id):
    """Ordinary solutions of any generation with a free slot (by the counter) that the annotator never had."""
    seen = Assignment.objects.filter(solution=OuterRef("pk"), annotator_id=annotator_id)
    return (Solution.objects.filter(project_id=project_id, is_full=False, is_gold=False, is_screening=False)
            .filter(~Exists(seen)))


def _gold_beside_open(annotator_id, project_id, gold_start):
    """The gold item for this hand-out, where ordinary work is open for the annotator: one statement."""
    return Solution.objects.filter(pk=_gold_pick(annotator_id, project_id, gold_start)).filter(
        Exists(_open_anywhere(annotator_id, project_id)))


def _gold_pick(annotator_id, project_id, gold_start):
    """The first gold item the annotator has not had from the random point ``gold_start`` in
    queue-key order, wrapping round to the lowest key (two probes of solution_gold_idx however
    many gold items there are)."""
    unseen = _unseen_gold(annotator_id, project_id)
    return Coalesce(Subquery(unseen.filter(key__gte=gold_start)[:1]), Subquery(unseen[:1]))


def _unseen_gold(annotator_id, project_id):
    seen = Assignment.objects.filter(solution=OuterRef("pk"), annotator_id=annotator_id)
    return (Solution.objects.filter(project_id=project_id, is_gold=True, is_screening=False).filter(~Exists(seen))
            .alias(key=QUEUE_KEY).order_by("project_id", "key").values("pk"))


def _claim_open(annotator, project, now, gold):
    """Hand out the first open solution in queue order, or, when gold is due, a gold item in its
    place (``_gold_beside_open``). Gold is served only where ordinary work is open: with none
    left the answer is "no work" whatever the draw."""
    generations = _generations(project)  # read first either way: gold and ordinary make the same statements
    if gold.due:
        # Blocking is safe: this transaction holds no other solution's lock yet, and whoever
        # holds a gold row's lock waits for nothing else.
        found = first(_claim_gold(annotator.pk, project.pk, gold.start))
        if found is not None:
            number = dict(generations).get(found.generation_id)
            return _served(_hand_out(annotator, project, found, number, now, _count_live(found.pk, now)), "gold")
    for generation_id, number in generations:
        for _ in range(MAX_ROUNDS):
            candidate = first(_claim_ordinary(annotator.pk, project.pk, generation_id, gold.start,
                                              project.quality_control_rate > 0))
            if candidate is None:
                break  # nothing open here for them, or all of it held: the next generation
            live = _count_live(candidate.pk, now)
            if live < project.overlap:
                return _served(_hand_out(annotator, project, candidate, number, now, live), "queue")
            # The counter was behind (work added outside the queue): correct it (the solution
            # leaves the open index), look again.
            _set_live(candidate.pk, live)
    return None


@prepared
def _claim_gold(annotator_id, project_id, gold_start):
    return _lock(_gold_beside_open(annotator_id, project_id, gold_start), skip_locked=False)


@prepared
def _claim_ordinary(annotator_id, project_id, generation_id, gold_start, look_for_gold):
    # Rows other claimers hold are passed (they are taking them), as in Label Studio.
    candidates = _open(annotator_id, project_id, generation_id)
    if look_for_gold:
        # The gold item is looked for here too, and not taken: the ordinary claim then builds
        # and runs what the gold one does (``_gold_beside_open``: the pick and a scan of the open
        # work), so neither its statements nor its time tell them apart.
        candidates = candidates.annotate(gold_pick=_gold_pick(annotator_id, project_id, gold_start))
    return _lock(candidates, skip_locked=True)


def _lock(solutions, skip_locked):
    """The first of ``solutions`` locked (only the solution row), with its problem (the payload shows
    it): the one claim statement of every hand-out, gold or ordinary. Its generation's number comes
    from ``_generations``, read before."""
    return (solutions.select_related("problem").only(*CLAIMED_FIELDS)
            .select_for_update(skip_locked=skip_locked, of=("self",))[:1])


def _claim_screening(annotator, project, now):
    item = screening.next_screening_item(annotator, project)
    if item is None:
        return None
    # Blocking is safe here: this transaction holds no other solution's lock yet, and whoever
    # holds a screening row's lock waits for nothing else.
    item = Solution.objects.select_for_update(of=("self",)).select_related("problem").get(pk=item.pk)
    number = unique_or_none(Generation.objects.filter(pk=item.generation_id).values_list("number", flat=True))
    return _served(_hand_out(annotator, project, item, number, now, _count_live(item.pk, now)), "screening")


def _hand_out(annotator, project, solution, generation_number, now, live):
    """Create the active assignment of ``annotator`` on the locked ``solution``; ``live``: its live
    assignments counted under the lock (``_count_live``), so the new count needs no recount."""
    assignment = Assignment.objects.create(
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
        # Drawn for every hand-out, gold or not, as gold's own draw is (``quality_control_due``).
        **prelabels.policy_at_hand_out(project, solution, _draw.random()),
    )
    _set_live(solution.pk, live + 1)
    return assignment


def _busy_candidate(annotator, project, now):
    """A solution with work for ``annotator`` that another transaction holds locked, or None."""
    for generation_id, _ in _generations(project):
        found = _open(annotator.pk, project.pk, generation_id).values_list("pk", flat=True).first()
        if found is not None:
            return found
    seen = Assignment.objects.filter(solution=OuterRef("solution_id"), annotator=annotator)
    return (
        Assignment.objects.filter(project=project, state=Assignment.ACTIVE, lease_expires_at__lt=now,
                                  solution__is_gold=False, solution__is_screening=False)
        .filter(~Exists(seen))
        .values_list("solution_id", flat=True)
        .first()
    )


def _wait_for(solution_id):
    """Block until whoever holds the solution's lock commits (holding no other lock)."""
    with transaction.atomic():
        list(Solution.objects.filter(pk=solution_id).select_for_update().values_list("pk"))
