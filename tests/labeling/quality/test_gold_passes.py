"""Gold passes are scored by a scheduled job, not in the submit (labeling/quality/gold_passes.py)."""
import re

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from labeling.models import GoldScore
from labeling.quality import gold_passes, screening
from labeling.work import queue
from tests.factories import gold_sweep_time, later, make_annotator, make_gold, make_project, make_solution, submit, take

pytestmark = pytest.mark.django_db


def statements(assignment, values):
    """The SQL a submit runs, with the numbers (ids, savepoint names) blanked out: its shape."""
    with CaptureQueriesContext(connection) as queries:
        submit(assignment, values, now=later(1))
    return [re.sub(r"\d+", "N", q["sql"]) for q in queries.captured_queries]


def test_a_gold_submit_runs_the_statements_of_an_ordinary_one_and_scores_later():
    project = make_project(quality_control_rate=0.0, gold_threshold=0.9, gold_min_passes=1, overlap=1)
    item = make_gold(project, [1, 1])
    make_solution(project, steps=2)
    make_solution(project, steps=2)  # gold is served only beside open ordinary work
    ordinary_pass = take(make_annotator(), project)
    project.quality_control_rate = 1.0
    project.save()
    ann = make_annotator()
    gold_pass = take(ann, project)
    assert gold_pass.solution_id == item.pk and not ordinary_pass.is_quality_control
    assert statements(gold_pass, [1, 0]) == statements(ordinary_pass, [1, 0])
    assert not GoldScore.objects.exists() and screening.status_of(ann, project) is None
    assert gold_passes.score_pending_gold_passes(now=gold_sweep_time()) == 1
    assert GoldScore.objects.get(assignment=gold_pass).exact_share == 0.5
    assert screening.status_of(ann, project).state == screening.PAUSED
    assert take(ann, project, 5) is None  # the next hand-out says so


def test_the_job_scores_each_pending_pass_once():
    project = make_project(quality_control_rate=1.0)
    make_gold(project, [1, -1])
    make_gold(project, [1, 1])
    make_solution(project)  # gold is served only beside open ordinary work
    passes = []
    for ann in (make_annotator(), make_annotator()):
        for n in range(2):
            a = take(ann, project, n)
            submit(a, [1, 1], now=later(n))
            passes.append(a.pk)
    assert gold_passes.score_pending_gold_passes(now=gold_sweep_time()) == 4
    assert sorted(GoldScore.objects.values_list("assignment_id", flat=True)) == sorted(passes)
    assert gold_passes.score_pending_gold_passes(now=gold_sweep_time()) == 0


def test_a_pass_deleted_before_the_job_is_left_alone():
    assert gold_passes.score_gold_pass(10**9) is None


def test_screening_passes_are_still_scored_with_the_submit():
    # The annotator knows they are in screening: nothing to hide, and the decision is immediate.
    project = make_project(requires_screening=True, screening_threshold=0.5)
    make_gold(project, [1, 1], is_screening=True)
    make_solution(project, steps=2)
    ann = make_annotator()
    a = take(ann, project)
    assert a.is_screening
    submit(a, [1, 1], now=later(1))
    assert GoldScore.objects.get(assignment=a).is_screening
    assert screening.status_of(ann, project).state == screening.ACTIVE


def test_a_gold_hand_out_makes_the_statements_of_an_ordinary_one(monkeypatch):
    # In one project (one rate: all an annotator could hold the two against), only the statement
    # that locks the solution differs (a gold item instead of open work). The draw is fixed so
    # the two hand-outs differ in whether gold was due and nothing else.
    project = make_project(overlap=2, quality_control_rate=0.5)
    make_gold(project, [1, 1])
    for _ in range(3):
        make_solution(project, steps=2)

    def hand_out(due):
        monkeypatch.setattr(queue, "quality_control_due", lambda rate: due)
        annotator = make_annotator()
        with CaptureQueriesContext(connection) as queries:
            got = take(annotator, project)
        # Numbers and flags blanked out: the written assignment says whether it is gold.
        return got.is_quality_control, [re.sub(r"\b(true|false)\b", "B", re.sub(r"\d+", "N", q["sql"]), flags=re.I)
                                        for q in queries.captured_queries]

    (gold, gold_sql), (ordinary, ordinary_sql) = hand_out(True), hand_out(False)
    assert gold and not ordinary
    assert len(gold_sql) == len(ordinary_sql)
    differing = [i for i, (g, o) in enumerate(zip(gold_sql, ordinary_sql)) if g != o]
    assert len(differing) <= 1, differing
