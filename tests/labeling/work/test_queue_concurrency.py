"""The queue under concurrent claimers, each on its own PostgreSQL connection.

Threads (and, in the last test, spawned processes) start together behind a barrier and
hammer ``next_assignment``; some submit, some walk away and let their lease lapse. The
invariants are then checked on the database: no solution ever holds more than ``overlap``
live assignments, nobody gets a solution twice, no assignment is handed to two people, and
every claimer who asked while work was left got some.
"""
import multiprocessing
import threading
from collections import Counter

import pytest
from django.db import connection, connections
from django.db.models import Count, Q

from labeling.models import Assignment, Solution
from labeling.work import queue, submission
from tests.factories import later, make_annotator, make_project, make_solution
from tests.labeling.work.queue_child import claim_until_empty

pytestmark = pytest.mark.django_db(transaction=True)


CLAIMERS = 32


def together(count, work):
    """Run ``work(i)`` in ``count`` threads started at once; return results, re-raise errors."""
    barrier = threading.Barrier(count)
    results, errors = [None] * count, []

    def body(i):
        try:
            barrier.wait()
            results[i] = work(i)
        except BaseException as exc:  # noqa: BLE001 - reported to the test below
            errors.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=body, args=(i,)) for i in range(count)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert not errors, errors
    return results


def over_full(project):
    """Ordinary solutions holding more live (active or submitted) assignments than the overlap."""
    return list(
        Solution.objects.filter(project=project, is_gold=False, is_screening=False)
        .annotate(n=Count("assignments", filter=Q(assignments__state__in=queue.LIVE_STATES)))
        .filter(n__gt=project.overlap)
        .values_list("pk", "n")
    )


def assert_invariants(project, handed):
    """``handed``: (annotator id, assignment) pairs as the claimers received them."""
    assert over_full(project) == []
    pairs = Counter(Assignment.objects.filter(project=project).values_list("solution_id", "annotator_id"))
    assert max(pairs.values()) == 1
    owner = {}
    for annotator_id, a in handed:
        assert owner.setdefault(a.pk, annotator_id) == annotator_id, "one assignment handed to two people"
        assert a.annotator_id == annotator_id
    stored = dict(Assignment.objects.filter(pk__in=owner).values_list("pk", "annotator_id"))
    assert stored == owner
    for solution in Solution.objects.filter(project=project):
        assert solution.live_assignments == solution.assignments.filter(state__in=queue.LIVE_STATES).count()


def test_concurrent_claims_submits_and_lapses_keep_every_invariant():
    project = make_project(overlap=2, lease_seconds=60)
    solutions = [make_solution(project, steps=1, rank=None) for _ in range(60)]
    people = [make_annotator() for _ in range(CLAIMERS + CLAIMERS // 2)]
    first, late = people[:CLAIMERS], people[CLAIMERS:]

    # Round 1: plenty of work (120 slots) for 32 claimers at once: everyone gets some.
    round1 = together(CLAIMERS, lambda i: queue.next_assignment(first[i], project, now=later(0)))
    assert all(a is not None for a in round1)
    handed = [(first[i].pk, a) for i, a in enumerate(round1)]
    assert_invariants(project, handed)

    # Half submit; the other half walk away and their leases lapse.
    stayers = range(0, CLAIMERS, 2)
    together(
        len(stayers),
        lambda k: submission.submit(round1[stayers[k]], finish_reason="give_up", note="n", now=later(1)),
    )

    # Round 2, after the lapse: the stayers and newcomers claim at once; all get work and
    # the lapsed slots are reused, never over-filled.
    round2_people = [first[i] for i in stayers] + late
    round2 = together(len(round2_people), lambda i: queue.next_assignment(round2_people[i], project, now=later(120)))
    assert all(a is not None for a in round2)
    handed += [(p.pk, a) for p, a in zip(round2_people, round2)]
    assert_invariants(project, handed)

    # Round 3: everyone drains the queue, submitting, while a watcher looks for over-full
    # solutions; the walkers-away come back too and find their old work or new work.
    seen_over_full, done = [], threading.Event()

    def watch():
        try:
            while not done.is_set():
                seen_over_full.extend(over_full(project))
        finally:
            connection.close()

    watcher = threading.Thread(target=watch)
    watcher.start()

    def drain(i):
        got = []
        while (a := queue.next_assignment(people[i], project, now=later(300))) is not None:
            got.append(a)
            submission.submit(a, finish_reason="give_up", note="n", now=later(300))
        return got

    try:
        drained = together(len(people), drain)
    finally:
        done.set()
        watcher.join(30)
    assert seen_over_full == []
    handed += [(people[i].pk, a) for i, got in enumerate(drained) for a in got]
    assert_invariants(project, handed)
    # Work remained until every slot was filled, and every claimer asked until told none.
    submitted = Counter(
        Assignment.objects.filter(project=project, state=Assignment.SUBMITTED).values_list("solution_id", flat=True)
    )
    assert all(submitted[s.pk] == 2 for s in solutions)
    assert not Assignment.objects.filter(project=project, state=Assignment.ACTIVE).exists()


def test_scarce_work_goes_to_exactly_as_many_claimers_as_there_are_slots():
    project = make_project(overlap=3, lease_seconds=60)
    solutions = [make_solution(project, steps=1) for _ in range(5)]
    people = [make_annotator() for _ in range(CLAIMERS)]
    got = together(CLAIMERS, lambda i: queue.next_assignment(people[i], project, now=later(0)))
    handed = [(people[i].pk, a) for i, a in enumerate(got) if a is not None]
    # 15 slots, 32 claimers: nobody asking while a slot was free went away empty-handed.
    assert len(handed) == 15
    assert Counter(a.solution_id for _, a in handed) == {s.pk: 3 for s in solutions}
    assert_invariants(project, handed)


def test_concurrent_gold_and_ordinary_claims_with_quality_control():
    project = make_project(overlap=1, lease_seconds=60, quality_control_rate=0.5)
    golds = {make_solution(project, steps=1, is_gold=True).pk for _ in range(2)}
    for _ in range(80):  # enough for every ordinary hand-out (at most 2 of 3 per person)
        make_solution(project, steps=1)
    people = [make_annotator() for _ in range(CLAIMERS)]

    def work(i):
        got = []
        for n in range(3):
            a = queue.next_assignment(people[i], project, now=later(n))
            got.append(a)
            submission.submit(a, finish_reason="give_up", note="n", now=later(n))
        return got

    results = together(CLAIMERS, work)
    handed = [(people[i].pk, a) for i, got in enumerate(results) for a in got]
    assert_invariants(project, handed)
    served_gold = [[a.solution_id for a in got if a.solution_id in golds] for got in results]
    # Each gold item at most once per person (gold bypasses overlap: several hold one at once).
    assert all(len(ids) == len(set(ids)) for ids in served_gold)
    # At rate 0.5 someone got gold (none at all: 1 in 2**(3 * CLAIMERS)).
    assert any(served_gold)
    ordinary = Counter(a.solution_id for _, a in handed if a.solution_id not in golds)
    assert max(ordinary.values()) == 1


def test_processes_draining_the_queue_never_share_a_slot():
    project = make_project(overlap=2, lease_seconds=60)
    solutions = [make_solution(project, steps=1) for _ in range(24)]
    people = [make_annotator() for _ in range(16)]
    database = connection.settings_dict["NAME"]
    connections.close_all()
    context = multiprocessing.get_context("spawn")
    out = context.Queue()
    args = lambda p: (p.pk, project.pk, database, later(0).timestamp(), out)  # noqa: E731
    # Daemonic, and killed on the way out: a stuck child must fail this test, not hang the run.
    children = [context.Process(target=claim_until_empty, args=args(p), daemon=True) for p in people]
    for child in children:
        child.start()
    try:
        reports = [out.get(timeout=120) for _ in children]
    finally:
        for child in children:
            child.join(30)
            if child.is_alive():
                child.kill()
    assert [error for _, _, error in reports if error] == []
    handed = [(annotator_id, Assignment.objects.get(pk=pk)) for annotator_id, got, _ in reports for pk in got]
    assert len(handed) == 48
    assert_invariants(project, handed)
    assert Counter(a.solution_id for _, a in handed) == {s.pk: 2 for s in solutions}
