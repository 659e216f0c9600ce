"""Server-side labelling rules (labeling/work/submission.py): drafts, submission, chosen, time."""
import json
from datetime import timedelta

import pytest

from labeling.models import Assignment, Rating, Step
from labeling.work import queue
from labeling.work.submission import LabelingError, save_draft, submit
from tests.factories import NOW, later, live, make_annotator, make_project, make_solution

pytestmark = pytest.mark.django_db


def handed(project=None, steps=3, alternatives=None, **project_fields):
    project = project or make_project(**project_fields)
    make_solution(project, steps=steps, alternatives=alternatives)
    return queue.next_assignment(make_annotator(), project, now=NOW)


def r(position, value, alternative=0, **extra):
    return {"position": position, "alternative": alternative, "value": value, **extra}


def values(assignment):
    return {
        (x.step.position, x.step.alternative): x.value
        for x in Rating.objects.filter(assignment=assignment).select_related("step")
    }


def chosen(assignment):
    return sorted(
        (x.step.position, x.step.alternative)
        for x in Rating.objects.filter(assignment=assignment, chosen=True).select_related("step")
    )


def error_of(call, *args, **kwargs):
    with pytest.raises(LabelingError) as caught:
        call(*args, **kwargs)
    return caught.value


# Drafts ---------------------------------------------------------------------------------


def test_a_draft_is_upserted_and_may_change_before_submission():
    a = handed()
    save_draft(a, [r(0, 1, flagged=True), r(1, 0)], now=later(1))
    save_draft(a, [r(1, -1)], now=later(2))
    assert values(a) == {(0, 0): 1, (1, 0): -1}
    assert Rating.objects.get(assignment=a, step__position=0).flagged is True
    assert Rating.objects.get(assignment=a, step__position=1).flagged is False
    assert Rating.objects.filter(assignment=a).count() == 2


def test_undo_removes_the_rating_so_the_export_does_not_list_the_step():
    a = handed(steps=3, alternatives={1: 2})
    save_draft(a, [r(0, 1), r(1, -1), r(1, 1, alternative=1)], now=later(1))
    save_draft(a, [r(1, None, alternative=1), r(1, None)], now=later(2))
    assert values(a) == {(0, 0): 1}
    save_draft(a, [r(1, 1), r(2, 1)], now=later(3))
    assert values(a) == {(0, 0): 1, (1, 0): 1, (2, 0): 1}


@pytest.mark.parametrize(
    "item, field",
    [
        (r(9, 1), "ratings[0]"),
        (r(0, 1, alternative=3), "ratings[0]"),
    ],
)  # an item's shape is the API serializer's (tests/labeling/api/test_work_api.py)
def test_bad_items_are_refused_naming_the_field_and_store_nothing(item, field):
    a = handed()
    assert error_of(save_draft, a, [item], now=later(1)).field == field
    assert error_of(save_draft, a, [r(0, 1), item], now=later(1)).field == field.replace("[0]", "[1]")
    assert not Rating.objects.filter(assignment=a).exists()


def test_a_step_of_another_solution_cannot_be_rated():
    project = make_project()
    a = handed(project, steps=2)
    make_solution(project, steps=5)
    assert error_of(save_draft, a, [r(4, 1)], now=later(1)).field == "ratings[0]"


def test_alternatives_are_refused_where_the_project_hides_them():
    a = handed(alternatives={0: 1}, allow_alternatives=False)
    assert "alternative" in error_of(save_draft, a, [r(0, 1, alternative=1)], now=later(1)).message


def test_phase_two_steps_are_rated_in_order():
    a = handed(steps=4)
    err = error_of(save_draft, a, [r(0, 1), r(2, 1)], now=later(1))
    assert err.field == "ratings[1]" and "in order" in err.message
    save_draft(a, [r(0, 1), r(1, 1), r(2, 0)], now=later(2))  # no gap: fine


def test_phase_two_nothing_after_the_first_error_but_alternatives_there():
    a = handed(steps=4, alternatives={1: 2, 2: 1})
    save_draft(a, [r(0, 1), r(1, -1), r(1, 1, alternative=1), r(1, 0, alternative=2)], now=later(1))
    assert "after the -1" in error_of(save_draft, a, [r(2, 1)], now=later(2)).message
    assert "after the -1" in error_of(save_draft, a, [r(2, 1, alternative=1)], now=later(2)).message
    # Changing the -1 reopens the rest.
    save_draft(a, [r(1, 1), r(2, 1)], now=later(3))
    # Turning an earlier step to -1 with later steps rated is refused, nothing is lost.
    assert error_of(save_draft, a, [r(0, -1)], now=later(4))
    assert values(a)[(0, 0)] == 1 and values(a)[(2, 0)] == 1


def test_phase_one_may_rate_past_an_error():
    a = handed(steps=3, stop_at_first_error=False)
    save_draft(a, [r(0, -1), r(2, 1)], now=later(1))
    assert values(a) == {(0, 0): -1, (2, 0): 1}


def test_a_submitted_assignment_is_immutable():
    a = handed()
    submit(a, finish_reason="give_up", note="stuck", now=later(1))
    assert "submitted" in error_of(save_draft, a, [r(0, 1)], now=later(2)).message
    assert not Rating.objects.filter(assignment=a).exists()


def test_an_expired_assignment_with_a_free_slot_is_reactivated_by_a_draft_save():
    a = handed(lease_seconds=60)
    Assignment.objects.filter(pk=a.pk).update(state=Assignment.EXPIRED)
    queue.recount_live_assignments(a.project)
    save_draft(a, [r(0, 1)], now=later(500))
    a.refresh_from_db()
    assert a.state == Assignment.ACTIVE and a.lease_expires_at == later(560)
    assert live(a.solution) == 1


def test_an_expired_assignment_whose_slot_was_taken_cannot_save():
    a = handed(lease_seconds=60, overlap=1)
    save_draft(a, [r(0, 1)], now=later(1))
    taker = queue.next_assignment(make_annotator(), a.project, now=later(100))
    assert taker.solution_id == a.solution_id
    with pytest.raises(queue.LeaseLost) as lost:
        save_draft(a, [r(0, 0)], now=later(101))
    assert lost.value.status == 409 and "lease on this assignment expired" in lost.value.message
    assert values(a) == {(0, 0): 1}  # the earlier draft is kept


def test_a_draft_save_renews_the_lease():
    a = handed(lease_seconds=60)
    save_draft(a, [r(0, 1)], now=later(45))
    a.refresh_from_db()
    assert a.lease_expires_at == later(105) and a.last_activity_at == later(45)


# Submission -----------------------------------------------------------------------------


def test_submit_records_the_finish_and_is_idempotent_with_its_key():
    a = handed(steps=2)
    done = submit(a, finish_reason="solution", ratings=[r(0, 1), r(1, 0)], submit_key="k1", now=later(10))
    assert (done.state, done.finish_reason, done.submitted_at) == (Assignment.SUBMITTED, "solution", later(10))
    again = submit(a, finish_reason="give_up", note="x", ratings=[r(0, -1)], submit_key="k1", now=later(20))
    again.refresh_from_db()
    assert (again.finish_reason, again.submitted_at) == ("solution", later(10))
    assert values(a) == {(0, 0): 1, (1, 0): 0}
    assert error_of(submit, a, finish_reason="solution", submit_key="k2", now=later(30)).field == "submit_key"
    assert error_of(submit, a, finish_reason="solution", now=later(30)).field == "submit_key"
    assert live(a.solution) == 1


@pytest.mark.parametrize("in_the_submit", [True, False])
def test_a_submit_stores_its_fields_whether_or_not_it_writes_ratings(in_the_submit):
    """With ratings the assignment's update rides on their upsert (PostgreSQL); without, it runs alone."""
    a = handed(steps=2)
    if not in_the_submit:
        save_draft(a, [r(0, 1), r(1, 0)], now=later(5))
    submit(a, finish_reason="solution", ratings=[r(0, 1), r(1, 0)] if in_the_submit else [], submit_key="k",
           client_elapsed_ms=4000, now=later(10))
    stored = Assignment.objects.get(pk=a.pk)
    assert (stored.state, stored.finish_reason, stored.submit_key, stored.submitted_at, stored.last_activity_at,
            stored.total_time) == (Assignment.SUBMITTED, "solution", "k", later(10), later(10), 4000)
    assert values(a) == {(0, 0): 1, (1, 0): 0}
    assert set(Rating.objects.filter(assignment=a, chosen=True).values_list("step__position", flat=True)) == {0, 1}


def test_an_unknown_finish_reason_is_refused():
    a = handed()
    assert error_of(submit, a, finish_reason="done", now=later(1)).field == "finish_reason"
    a.refresh_from_db()
    assert a.state == Assignment.ACTIVE


def test_found_error_needs_the_last_rated_step_to_be_minus_one():
    a = handed(steps=3)
    assert error_of(submit, a, finish_reason="found_error", ratings=[r(0, 1)], now=later(1))
    assert error_of(submit, a, finish_reason="found_error", now=later(1))
    submit(a, finish_reason="found_error", ratings=[r(1, -1)], now=later(2))  # r(0, 1) was kept
    assert chosen(a) == [(0, 0)]


def test_found_error_needs_every_alternative_at_the_error_rated():
    a = handed(steps=3, alternatives={1: 2})
    save_draft(a, [r(0, 1), r(1, -1), r(1, 1, alternative=1)], now=later(1))
    err = error_of(submit, a, finish_reason="found_error", now=later(2))
    assert "alternative 2" in err.message
    submit(a, finish_reason="found_error", ratings=[r(1, 0, alternative=2)], now=later(3))
    assert chosen(a) == [(0, 0)]  # none at the error position


def test_found_error_ignores_alternatives_where_the_project_hides_them():
    ratings = [r(0, 1), r(1, -1)]
    shown = handed(steps=3, alternatives={1: 2})
    assert "alternative 1 is unrated" in error_of(submit, shown, finish_reason="found_error", ratings=ratings,
                                                  now=later(1)).message
    hidden = handed(steps=3, alternatives={1: 2}, allow_alternatives=False)
    done = submit(hidden, finish_reason="found_error", ratings=ratings, now=later(1))
    assert (done.state, done.finish_reason) == (Assignment.SUBMITTED, "found_error")
    assert values(hidden) == {(0, 0): 1, (1, 0): -1}
    assert chosen(hidden) == [(0, 0)]  # none at the error position


def test_solution_needs_every_step_rated_and_no_minus_one():
    a = handed(steps=3, stop_at_first_error=False)
    assert "step 3 is not" in error_of(submit, a, finish_reason="solution", ratings=[r(0, 1), r(1, 1)],
                                     now=later(1)).message  # position 2, numbered from 1 as on the page
    assert "-1" in error_of(submit, a, finish_reason="solution", ratings=[r(1, -1), r(2, 1)], now=later(2)).message
    assert values(a) == {(0, 0): 1, (1, 0): -1, (2, 0): 1}
    submit(a, finish_reason="solution", ratings=[r(1, 0)], now=later(3))
    assert chosen(a) == [(0, 0), (1, 0), (2, 0)]
    assert not Rating.objects.filter(assignment=a, step__position=2, chosen=False).exists()


@pytest.mark.parametrize("reason", ["give_up", "bad_problem"])
def test_give_up_and_bad_problem_need_a_note_and_may_end_anywhere(reason):
    a = handed(steps=3)
    assert error_of(submit, a, finish_reason=reason, note="  ", ratings=[r(0, 1)], now=later(1)).field == "note"
    a.refresh_from_db()
    assert a.state == Assignment.ACTIVE and values(a) == {(0, 0): 1}  # kept as a draft
    done = submit(a, finish_reason=reason, note="the statement is ambiguous", ratings=[r(0, 1)], now=later(2))
    assert done.finish_note == "the statement is ambiguous" and chosen(a) == [(0, 0)]


def test_submitting_an_expired_assignment_whose_slot_was_taken_fails():
    a = handed(lease_seconds=60, overlap=1)
    queue.next_assignment(make_annotator(), a.project, now=later(100))
    with pytest.raises(queue.LeaseLost):
        submit(a, finish_reason="give_up", note="n", now=later(101))
    assert Assignment.objects.get(pk=a.pk).state == Assignment.EXPIRED


# Human steps (phase 1) ----------------------------------------------------------------


def phase_one(**extra):
    return handed(steps=3, alternatives={1: 1}, stop_at_first_error=False, allow_human_steps=True, **extra)


def test_a_human_step_is_refused_where_the_project_does_not_take_them():
    a = handed(steps=2)
    err = error_of(save_draft, a, [r(0, -1), {"position": 0, "human_text": "mine", "value": 1}], now=later(1))
    assert err.field == "ratings[1].human_text"


def test_a_human_step_needs_every_completion_there_rated_minus_one():
    a = phase_one()
    items = [r(0, 1), r(1, -1), {"position": 1, "human_text": "x = 2", "value": 1}]
    assert "every completion" in error_of(save_draft, a, items, now=later(1)).message
    assert not Step.objects.filter(source=Step.HUMAN).exists()


def test_a_human_step_is_stored_chosen_and_editable_until_submission():
    a = phase_one()
    other = Step.objects.create(
        solution=a.solution, position=1, alternative=5, text="someone else's", source=Step.HUMAN
    )
    save_draft(a, [r(0, 1), r(1, -1), r(1, -1, alternative=1), {"position": 1, "human_text": "x = 2", "value": 1}],
               now=later(1))
    save_draft(a, [{"position": 1, "human_text": "x = 3", "value": 0}], now=later(2))
    step = Step.objects.get(author=a)
    assert (step.source, step.position, step.alternative, step.text) == (Step.HUMAN, 1, 6, "x = 3")
    assert error_of(save_draft, a, [r(1, 1, alternative=5)], now=later(3))  # not theirs to rate
    submit(a, finish_reason="solution", ratings=[r(2, 1)], now=later(4))
    assert chosen(a) == [(0, 0), (1, 6), (2, 0)]
    assert other.ratings.count() == 0


def test_a_human_step_can_be_withdrawn_before_submission():
    a = phase_one()
    save_draft(a, [r(1, -1), r(1, -1, alternative=1), {"position": 1, "human_text": "mine", "value": 1}], now=later(1))
    save_draft(a, [{"position": 1, "human_text": None}, r(1, 1)], now=later(2))
    assert not Step.objects.filter(author=a).exists()
    assert values(a) == {(1, 0): 1, (1, 1): -1}


# Continuing through an alternative (phase 1) ---------------------------------------------


def phase_one_alternatives(steps=3, alternatives=None, **extra):
    return handed(steps=steps, alternatives=alternatives or {1: 3}, stop_at_first_error=False, **extra)


def exported_steps(assignment):
    from labeling.exports import ExportFilters, get_exporter

    [line] = get_exporter("prm800k")(ExportFilters(project_id=assignment.project_id))
    label = json.loads(line)["label"]
    return label["finish_reason"], label["steps"]


def test_phase_one_goes_on_through_an_alternative_and_exports_it_as_chosen():
    a = phase_one_alternatives()
    ratings = [r(0, 1), r(1, -1), r(1, 0, alternative=1), r(1, 1, alternative=2), r(1, 1, alternative=3), r(2, 1)]
    submit(a, finish_reason="solution", ratings=ratings, now=later(1))
    # The lowest-index +1 is chosen over an earlier 0 and a later +1.
    assert chosen(a) == [(0, 0), (1, 2), (2, 0)]
    reason, steps = exported_steps(a)
    assert reason == "solution"
    assert [s["chosen_completion"] for s in steps] == [0, 2, 0]
    assert [c["rating"] for c in steps[1]["completions"]] == [-1, 0, 1, 1]


def test_phase_one_goes_on_through_an_alternative_rated_zero_when_none_is_plus_one():
    a = phase_one_alternatives()
    ratings = [r(0, 1), r(1, -1), r(1, -1, alternative=1), r(1, 0, alternative=2), r(1, 0, alternative=3), r(2, 0)]
    submit(a, finish_reason="solution", ratings=ratings, now=later(1))
    assert chosen(a) == [(0, 0), (1, 2), (2, 0)]


def test_phase_one_solution_through_an_alternative_needs_every_alternative_there_rated():
    a = phase_one_alternatives()
    ratings = [r(0, 1), r(1, -1), r(1, 1, alternative=1), r(1, -1, alternative=2), r(2, 1)]
    err = error_of(submit, a, finish_reason="solution", ratings=ratings, now=later(1))
    assert "alternative 3" in err.message
    a.refresh_from_db()
    assert a.state == Assignment.ACTIVE and len(values(a)) == 5  # kept as a draft
    submit(a, finish_reason="solution", ratings=[r(1, -1, alternative=3)], now=later(2))
    assert chosen(a) == [(0, 0), (1, 1), (2, 0)]


def test_phase_one_solution_is_refused_where_every_completion_at_a_minus_one_is_minus_one():
    a = phase_one_alternatives(alternatives={1: 1})
    ratings = [r(0, 1), r(1, -1), r(1, -1, alternative=1), r(2, 1)]
    err = error_of(submit, a, finish_reason="solution", ratings=ratings, now=later(1))
    assert "step 2 has none" in err.message and err.field == "finish_reason"


def test_phase_one_found_error_still_ends_at_a_minus_one_with_a_good_alternative():
    a = phase_one_alternatives(alternatives={1: 1})
    submit(a, finish_reason="found_error", ratings=[r(0, 1), r(1, -1), r(1, 1, alternative=1)], now=later(1))
    assert chosen(a) == [(0, 0)]  # the pass ended at step 1: nothing chosen there
    _, steps = exported_steps(a)
    assert [s["chosen_completion"] for s in steps] == [0, None]


@pytest.mark.parametrize("reason, picked", [("solution", [(0, 0), (1, 1)]), ("found_error", [(0, 0)])])
def test_at_the_last_step_the_finish_decides_whether_the_alternative_is_chosen(reason, picked):
    a = phase_one_alternatives(steps=2, alternatives={1: 1})
    submit(a, finish_reason=reason, ratings=[r(0, 1), r(1, -1), r(1, 1, alternative=1)], now=later(1))
    assert chosen(a) == picked


def test_a_pass_given_up_after_going_on_through_an_alternative_keeps_it_chosen():
    a = phase_one_alternatives(steps=4)
    save_draft(a, [r(0, 1), r(1, -1), r(1, -1, alternative=1), r(1, 0, alternative=2), r(1, -1, alternative=3)],
               now=later(1))
    submit(a, finish_reason="give_up", note="stuck", ratings=[r(2, 1)], now=later(2))
    assert chosen(a) == [(0, 0), (1, 2), (2, 0)]


def test_phase_two_still_ends_at_the_first_minus_one_whatever_its_alternatives():
    a = handed(steps=3, alternatives={1: 1})
    save_draft(a, [r(0, 1), r(1, -1), r(1, 1, alternative=1)], now=later(1))
    assert "after the -1" in error_of(save_draft, a, [r(2, 1)], now=later(2)).message
    assert error_of(submit, a, finish_reason="solution", now=later(3)).field == "finish_reason"
    submit(a, finish_reason="found_error", now=later(4))
    assert chosen(a) == [(0, 0)]


def test_phase_one_without_alternatives_still_needs_no_uncorrected_minus_one():
    a = handed(steps=2, stop_at_first_error=False, allow_alternatives=False)
    err = error_of(submit, a, finish_reason="solution", ratings=[r(0, -1), r(1, 1)], now=later(1))
    assert "no step rated -1" in err.message


# Time -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "client, expected", [(None, 90_000), (30_000, 30_000), (500_000, 90_000), (-5, 0), (12_345.9, 12_345)]
)
def test_total_time_takes_the_client_visible_time_clamped_to_wall_time(client, expected):
    a = handed()
    done = submit(a, finish_reason="give_up", note="n", client_elapsed_ms=client, now=NOW + timedelta(seconds=90))
    assert done.total_time == expected


