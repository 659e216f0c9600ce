"""Undo a submit (labeling/work/submission.py ``unsubmit``): the window, "nothing used it yet", the slot."""
import re

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from labeling.models import Assignment, GoldProposal, GoldScore, Rating
from labeling.quality import consensus, gold, gold_passes
from labeling.stats import cache as stats_cache
from labeling.work import queue
from labeling.work.submission import UNDO_SECONDS, UNDO_USED, UNDO_WINDOW_PASSED, LabelingError, unsubmit
from tests.factories import later, make_annotator, make_gold, make_project, make_solution, submit, take

pytestmark = pytest.mark.django_db


def ratings_of(assignment):
    return sorted(Rating.objects.filter(assignment=assignment).values_list("step__position", "value"))


def test_an_undo_in_the_window_reopens_the_pass_as_sent_and_it_keeps_its_slot():
    project = make_project(overlap=1, lease_seconds=600)
    make_solution(project, steps=3)
    a = take(make_annotator(), project)
    submit(a, [1, 0, -1], now=later(0))
    unsubmit(a, now=later(UNDO_SECONDS))  # the window's last moment still counts
    a.refresh_from_db()
    assert (a.state, a.submitted_at, a.finish_reason, a.submit_key) == (Assignment.ACTIVE, None, None, None)
    assert a.lease_expires_at == later(UNDO_SECONDS + 600) and a.last_activity_at == later(UNDO_SECONDS)
    assert ratings_of(a) == [(0, 1), (1, 0), (2, -1)]
    a.solution.refresh_from_db()
    assert (a.solution.live_assignments, a.solution.is_full) == (1, True)
    assert take(make_annotator(), project, UNDO_SECONDS + 1) is None  # nobody else gets its slot
    submit(a, [1, 1, 1], now=later(UNDO_SECONDS + 2))  # and it is submitted again as any pass
    a.refresh_from_db()
    assert a.state == Assignment.SUBMITTED and ratings_of(a) == [(0, 1), (1, 1), (2, 1)]


def test_an_undo_is_idempotent():
    project = make_project()
    make_solution(project)
    a = take(make_annotator(), project)
    submit(a, [1, 1, 1], now=later(0))
    unsubmit(a, now=later(1))
    unsubmit(a, now=later(UNDO_SECONDS + 30))  # already open: answered as it is, whatever the time
    a.refresh_from_db()
    assert a.state == Assignment.ACTIVE and ratings_of(a) == [(0, 1), (1, 1), (2, 1)]


def test_after_the_window_the_pass_stays_submitted():
    project = make_project()
    make_solution(project)
    a = take(make_annotator(), project)
    submit(a, [1, 1, 1], now=later(0))
    with pytest.raises(LabelingError) as refused:
        unsubmit(a, now=later(UNDO_SECONDS + 1))
    assert (refused.value.status, refused.value.message) == (409, UNDO_WINDOW_PASSED)
    a.refresh_from_db()
    assert a.state == Assignment.SUBMITTED


def _refused_as_used(a, now):
    with pytest.raises(LabelingError) as refused:
        unsubmit(a, now=now)
    assert (refused.value.status, refused.value.message) == (409, UNDO_USED)
    a.refresh_from_db()
    assert a.state == Assignment.SUBMITTED


def test_a_scored_pass_cannot_be_undone():
    project = make_project(quality_control_rate=1.0)
    make_gold(project, [1, 1, 1])
    make_solution(project)  # gold is served only beside open ordinary work
    a = take(make_annotator(), project)
    assert a.is_quality_control
    submit(a, [1, 1, 1], now=later(0))
    a.refresh_from_db()
    assert gold.score_gold_pass(a) is not None  # scored (the sweep waits past the window; this did not)
    _refused_as_used(a, later(1))


def test_a_pass_counted_in_a_review_since_its_submit_cannot_be_undone():
    project = make_project(overlap=3)
    solution = make_solution(project)
    a, b = take(make_annotator(), project), take(make_annotator(), project)
    submit(b, [1, 1, 1], now=later(0))
    submit(a, [1, 1, 1], now=later(0))
    consensus.adjudicate(solution, {(0, 0): 1})  # decided now, after the submits at NOW
    _refused_as_used(a, later(1))
    consensus.adjudicate(solution, {(0, 0): None})
    GoldProposal.objects.create(solution=solution, ratings=[[0, 0, 1]], votes=2)
    _refused_as_used(b, later(1))


def test_a_screening_pass_cannot_be_undone():
    project = make_project(requires_screening=True)
    make_gold(project, [1, 1, 1], is_screening=True)
    a = take(make_annotator(), project)
    assert a.solution.is_screening
    submit(a, [1, 1, 1], now=later(0))
    _refused_as_used(a, later(1))


def test_the_gold_sweep_leaves_a_pass_alone_in_its_window_and_an_undo_stops_it():
    project = make_project(quality_control_rate=1.0)
    make_gold(project, [1, 1, 1])
    make_solution(project)
    a = take(make_annotator(), project)
    submit(a, [1, 0, 1], now=later(0))
    assert gold_passes.score_pending_gold_passes(now=later(UNDO_SECONDS)) == 0
    unsubmit(a, now=later(UNDO_SECONDS))
    assert gold_passes.score_pending_gold_passes(now=later(3600)) == 0  # open again: nothing to score
    assert gold_passes.score_gold_pass(a.pk) is None and not GoldScore.objects.exists()


def statements(assignment, now):
    """The SQL an undo runs, with the numbers (ids, savepoint names, times) blanked out: its shape."""
    with CaptureQueriesContext(connection) as queries:
        unsubmit(assignment, now=now)
    return [re.sub(r"\d+", "N", q["sql"]) for q in queries.captured_queries]


def test_a_gold_undo_runs_the_statements_of_an_ordinary_one():
    project = make_project(quality_control_rate=0.0, overlap=1)
    item = make_gold(project, [1, 1])
    make_solution(project, steps=2)
    make_solution(project, steps=2)  # gold is served only beside open ordinary work
    ordinary_pass = take(make_annotator(), project)
    project.quality_control_rate = 1.0
    project.save()
    gold_pass = take(make_annotator(), project)
    assert gold_pass.solution_id == item.pk and not ordinary_pass.is_quality_control
    for a in (ordinary_pass, gold_pass):
        submit(a, [1, 0], now=later(0))
    assert statements(gold_pass, later(2)) == statements(ordinary_pass, later(2))


def test_the_reopened_pass_comes_back_before_the_task_handed_out_after_it():
    project = make_project()
    make_solution(project)
    make_solution(project)
    ann = make_annotator()
    a = take(ann, project)
    submit(a, [1, 1, 1], now=later(0))
    b = take(ann, project, 1)  # the workspace takes the next task at once
    assert b.pk != a.pk
    unsubmit(a, now=later(2))
    assert take(ann, project, 3).pk == a.pk


def test_an_undo_moves_the_dashboard_on(django_capture_on_commit_callbacks):
    project = make_project()
    make_solution(project)
    a = take(make_annotator(), project)
    with django_capture_on_commit_callbacks(execute=True):
        submit(a, [1, 1, 1], now=later(0))
    before = stats_cache.version(project)
    with django_capture_on_commit_callbacks(execute=True):
        unsubmit(a, now=later(1))
    assert stats_cache.version(project) > before
    with django_capture_on_commit_callbacks(execute=True):
        queue.touch(a, later(2))  # a draft save's touch is not a change of the figures
    assert stats_cache.version(project) == before + 1
