"""Gold passes are scored after the submit commits, in a job (labeling/quality/gold_passes.py)."""
import functools

import pytest
from django.test import TestCase

from labeling.models import GoldScore
from labeling.quality import gold_passes, screening
from labeling.work import submission
from tests.factories import later, make_annotator, make_gold, make_project, make_solution, take

pytestmark = pytest.mark.django_db


def submit_without_commit(assignment, values, now):
    """Submit; return the gold scoring jobs queued for the commit, without running anything."""
    ratings = [{"position": i, "value": v} for i, v in enumerate(values)]
    with TestCase.captureOnCommitCallbacks(execute=False) as queued:
        submission.submit(assignment, finish_reason="solution", ratings=ratings, now=now)
    return [job for job in queued
            if isinstance(job, functools.partial) and job.func == gold_passes.score_gold_pass.delay]


def test_a_gold_submit_scores_nothing_itself_and_queues_the_scoring_for_the_commit(eager):
    project = make_project(quality_control_rate=1.0, gold_threshold=0.9, gold_min_passes=1)
    make_gold(project, [1, 1])
    ann = make_annotator()
    a = take(ann, project)
    queued = submit_without_commit(a, [1, 0], later(1))
    assert not GoldScore.objects.exists()  # nothing gold-specific inside the submit
    assert screening.status_of(ann, project) is None
    assert len(queued) == 1
    queued[0]()  # the commit: the job runs (inline under ``eager``)
    assert GoldScore.objects.get(assignment=a).exact_share == 0.5
    assert screening.status_of(ann, project).state == screening.PAUSED


def test_an_ordinary_submit_queues_no_scoring(eager):
    project = make_project(quality_control_rate=0.0)
    make_gold(project, [1, 1])
    make_solution(project, steps=2)
    a = take(make_annotator(), project)
    assert not a.is_quality_control
    assert submit_without_commit(a, [1, 1], later(1)) == []


def test_passes_whose_job_was_lost_are_scored_by_the_sweep_once():
    project = make_project(quality_control_rate=1.0)
    make_gold(project, [1, -1])
    make_gold(project, [1, 1])
    people = [make_annotator() for _ in range(2)]
    passes = []
    for ann in people:
        for n in range(2):
            a = take(ann, project, n)
            submit_without_commit(a, [1, 1], later(n))  # the jobs are dropped
            passes.append(a.pk)
    assert gold_passes.score_pending_gold_passes() == 4
    assert sorted(GoldScore.objects.values_list("assignment_id", flat=True)) == sorted(passes)
    assert gold_passes.score_pending_gold_passes() == 0


def test_a_job_for_a_deleted_pass_does_nothing():
    assert gold_passes.score_gold_pass(10**9) is None


def test_screening_passes_are_still_scored_with_the_submit():
    # The annotator knows they are in screening: nothing to hide, and the decision is immediate.
    project = make_project(requires_screening=True, screening_threshold=0.5)
    make_gold(project, [1, 1], is_screening=True)
    make_solution(project, steps=2)
    ann = make_annotator()
    a = take(ann, project)
    assert a.is_screening
    assert submit_without_commit(a, [1, 1], later(1)) == []
    assert GoldScore.objects.get(assignment=a).is_screening
    assert screening.status_of(ann, project).state == screening.ACTIVE
