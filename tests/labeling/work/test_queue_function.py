"""The hand-out function (migration 0007) does what the queue's Python path does.

``queue.next_assignment`` asks ``stepmark_hand_out`` first on PostgreSQL and runs its own
path when the function declines. These tests drive the same random session through both
(two identical projects, one per path) and compare every answer, run one scenario per
hand-out rule through both (the function's header, labeling/work/sql/stepmark_hand_out.v3.sql,
lists which rules it carries and which it leaves to Python), check that the function declines
exactly the cases it leaves to Python without writing anything, and that its hand-out answers
the API's payload without another read.
"""
import random
from datetime import timedelta

import pytest
from django.db import connection, transaction

from labeling.api.work_serializers import assignment_payload
from labeling.models import AnnotatorProjectStatus, Assignment, GoldRating, Solution
from labeling.quality import screening
from labeling.work import queue, submission
from tests.factories import NOW, in_queue_order, make_annotator, make_project, make_solution

pytestmark = pytest.mark.django_db


@pytest.fixture
def function_calls(monkeypatch):
    """Per call of the hand-out function, whether it handed out (True) or declined (False)."""
    calls = []
    original = queue._hand_out_in_one

    def recording(*args):
        found = original(*args)
        calls.append(found is not None)
        return found

    monkeypatch.setattr(queue, "_hand_out_in_one", recording)
    return calls


def build(seed, annotators):
    """A project with two generations, unselected work and gold; its solutions in creation order.

    The same annotators work in both projects.
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
    """Random next / submit / walk away over time; every answer in project-independent terms.

    Which gold item a gold hand-out gets is random on both paths, so gold items are told apart
    only from ordinary work (all -1), and their counters are compared in sum. The
    unselected solutions are named by their place in queue order (their ids differ between
    the two projects, and so does the queue key's order).
    """
    rng = random.Random(seed)
    index = {s.pk: -1 if s.is_gold else i for i, s in enumerate(solutions)}
    rest = in_queue_order(*[s for s in solutions if s.generation_id is None and not s.is_gold])
    index.update({s.pk: 100 + i for i, s in enumerate(rest)})
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
    counters = sorted((index[s.pk], Solution.objects.get(pk=s.pk).live_assignments) for s in solutions
                      if not s.is_gold)
    gold_counters = sum(Solution.objects.get(pk=s.pk).live_assignments for s in solutions if s.is_gold)
    return answers, stored, counters, gold_counters


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_the_function_and_the_python_path_answer_the_same_session(seed, settings, function_calls, monkeypatch):
    used = function_calls
    annotators = [make_annotator() for _ in range(5)]
    # The same draws of "gold due" on both paths (one draw per request on either).
    monkeypatch.setattr(queue, "_draw", random.Random(seed))
    settings.STEPMARK_QUEUE_FUNCTIONS = True
    with_function = session(*build(seed, annotators), seed=seed)
    monkeypatch.setattr(queue, "_draw", random.Random(seed))
    settings.STEPMARK_QUEUE_FUNCTIONS = False
    without = session(*build(seed, annotators), seed=seed)
    assert with_function == without
    assert any(answer[5] for answer in with_function[0] if len(answer) > 2)  # gold was served
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
    found = queue._hand_out_in_one(annotator, project, now, None)
    after = list(Assignment.objects.order_by("pk").values_list("pk", "state"))
    return found is None and before == after and counters == list(
        Solution.objects.order_by("pk").values_list("pk", "live_assignments"))


def test_the_function_leaves_resumes_lapses_screening_and_pauses_to_python():
    project = make_project(overlap=3, lease_seconds=60)
    for _ in range(3):
        make_solution(project)
    ann = make_annotator()
    mine = queue._hand_out_in_one(ann, project, NOW, None)
    assert mine is not None
    assert declines(ann, project, NOW)  # own active work comes back through Python

    other = make_annotator()
    assert declines(other, project, NOW + timedelta(seconds=61))  # ann's lease lapsed: Python reaps it

    paused = make_annotator(status="paused")
    assert declines(paused, project, NOW)

    screened = make_project(requires_screening=True)
    make_solution(screened)
    assert declines(make_annotator(), screened, NOW)


def test_the_function_hands_out_gold_itself_with_the_payload_of_any_task():
    project = make_project(overlap=1)
    gold = make_solution(project, is_gold=True, steps=2)
    make_solution(project, steps=2)
    ann = make_annotator()
    got = queue._hand_out_in_one(ann, project, NOW, 0)
    assert (got.solution_id, got.is_quality_control) == (gold.pk, True)
    stored = Assignment.objects.get(pk=got.pk)
    assert (stored.solution_id, stored.is_quality_control, stored.state) == (gold.pk, True, Assignment.ACTIVE)
    assert Solution.objects.get(pk=gold.pk).live_assignments == 1
    fresh = Assignment.objects.select_related("project", "solution__problem").get(pk=got.pk)
    assert assignment_payload(got) == assignment_payload(fresh)


def test_nothing_open_declines_so_python_decides():
    project = make_project(overlap=1)
    make_solution(project)
    assert queue._hand_out_in_one(make_annotator(), project, NOW, None) is not None
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
    mine = queue._hand_out_in_one(ann, project, NOW, None)
    Assignment.objects.filter(pk=mine.pk).update(state=Assignment.EXPIRED)
    Solution.objects.filter(pk=mine.solution_id).update(live_assignments=0)
    assert declines(ann, project, NOW)
    resumed = queue.next_assignment(ann, project, now=NOW)
    assert resumed.pk == mine.pk and resumed.state == Assignment.ACTIVE


# One scenario per hand-out rule, through both paths ---------------------------------------
#
# Each scenario builds its project, then asks for work once or more. The asking runs twice from
# the same rows (each run rolled back): with the function and without. Both runs must give the
# expected solutions and leave the same rows behind, and the function must have answered (the
# rules it carries itself) or declined (the cases it leaves to Python) as the scenario says.
# Covered elsewhere: skipping rows another transaction holds (test_queue_concurrency.py runs
# both paths), and expiring a lapsed lease found under the solution's lock (the function
# declines before it whenever the project has a lapsed lease, so only a race reaches it).

FUNCTION, PYTHON, NOT_ASKED = "function", "python", "not asked"


def asks(*requests):
    """``[(annotator, now)]``: the hand-outs a scenario asks for, in order."""
    return list(requests)


def scenario_order():
    """Newest generation first, by rank (NULLs last) then queue key; unselected work last, by queue key."""
    project = make_project(overlap=1)
    older = make_solution(project, generation=1, rank=1)
    second = make_solution(project, generation=2, rank=2)
    unranked = make_solution(project, generation=2)
    first = make_solution(project, generation=2, rank=1)
    rest = in_queue_order(make_solution(project), make_solution(project))
    expected = [first, second, unranked, older, *rest, None]
    by = [FUNCTION] * 6 + [PYTHON]  # nothing open: Python decides there is no work
    return project, asks(*[(make_annotator(), NOW) for _ in expected]), expected, by


def scenario_heads_of_each_counter_value():
    """The earliest solution in queue order wins whatever its counter; a full one is passed over."""
    project = make_project(overlap=3)
    first = make_solution(project, generation=1, rank=1)
    second = make_solution(project, generation=1, rank=2)
    queue.next_assignment(make_annotator(), project, now=NOW)  # first: 1 live, second: 0
    return project, asks(*[(make_annotator(), NOW) for _ in range(3)]), [first, first, second], [FUNCTION] * 3


def scenario_never_the_same_solution_twice():
    project = make_project(overlap=2)
    had, other = in_queue_order(make_solution(project), make_solution(project))
    ann = make_annotator()
    submission.submit(queue.next_assignment(ann, project, now=NOW), finish_reason="give_up", note="n", now=NOW)
    return project, asks((ann, NOW), (make_annotator(), NOW)), [other, had], [FUNCTION] * 2


def scenario_never_gold_or_screening_from_the_queue():
    project = make_project(quality_control_rate=0)
    make_solution(project, is_gold=True)
    make_solution(project, is_screening=True)
    ordinary = make_solution(project)
    return project, asks((make_annotator(), NOW), (make_annotator(), NOW)), [ordinary, None], [FUNCTION, PYTHON]


def scenario_a_counter_behind_is_corrected():
    """Work added behind the queue's back: the recount under the lock passes the full solution over."""
    project = make_project(overlap=2)
    full, open_ = in_queue_order(make_solution(project), make_solution(project))
    for n in range(2):  # imported passes
        Assignment.objects.create(project=project, solution=full, annotator=make_annotator(),
                                  state=Assignment.SUBMITTED, source_hash=f"import-{n}")
    Solution.objects.filter(pk=full.pk).update(live_assignments=0)
    return project, asks((make_annotator(), NOW)), [open_], [FUNCTION]


def scenario_own_active_work_comes_back():
    project = make_project()
    mine, _ = in_queue_order(make_solution(project), make_solution(project))
    ann = make_annotator()
    queue.next_assignment(ann, project, now=NOW)
    return project, asks((ann, NOW + timedelta(seconds=5))), [mine], [PYTHON]


def scenario_own_expired_work_with_a_free_slot_comes_back():
    project = make_project(overlap=1)
    mine, _ = in_queue_order(make_solution(project), make_solution(project))
    ann = make_annotator()
    held = queue.next_assignment(ann, project, now=NOW)
    Assignment.objects.filter(pk=held.pk).update(state=Assignment.EXPIRED)
    queue.recount_live_assignments(project)
    return project, asks((ann, NOW + timedelta(seconds=5))), [mine], [PYTHON]


def scenario_own_expired_work_whose_slot_was_taken_stays_behind():
    project = make_project(overlap=1)
    _, other = in_queue_order(make_solution(project), make_solution(project))
    ann = make_annotator()
    held = queue.next_assignment(ann, project, now=NOW)
    Assignment.objects.filter(pk=held.pk).update(state=Assignment.EXPIRED)
    queue.recount_live_assignments(project)
    queue.next_assignment(make_annotator(), project, now=NOW)  # takes the freed slot
    return project, asks((ann, NOW + timedelta(seconds=5))), [other], [FUNCTION]


def scenario_gold_due():
    """Served by the function like any other task; once had, ordinary work follows."""
    project = make_project(quality_control_rate=1.0)
    gold = make_solution(project, is_gold=True)
    ordinary = make_solution(project)
    ann = make_annotator()
    return project, asks((ann, NOW), (make_annotator(), NOW)), [gold, gold], [FUNCTION, FUNCTION]


def scenario_gold_due_with_every_gold_item_had_gives_ordinary_work():
    project = make_project(quality_control_rate=1.0)
    gold = make_solution(project, is_gold=True)
    ordinary = make_solution(project)
    ann = make_annotator()
    submission.submit(queue.next_assignment(ann, project, now=NOW), finish_reason="give_up", note="n", now=NOW)
    assert Assignment.objects.get(annotator=ann).solution_id == gold.pk
    return project, asks((ann, NOW)), [ordinary], [FUNCTION]


def scenario_lapsed_leases_are_reaped_first():
    """Every lapsed lease is expired before the search, so the earliest freed solution comes first."""
    project = make_project(overlap=1, lease_seconds=60)
    *lapsed, _ = in_queue_order(make_solution(project), make_solution(project), make_solution(project))
    for _ in lapsed:
        queue.next_assignment(make_annotator(), project, now=NOW)
    return project, asks((make_annotator(), NOW + timedelta(seconds=61))), lapsed[:1], [PYTHON]


def scenario_a_paused_annotator_gets_nothing():
    project = make_project()
    make_solution(project)
    return project, asks((make_annotator(status="paused"), NOW)), [None], [PYTHON]


def scenario_a_paused_standing_gets_nothing():
    project = make_project()
    make_solution(project)
    ann = make_annotator()
    screening.pause(ann, project, now=NOW)
    return project, asks((ann, NOW)), [None], [PYTHON]


def scenario_a_newcomer_is_screened_first():
    project = make_project(requires_screening=True)
    make_solution(project)
    item = make_solution(project, is_screening=True)
    GoldRating.objects.create(step=item.steps.get(position=0), value=1)
    return project, asks((make_annotator(), NOW)), [item], [PYTHON]


def scenario_an_active_standing_works_where_screening_is_required():
    project = make_project(requires_screening=True)
    ordinary = make_solution(project)
    ann = make_annotator()
    screening.resume(ann, project, now=NOW)
    return project, asks((ann, NOW)), [ordinary], [FUNCTION]


def scenario_an_inactive_project_hands_out_nothing():
    project = make_project(is_active=False)
    make_solution(project)
    return project, asks((make_annotator(), NOW)), [None], [NOT_ASKED]


SCENARIOS = {name[len("scenario_"):]: build for name, build in dict(globals()).items() if name.startswith("scenario_")}


def run_scenario(project, requests, recorded):
    """Ask for every request; ``(answers, who answered, rows left behind)``, in pk-free terms."""
    answers, by = [], []
    for annotator, now in requests:
        recorded.clear()
        got = queue.next_assignment(annotator, project, now=now)
        answers.append(None if got is None else (got.solution_id, got.state, got.generation,
                                                 got.is_quality_control, got.is_screening, got.lease_expires_at))
        by.append(NOT_ASKED if not recorded else FUNCTION if recorded[0] else PYTHON)
    rows = sorted(Assignment.objects.filter(project=project).values_list(
        "annotator_id", "solution_id", "state", "generation", "is_quality_control", "is_screening",
        "lease_expires_at", "handed_out_at"))
    counters = sorted(Solution.objects.filter(project=project).values_list("pk", "live_assignments"))
    standings = sorted(AnnotatorProjectStatus.objects.filter(project=project).values_list("annotator_id", "state"))
    return answers, by, (rows, counters, standings)


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_each_hand_out_rule_gives_the_same_answer_through_both_paths(name, settings, function_calls):
    recorded = function_calls
    project, requests, expected, expected_by = SCENARIOS[name]()
    runs = {}
    for path in (FUNCTION, PYTHON):
        settings.STEPMARK_QUEUE_FUNCTIONS = path == FUNCTION
        with transaction.atomic():
            runs[path] = run_scenario(project, requests, recorded)
            transaction.set_rollback(True)
    (answers, by, left), (python_answers, python_by, python_left) = runs[FUNCTION], runs[PYTHON]
    assert [a and a[0] for a in answers] == [s and s.pk for s in expected]
    assert answers == python_answers
    assert left == python_left
    assert by == expected_by
    assert set(python_by) <= {NOT_ASKED}


def test_a_counter_behind_ends_corrected_by_the_function():
    """The scenario above through the function alone: the counter it passed over is right afterwards."""
    project, requests, _, _ = scenario_a_counter_behind_is_corrected()
    full = Solution.objects.get(pk=Assignment.objects.filter(project=project).values_list("solution_id", flat=True)[0])
    assert queue._hand_out_in_one(requests[0][0], project, NOW, None) is not None
    assert Solution.objects.get(pk=full.pk).live_assignments == 2
