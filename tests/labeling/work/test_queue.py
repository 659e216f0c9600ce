"""The task queue (labeling/work/queue.py) against real PostgreSQL, without HTTP."""
import pytest

from labeling.models import Annotator, Assignment, Rating, Solution
from labeling.work import queue, submission
from tests.factories import NOW, in_queue_order, later, live, make_annotator, make_gold, make_project, make_solution

pytestmark = pytest.mark.django_db


# Hand-out and resume ------------------------------------------------------------------


def test_an_unfinished_assignment_comes_back_first_with_its_lease_renewed():
    project = make_project(lease_seconds=600)
    make_solution(project)
    make_solution(project)
    ann = make_annotator()
    first = queue.next_assignment(ann, project, now=NOW)
    again = queue.next_assignment(ann, project, now=later(300))
    assert again.pk == first.pk
    assert again.lease_expires_at == later(900)
    assert Assignment.objects.filter(annotator=ann).count() == 1


def test_hand_out_sets_lease_and_copies_how_the_solution_was_served():
    project = make_project(lease_seconds=120)
    solution = make_solution(project, generation=3, rank=1)
    a = queue.next_assignment(make_annotator(), project, now=NOW)
    assert a.solution_id == solution.pk and a.state == Assignment.ACTIVE
    assert (a.handed_out_at, a.lease_expires_at) == (NOW, later(120))
    assert (a.generation, a.is_quality_control, a.is_screening) == (3, False, False)
    assert Solution.objects.get(pk=solution.pk).live_assignments == 1


def test_every_hand_out_says_which_rule_served_it():
    project = make_project(lease_seconds=600, quality_control_rate=1.0)
    make_gold(project, [1, 1])
    make_solution(project, steps=2)
    ann = make_annotator()
    gold = queue.next_assignment(ann, project, now=NOW)
    assert (gold.served_by, gold.is_quality_control) == ("gold", True)
    assert queue.next_assignment(ann, project, now=later(1)).served_by == "resumed"
    submission.submit(gold, finish_reason="give_up", note="n", now=later(2))
    project.quality_control_rate = 0.0
    project.save()
    assert queue.next_assignment(ann, project, now=later(3)).served_by == "queue"
    assert set(queue.SERVED_BY) == {"resumed", "screening", "gold", "queue"}


def test_overlap_limits_how_many_annotators_get_a_solution():
    project = make_project(overlap=2)
    solution, other = in_queue_order(make_solution(project), make_solution(project))
    got = [queue.next_assignment(make_annotator(), project, now=NOW) for _ in range(4)]
    assert [a.solution_id for a in got] == [solution.pk, solution.pk, other.pk, other.pk]
    assert queue.next_assignment(make_annotator(), project, now=NOW) is None


def test_submitted_work_counts_toward_overlap_and_is_never_served_twice_to_its_annotator():
    project = make_project(overlap=2)
    solution = make_solution(project)
    ann = make_annotator()
    a = queue.next_assignment(ann, project, now=NOW)
    submission.submit(a, finish_reason="give_up", note="too hard", now=later(5))
    assert queue.next_assignment(ann, project, now=later(10)) is None
    b = queue.next_assignment(make_annotator(), project, now=later(10))
    assert b.solution_id == solution.pk
    submission.submit(b, finish_reason="give_up", note="too hard", now=later(15))
    assert queue.next_assignment(make_annotator(), project, now=later(20)) is None


def test_a_lapsed_lease_frees_the_slot_and_is_marked_expired_when_taken():
    project = make_project(overlap=1, lease_seconds=60)
    solution = make_solution(project)
    first = queue.next_assignment(make_annotator(), project, now=NOW)
    assert queue.next_assignment(make_annotator(), project, now=later(59)) is None
    taken = queue.next_assignment(make_annotator(), project, now=later(61))
    assert taken.solution_id == solution.pk
    first.refresh_from_db()
    assert first.state == Assignment.EXPIRED
    assert live(solution) == 1


def test_an_owner_back_after_the_lease_keeps_assignment_and_ratings_when_nobody_took_it():
    project = make_project(overlap=2, lease_seconds=60)
    solution = make_solution(project)
    other = make_annotator()
    done = queue.next_assignment(other, project, now=NOW)
    submission.submit(done, finish_reason="give_up", note="n", now=later(1))
    ann = make_annotator()
    a = queue.next_assignment(ann, project, now=later(2))
    submission.save_draft(a, [{"position": 0, "value": 1}], now=later(3))
    # The other annotator asks after the lapse: their claim expires the lapsed lease but they
    # cannot take the solution (they rated it already).
    assert queue.next_assignment(other, project, now=later(200)) is None
    a.refresh_from_db()
    assert a.state == Assignment.EXPIRED and live(solution) == 1
    back = queue.next_assignment(ann, project, now=later(300))
    assert back.pk == a.pk and back.state == Assignment.ACTIVE
    assert back.lease_expires_at == later(360)
    assert live(solution) == 2
    assert list(Rating.objects.filter(assignment=a).values_list("value", flat=True)) == [1]


def test_an_owner_back_before_anyone_else_asked_just_resumes():
    project = make_project(overlap=1, lease_seconds=60)
    make_solution(project)
    ann = make_annotator()
    a = queue.next_assignment(ann, project, now=NOW)
    assert queue.next_assignment(ann, project, now=later(1000)).pk == a.pk


def test_an_owner_whose_slot_was_taken_gets_other_work_and_keeps_old_ratings():
    project = make_project(overlap=1, lease_seconds=60)
    s1, s2 = in_queue_order(make_solution(project), make_solution(project))
    ann = make_annotator()
    a = queue.next_assignment(ann, project, now=NOW)
    assert a.solution_id == s1.pk
    submission.save_draft(a, [{"position": 0, "value": 1}], now=later(1))
    thief = queue.next_assignment(make_annotator(), project, now=later(100))
    assert thief.solution_id == s1.pk
    back = queue.next_assignment(ann, project, now=later(101))
    assert back.solution_id == s2.pk
    a.refresh_from_db()
    assert a.state == Assignment.EXPIRED
    assert Rating.objects.filter(assignment=a).count() == 1
    assert live(s1) == 1 and live(s2) == 1


def test_an_expired_assignment_whose_slot_freed_again_returns_to_its_owner_later():
    project = make_project(overlap=1, lease_seconds=60)
    s1 = make_solution(project)
    ann = make_annotator()
    a = queue.next_assignment(ann, project, now=NOW)
    submission.save_draft(a, [{"position": 0, "value": 0}], now=later(1))
    queue.next_assignment(make_annotator(), project, now=later(100))  # takes s1, then lapses
    s2 = make_solution(project)
    new = queue.next_assignment(ann, project, now=later(300))
    assert new.solution_id == s2.pk  # the slot had been taken: old assignment stays expired
    submission.submit(new, finish_reason="give_up", note="n", now=later(301))
    back = queue.next_assignment(ann, project, now=later(302))
    assert back.pk == a.pk and Rating.objects.filter(assignment=a).count() == 1
    assert live(s1) == 1


def test_draft_activity_renews_the_lease():
    project = make_project(overlap=1, lease_seconds=60)
    make_solution(project)
    a = queue.next_assignment(make_annotator(), project, now=NOW)
    submission.save_draft(a, [{"position": 0, "value": 1}], now=later(50))
    assert queue.next_assignment(make_annotator(), project, now=later(100)) is None
    assert queue.next_assignment(make_annotator(), project, now=later(111)) is not None


def test_touch_moves_the_lease_from_the_activity_time():
    project = make_project(lease_seconds=60)
    make_solution(project)
    a = queue.next_assignment(make_annotator(), project, now=NOW)
    queue.touch(a, now=later(30))
    a.refresh_from_db()
    assert (a.last_activity_at, a.lease_expires_at) == (later(30), later(90))


# Order ---------------------------------------------------------------------------------


def test_order_is_newest_generation_then_rank_then_the_rest_by_queue_key():
    project = make_project(overlap=1)
    rest_a = make_solution(project)
    g1_r2 = make_solution(project, generation=1, rank=2)
    g2_r5 = make_solution(project, generation=2, rank=5)
    g1_r1 = make_solution(project, generation=1, rank=1)
    rest_b = make_solution(project)
    g2_r3 = make_solution(project, generation=2, rank=3)
    served = []
    while (a := queue.next_assignment(make_annotator(), project, now=NOW)) is not None:
        served.append(a.solution_id)
    assert served == [s.pk for s in (g2_r3, g2_r5, g1_r1, g1_r2, *in_queue_order(rest_a, rest_b))]


def test_a_problems_candidates_imported_together_are_not_served_back_to_back():
    # Four problems with four candidates each, made one problem after another (as imports do):
    # served by id, each problem's four would come in a row and a gold item would break the run.
    project = make_project(overlap=1)
    problem_of = {}
    for p in range(4):
        first = make_solution(project, problem=f"problem {p}")
        problem_of[first.pk] = p
        for _ in range(3):
            other = make_solution(project, problem=f"problem {p}")
            problem_of[other.pk] = p
    served = []
    while (a := queue.next_assignment(make_annotator(), project, now=NOW)) is not None:
        served.append(problem_of[a.solution_id])
    assert sorted(served) == sorted(problem_of.values())
    assert not any(a == b for a, b in zip(served, served[1:])), served


def test_screening_items_are_not_served_by_the_queue():
    project = make_project(quality_control_rate=1.0)
    make_solution(project, is_screening=True, is_gold=True, generation=-1)
    make_solution(project, is_screening=True)
    assert queue.next_assignment(make_annotator(), project, now=NOW) is None


def test_inactive_projects_and_paused_annotators_get_nothing():
    project = make_project()
    make_solution(project)
    assert queue.next_assignment(make_annotator(status=Annotator.PAUSED), project, now=NOW) is None
    project.is_active = False
    project.save()
    assert queue.next_assignment(make_annotator(), project, now=NOW) is None
    assert not Assignment.objects.exists()


def test_a_paused_annotator_does_not_resume_either():
    project = make_project()
    make_solution(project)
    ann = make_annotator()
    queue.next_assignment(ann, project, now=NOW)
    Annotator.objects.filter(pk=ann.pk).update(status=Annotator.PAUSED)
    assert queue.next_assignment(ann, project, now=later(1)) is None


# Quality control ------------------------------------------------------------------------


def test_gold_is_served_at_rate_one_to_everyone_bypassing_overlap():
    project = make_project(overlap=1, quality_control_rate=1.0)
    gold = make_solution(project, is_gold=True)
    make_solution(project)
    for _ in range(3):
        a = queue.next_assignment(make_annotator(), project, now=NOW)
        assert a.solution_id == gold.pk and a.is_quality_control


def test_gold_is_not_served_at_rate_zero():
    project = make_project(overlap=5, quality_control_rate=0.0)
    make_solution(project, is_gold=True)
    ordinary = make_solution(project)
    assert queue.next_assignment(make_annotator(), project, now=NOW).solution_id == ordinary.pk


def test_each_gold_item_reaches_an_annotator_once_then_ordinary_work_follows():
    project = make_project(overlap=1, quality_control_rate=1.0)
    golds = {make_solution(project, is_gold=True).pk for _ in range(2)}
    ordinary = make_solution(project)
    ann = make_annotator()
    served = []
    for i in range(3):
        a = queue.next_assignment(ann, project, now=later(i))
        served.append(a.solution_id)
        submission.submit(a, finish_reason="give_up", note="n", now=later(i))
    assert set(served[:2]) == golds and served[2] == ordinary.pk
    assert queue.next_assignment(ann, project, now=later(3)) is None


@pytest.mark.parametrize("overlap", [1, 2])
def test_gold_comes_only_beside_open_ordinary_work_so_an_empty_queue_stays_empty(overlap):
    """Once ordinary work runs out, gold stopped being due too: before, every hand-out after the
    first "no work" was gold (issue #26)."""
    project = make_project(overlap=overlap, quality_control_rate=1.0)
    golds = {make_solution(project, is_gold=True).pk for _ in range(3)}
    ordinary = make_solution(project)
    ann = make_annotator()
    # Others hold every slot of the ordinary solution.
    others = [Assignment.objects.create(project=project, solution=ordinary, annotator=make_annotator(),
                                        state=Assignment.ACTIVE, lease_expires_at=later(600)) for _ in range(overlap)]
    queue.recount_live_assignments(project)
    assert queue.next_assignment(ann, project, now=NOW) is None  # gold due and unseen, yet no work
    Assignment.objects.filter(pk=others[0].pk).delete()  # a slot opens: gold is served beside it
    queue.recount_live_assignments(project)
    assert queue.next_assignment(ann, project, now=later(1)).solution_id in golds


def test_quality_control_due_is_a_fresh_draw_at_the_rate():
    draws = [queue.quality_control_due(0.25) for _ in range(4000)]
    assert 850 <= sum(draws) <= 1150  # 1,000 expected; sd 27
    assert all(queue.quality_control_due(1.0) for _ in range(50))
    assert not any(queue.quality_control_due(0.0) for _ in range(50))


def gold_flags(annotator, project, golds, n):
    """Whether each of ``annotator``'s first ``n`` hand-outs was gold, and the gold ids in order."""
    flags, order = [], []
    for i in range(n):
        a = queue.next_assignment(annotator, project, now=later(i))
        flags.append(a.solution_id in golds)
        if flags[-1]:
            order.append(a.solution_id)
        submission.submit(a, finish_reason="give_up", note="n", now=later(i))
    return flags, order


def periods(flags):
    """The shifts p < len/2 under which the sequence repeats itself."""
    return [p for p in range(1, len(flags) // 2) if all(flags[i] == flags[i + p] for i in range(len(flags) - p))]


def test_gold_positions_are_neither_periodic_nor_shared_and_each_annotator_has_an_own_order():
    # The old schedule was a function of the annotator's id and count: periodic, and the
    # same for everyone with the same phase. Now each hand-out draws afresh.
    project = make_project(overlap=2, quality_control_rate=0.3)
    golds = {make_solution(project, is_gold=True).pk for _ in range(60)}
    for _ in range(200):
        make_solution(project)
    first, first_order = gold_flags(make_annotator(), project, golds, 100)
    second, second_order = gold_flags(make_annotator(), project, golds, 100)
    for flags in (first, second):
        assert 12 <= sum(flags) <= 50  # 30 expected; sd 4.6
        assert periods(flags) == []
    assert first != second
    assert first_order[:5] != second_order[:5]  # the gold items themselves in an order of each's own


def test_at_rate_one_each_annotator_meets_the_gold_items_in_their_own_order():
    project = make_project(overlap=1, quality_control_rate=1.0)
    golds = {make_solution(project, is_gold=True).pk for _ in range(8)}
    make_solution(project)  # gold comes only beside open ordinary work
    orders = [gold_flags(make_annotator(), project, golds, 8)[1] for _ in range(2)]
    assert all(set(order) == golds for order in orders)
    assert orders[0] != orders[1]  # the same order by chance: 1 in 40,320


# The counter and efficiency -------------------------------------------------------------


def test_work_added_behind_the_queue_still_counts_toward_overlap():
    project = make_project(overlap=1)
    imported = make_solution(project)
    Assignment.objects.create(
        project=project, solution=imported, annotator=make_annotator(), state=Assignment.SUBMITTED, source_hash="x"
    )
    assert Solution.objects.get(pk=imported.pk).live_assignments == 0  # the counter is behind
    assert queue.next_assignment(make_annotator(), project, now=NOW) is None
    assert Solution.objects.get(pk=imported.pk).live_assignments == 1


def test_full_solutions_leave_the_queue_and_a_changed_overlap_moves_them():
    project = make_project(overlap=1)
    solution = make_solution(project)
    assert queue.next_assignment(make_annotator(), project, now=NOW).solution_id == solution.pk
    assert Solution.objects.get(pk=solution.pk).is_full
    assert queue.next_assignment(make_annotator(), project, now=NOW) is None

    project.overlap = 2
    project.save()  # a second slot on every solution: the full one is open again
    assert not Solution.objects.get(pk=solution.pk).is_full
    assert queue.next_assignment(make_annotator(), project, now=NOW).solution_id == solution.pk
    assert Solution.objects.get(pk=solution.pk).is_full

    project.overlap = 3
    project.save()
    project.overlap = 1
    project.save()  # fewer slots than live assignments: full, and nobody else gets it
    assert Solution.objects.get(pk=solution.pk).is_full
    assert queue.next_assignment(make_annotator(), project, now=NOW) is None


def test_a_recount_repairs_the_full_flag_too():
    project = make_project(overlap=1)
    solution = make_solution(project)
    Solution.objects.filter(pk=solution.pk).update(live_assignments=1, is_full=True)  # assignments deleted by hand
    assert queue.next_assignment(make_annotator(), project, now=NOW) is None
    queue.recount_live_assignments(project)
    assert queue.next_assignment(make_annotator(), project, now=NOW).solution_id == solution.pk


def test_a_claim_costs_the_same_few_queries_however_much_work_is_done(django_assert_max_num_queries):
    project = make_project(overlap=1)
    done = [make_solution(project, steps=0) for _ in range(200)]
    Solution.objects.filter(pk__in=[s.pk for s in done]).update(live_assignments=1, is_full=True)
    fresh = make_solution(project, steps=0)
    ann = make_annotator()
    with django_assert_max_num_queries(12):
        a = queue.next_assignment(ann, project, now=NOW)
    assert a.solution_id == fresh.pk
