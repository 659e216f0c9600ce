"""The hand-out function (migration 0007) does what the queue's Python path does.

``queue.next_assignment`` asks ``stepmark_hand_out`` first on PostgreSQL and runs its own
path when the function declines. These tests drive the same random session through both
(two identical projects, one per path) and compare every answer, check that the function
declines exactly the cases it leaves to Python without writing anything, and that its
hand-out answers the API's payload without another read.
"""
import random
import uuid
from datetime import timedelta

import pytest
from django.db import connection

from labeling.api.work_serializers import assignment_payload
from labeling.models import Assignment, Solution
from labeling.work import queue, submission
from tests.factories import NOW, make_annotator, make_project, make_solution

pytestmark = pytest.mark.django_db


def build(seed, annotators):
    """A project with two generations, unselected work and gold; its solutions in creation order.

    The same annotators work in both projects: when gold is due depends on who they are.
    """
    rng = random.Random(seed)
    project = make_project(overlap=2, lease_seconds=60, quality_control_rate=0.3)
    solutions = []
    for generation, ranks in ((1, [2, 1, None]), (2, [1, 3])):
        for rank in ranks:
            solutions.append(make_solution(project, steps=rng.randint(1, 4), alternatives={0: 1},
                                           generation=generation, rank=rank))
    solutions += [make_solution(project, steps=2) for _ in range(5)]
    solutions += [make_solution(project, steps=1, is_gold=True) for _ in range(2)]
    return project, solutions, annotators


def session(project, solutions, annotators, seed, calls=60):
    """Random next / submit / walk away over time; every answer in project-independent terms."""
    rng = random.Random(seed)
    index = {s.pk: i for i, s in enumerate(solutions)}
    answers = []
    for t in range(calls):
        now = NOW + timedelta(seconds=25 * t)  # leases of 60 s lapse after a few calls
        who = rng.randrange(len(annotators))
        got = queue.next_assignment(annotators[who], project, now=now)
        if got is None:
            answers.append((who, None))
            continue
        fresh = got.handed_out_at == now
        answers.append((who, index[got.solution_id], fresh, got.state, got.generation, got.is_quality_control,
                        got.lease_expires_at - now))
        if rng.random() < 0.6:
            submission.submit(got, finish_reason="give_up", note="n", now=now)
    stored = sorted(
        (annotators.index(next(a for a in annotators if a.pk == row["annotator_id"])), index[row["solution_id"]],
         row["state"], row["generation"], row["is_quality_control"])
        for row in Assignment.objects.filter(project=project).values(
            "annotator_id", "solution_id", "state", "generation", "is_quality_control")
    )
    counters = [Solution.objects.get(pk=s.pk).live_assignments for s in solutions]
    return answers, stored, counters


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_the_function_and_the_python_path_answer_the_same_session(seed, settings, monkeypatch):
    used = []
    original = queue._hand_out_in_one

    def counted(*args):
        found = original(*args)
        used.append(found is not None)
        return found

    monkeypatch.setattr(queue, "_hand_out_in_one", counted)
    # Fixed uuids: when gold is due follows the uuid, so random ones made the session (and
    # how often each path ran) differ from run to run.
    rng = random.Random(seed)
    annotators = [make_annotator(uuid=uuid.UUID(int=rng.getrandbits(128))) for _ in range(5)]
    settings.STEPMARK_QUEUE_FUNCTIONS = True
    with_function = session(*build(seed, annotators), seed=seed)
    settings.STEPMARK_QUEUE_FUNCTIONS = False
    without = session(*build(seed, annotators), seed=seed)
    assert with_function == without
    # The session exercised both: hand-outs by the function and cases it left to Python.
    assert sum(used) >= 10 and used.count(False) >= 10


def test_a_plain_hand_out_is_one_statement_and_its_payload_needs_no_read(django_assert_num_queries, settings):
    settings.STEPMARK_QUEUE_FUNCTIONS = True
    project = make_project(allow_alternatives=True)
    make_solution(project, steps=3, alternatives={1: 2})
    annotator = make_annotator()
    with django_assert_num_queries(1):
        got = queue.next_assignment(annotator, project, now=NOW)
        handed = assignment_payload(got)
    fresh = Assignment.objects.select_related("project", "solution__problem").get(pk=got.pk)
    assert handed == assignment_payload(fresh)
    assert [len(s["alternatives"]) for s in handed["steps"]] == [1, 3, 1]


def declines(annotator, project, now):
    """The function declines (no row) and writes nothing."""
    before = list(Assignment.objects.order_by("pk").values_list("pk", "state"))
    counters = list(Solution.objects.order_by("pk").values_list("pk", "live_assignments"))
    found = queue._hand_out_in_one(annotator, project, now)
    after = list(Assignment.objects.order_by("pk").values_list("pk", "state"))
    return found is None and before == after and counters == list(
        Solution.objects.order_by("pk").values_list("pk", "live_assignments"))


def test_the_function_leaves_resumes_gold_lapses_screening_and_pauses_to_python():
    project = make_project(overlap=3, lease_seconds=60)
    for _ in range(3):
        make_solution(project)
    ann = make_annotator()
    mine = queue._hand_out_in_one(ann, project, NOW)
    assert mine is not None
    assert declines(ann, project, NOW)  # own active work comes back through Python

    other = make_annotator()
    assert declines(other, project, NOW + timedelta(seconds=61))  # ann's lease lapsed: Python reaps it

    paused = make_annotator(status="paused")
    assert declines(paused, project, NOW)

    screened = make_project(requires_screening=True)
    make_solution(screened)
    assert declines(make_annotator(), screened, NOW)

    gold = make_project(quality_control_rate=1.0)
    make_solution(gold, is_gold=True)
    make_solution(gold)
    assert declines(make_annotator(), gold, NOW)


def test_nothing_open_declines_so_python_decides():
    project = make_project(overlap=1)
    make_solution(project)
    assert queue._hand_out_in_one(make_annotator(), project, NOW) is not None
    assert declines(make_annotator(), project, NOW)


def test_the_function_exists_only_on_postgresql():
    assert connection.vendor == "postgresql"
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM pg_proc WHERE proname = 'stepmark_hand_out'")
        assert cursor.fetchone()[0] == 1


def test_the_function_keeps_one_plan_per_statement():
    """Without it PL/pgSQL re-plans the counter-heads statement on every hand-out (migration 0011)."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT proconfig FROM pg_proc WHERE proname = 'stepmark_hand_out'")
        assert "plan_cache_mode=force_generic_plan" in cursor.fetchone()[0]


def test_a_hand_out_with_expired_own_work_goes_to_python():
    """The own-work check finds an expired assignment whose slot is free (the 'expired' half of its states)."""
    project = make_project(overlap=2, lease_seconds=60)
    make_solution(project)
    make_solution(project)
    ann = make_annotator()
    mine = queue._hand_out_in_one(ann, project, NOW)
    Assignment.objects.filter(pk=mine.pk).update(state=Assignment.EXPIRED)
    Solution.objects.filter(pk=mine.solution_id).update(live_assignments=0)
    assert declines(ann, project, NOW)
    resumed = queue.next_assignment(ann, project, now=NOW)
    assert resumed.pk == mine.pk and resumed.state == Assignment.ACTIVE
