"""The lock-and-sheet function (migration 0008) reads what the separate statements read.

``submission.save_draft`` and ``submit`` take the solution's lock, reload the assignment and
read its sheet through ``stepmark_lock_sheet`` on PostgreSQL; without the function they run
``queue.lock_solution`` and ``submission._sheet``. Both are asked here about the same
assignments, in states that exercise every part of the sheet.
"""
import pytest
from django.db import transaction

from labeling.models import Assignment, Solution
from labeling.work import queue, submission
from tests.factories import NOW, later, make_annotator, make_project, make_solution

pytestmark = pytest.mark.django_db


def both(assignment, settings):
    """``(fields, sheet)`` as each path reads them, on fresh copies of ``assignment``."""
    answers = []
    for functions in (True, False):
        settings.STEPMARK_QUEUE_FUNCTIONS = functions
        copy = Assignment.objects.select_related("project", "solution").get(pk=assignment.pk)
        with transaction.atomic():
            solution, sheet = submission._lock_with_sheet(copy)
            if sheet is None:
                sheet = submission._sheet(copy)
        fields = {name: getattr(copy, name) for name in queue.MUTABLE_FIELDS}
        entries = {
            key: ({f.attname: getattr(e.step, f.attname) for f in e.step._meta.concrete_fields},
                  e.value, e.flagged, e.stored, e.chosen)
            for key, e in sheet.items()
        }
        answers.append((solution.pk, fields, entries))
    return answers


def test_the_function_reads_what_the_separate_statements_read(settings):
    project = make_project(overlap=2, stop_at_first_error=False, allow_alternatives=True, allow_human_steps=True)
    make_solution(project, steps=3, alternatives={1: 1})
    mine = queue.next_assignment(make_annotator(), project, now=NOW)
    theirs = queue.next_assignment(make_annotator(), project, now=NOW)
    # Human steps by both annotators at position 1; ratings, a flag, a cleared rating.
    submission.save_draft(theirs, [{"position": 0, "value": 1}, {"position": 1, "value": -1},
                                  {"position": 1, "alternative": 1, "value": -1},
                                  {"position": 1, "human_text": "their step", "value": 1}], now=later(1))
    submission.save_draft(mine, [{"position": 0, "value": 1, "flagged": True}, {"position": 1, "value": -1},
                                {"position": 1, "alternative": 1, "value": -1},
                                {"position": 1, "human_text": "my step", "value": 1},
                                {"position": 2, "value": 0}], now=later(2))
    submission.save_draft(mine, [{"position": 2, "value": None}], now=later(3))
    with_function, without = both(mine, settings)
    assert with_function == without
    sheet = with_function[2]
    assert [e[0]["text"] for key, e in sorted(sheet.items()) if e[0]["source"] == "human"] == ["my step"]
    assert sheet[(0, 0)][1:4] == (1, True, True) and sheet[(2, 0)][3] is False

    submission.submit(mine, finish_reason="solution", ratings=[{"position": 2, "value": 1}], now=later(4))
    with_function, without = both(mine, settings)
    assert with_function == without
    assert with_function[1]["state"] == Assignment.SUBMITTED and with_function[1]["submitted_at"] == later(4)
    assert any(e[4] for e in with_function[2].values())  # the chosen flags


def test_a_missing_solution_or_assignment_is_reported(settings):
    settings.STEPMARK_QUEUE_FUNCTIONS = True
    project = make_project()
    make_solution(project)
    task = queue.next_assignment(make_annotator(), project, now=NOW)
    gone = Assignment(pk=task.pk + 1000, solution_id=task.solution_id, project=project)
    with transaction.atomic(), pytest.raises(Assignment.DoesNotExist):
        submission._lock_with_sheet(gone)
    orphan = Assignment(pk=task.pk, solution_id=task.solution_id + 1000, project=project)
    with transaction.atomic(), pytest.raises(Solution.DoesNotExist):
        submission._lock_with_sheet(orphan)


@pytest.mark.parametrize("state", [Assignment.ACTIVE, Assignment.EXPIRED, Assignment.SUBMITTED])
def test_both_reload_what_changed_since_the_assignment_was_read(state, settings):
    """The mutable fields come from the row as committed, not from the caller's copy; a fresh pass has no ratings."""
    project = make_project(allow_alternatives=True)
    make_solution(project, steps=2, alternatives={0: 1})
    task = queue.next_assignment(make_annotator(), project, now=NOW)
    Assignment.objects.filter(pk=task.pk).update(
        state=state, last_activity_at=later(7), lease_expires_at=later(8), total_time=5,
        **({"finish_reason": "give_up", "finish_note": "n", "submitted_at": later(9), "submit_key": "k"}
           if state == Assignment.SUBMITTED else {}))
    answers = []
    for functions in (True, False):
        settings.STEPMARK_QUEUE_FUNCTIONS = functions
        stale = Assignment.objects.select_related("project", "solution").get(pk=task.pk)
        stale.state, stale.lease_expires_at, stale.total_time = Assignment.ACTIVE, NOW, None
        with transaction.atomic():
            _, sheet = submission._lock_with_sheet(stale)
            sheet = sheet if sheet is not None else submission._sheet(stale)
        answers.append(({name: getattr(stale, name) for name in queue.MUTABLE_FIELDS},
                        sorted((key, e.value, e.stored) for key, e in sheet.items())))
    assert answers[0] == answers[1]
    fields, sheet = answers[0]
    assert (fields["state"], fields["lease_expires_at"], fields["total_time"]) == (state, later(8), 5)
    assert sheet == [((0, 0), None, False), ((0, 1), None, False), ((1, 0), None, False)]
