"""Standing in a project (labeling/quality/screening.py): screening, automatic pausing, resume, exports."""
import json

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command

from labeling.models import Annotator, AnnotatorProjectStatus, Assignment
from labeling.quality import gold, screening
from tests.factories import later, make_annotator, make_gold, make_project, make_solution, score_gold, submit, take

pytestmark = pytest.mark.django_db


def state(annotator, project):
    """The standing the annotator's my-status answer gives."""
    return screening.my_status(annotator, project)["state"]


# Screening ------------------------------------------------------------------------------


@pytest.fixture
def screened():
    """A project that screens with two items (gold [1, 1, -1]) and has gold and ordinary work."""
    project = make_project(requires_screening=True, screening_threshold=0.8, quality_control_rate=1.0, overlap=2)
    items = [make_solution(project, steps=3) for _ in range(2)]
    for item in items:
        gold.set_gold(item, {(0, 0): 1, (1, 0): 1, (2, 0): -1}, screening=True)
    make_solution(project, steps=3, is_screening=True)  # no gold ratings: not part of the set
    quality = make_gold(project, [1, 1])
    ordinary = make_solution(project, steps=2)
    return project, items, quality, ordinary


def test_a_newcomer_gets_the_screening_items_in_order_and_nothing_else_until_done(screened):
    project, items, quality, ordinary = screened
    ann = make_annotator()
    first = take(ann, project)
    assert (first.solution_id, first.is_screening, first.generation, first.served_by) == (
        items[0].pk, True, None, "screening")
    assert state(ann, project) == screening.SCREENING
    assert take(ann, project, 1).pk == first.pk  # unfinished: the same item comes back
    assert screening.my_status(ann, project)["message"] == "screening: 0 of 2 done"
    submit(first, [1, 1, -1], now=later(2))
    second = take(ann, project, 3)
    assert second.solution_id == items[1].pk
    assert screening.my_status(ann, project) == {
        "project": project.pk, "state": "screening", "done": 1, "total": 2, "message": "screening: 1 of 2 done",
        "reason": "", "results": "0.0"}
    # Neither gold nor ordinary work reached them, each screening item came once.
    assert list(Assignment.objects.filter(annotator=ann).values_list("solution_id", flat=True).order_by("pk")) == [
        items[0].pk, items[1].pk]


def test_passing_screening_opens_the_real_work(screened):
    project, items, quality, ordinary = screened
    ann = make_annotator()
    submit(take(ann, project), [1, 1, -1], now=later(1))
    submit(take(ann, project, 2), [1, 1, 1], now=later(3))  # 2 of 3 exact: mean (1 + 2/3) / 2 = 0.83
    row = screening.status_of(ann, project)
    assert (row.state, row.screening_score, row.decided_by) == ("active", pytest.approx(5 / 6), None)
    assert row.reason == "screening score 0.83 >= 0.80 over 2 items"
    assert screening.my_status(ann, project)["message"] == "passed"
    assert take(ann, project, 4).solution_id == quality.pk  # gold at rate 1, then work
    assert take(make_annotator(), project, 4).solution_id == items[0].pk  # the next newcomer is screened


def test_failing_screening_blocks_work_until_a_lead_resumes(screened):
    project, items, quality, ordinary = screened
    lead = get_user_model().objects.create_user("lead-screening")
    ann = make_annotator()
    submit(take(ann, project), [1, 1, -1], now=later(1))
    submit(take(ann, project, 2), [1, -1], now=later(3))  # 1 of 2: mean (1 + 0.5) / 2 = 0.75 < 0.8
    row = screening.status_of(ann, project)
    assert (row.state, row.screening_score) == ("failed_screening", pytest.approx(0.75))
    assert take(ann, project, 4) is None
    assert screening.my_status(ann, project)["message"] == "failed — a lead will review"
    screening.resume(ann, project, lead)
    assert take(ann, project, 5).solution_id == quality.pk
    assert screening.status_of(ann, project).decided_by == lead
    assert screening.my_status(ann, project)["message"] == "active"


def test_screening_size_limits_the_set_to_the_first_items(screened):
    project, items, *_ = screened
    project.screening_size = 1
    project.save()
    ann = make_annotator()
    submit(take(ann, project), [1, 1, -1])
    assert state(ann, project) == "active"
    assert take(ann, project, 1).solution_id not in {i.pk for i in items}


def test_without_screening_items_nobody_gets_past_screening(screened):
    project, items, *_ = screened
    for item in items:
        gold.unset_gold(item)
    ann = make_annotator()
    assert take(ann, project) is None
    assert screening.my_status(ann, project)["message"] == "screening: 0 of 0 done"


def test_someone_who_worked_before_screening_was_required_is_not_screened(screened):
    project, items, quality, ordinary = screened
    veteran = make_annotator()
    Assignment.objects.create(project=project, solution=ordinary, annotator=veteran, state=Assignment.SUBMITTED,
                              source_hash="imported")
    make_solution(project)  # gold is served only beside open ordinary work
    assert take(veteran, project).solution_id == quality.pk
    assert state(veteran, project) == "active"


def test_screening_items_stay_out_of_projects_that_do_not_screen(screened):
    project, items, quality, ordinary = screened
    project.requires_screening = False
    project.save()
    ann = make_annotator()
    served = [take(ann, project, n) for n in range(2)]
    assert served[0].solution_id == quality.pk and served[1].pk == served[0].pk
    assert not AnnotatorProjectStatus.objects.exists()


# Automatic pausing ----------------------------------------------------------------------


def gold_project(threshold, **fields):
    """Gold at rate 1 over four-step gold items [1, 1, 1, 1]; ordinary work too."""
    project = make_project(quality_control_rate=1.0, gold_threshold=threshold, gold_min_passes=2, **fields)
    items = [make_gold(project, [1, 1, 1, 1]) for _ in range(6)]
    make_solution(project, steps=1)
    return project, items


def rate_gold(ann, project, exact_values, start=0):
    """Submit one gold pass per entry: four ratings, of which the first ``n`` equal the gold."""
    for k, n in enumerate(exact_values):
        a = take(ann, project, start + k)
        assert a.is_quality_control
        submit(a, [1] * n + [0] * (4 - n), now=later(start + k))
        score_gold()


@pytest.mark.parametrize("threshold, expected", [(0.75, "active"), (0.7501, "paused"), (0.7499, "active")])
def test_pausing_happens_strictly_below_the_threshold(threshold, expected):
    project, _ = gold_project(threshold)
    ann = make_annotator()
    rate_gold(ann, project, [4, 2])  # exact shares 1.0 and 0.5: rolling 0.75
    assert gold.rolling_gold_score(ann, project) == 0.75
    assert state(ann, project) == expected
    assert (take(ann, project, 10) is None) == (expected == "paused")


def test_a_pause_names_the_figures_and_stops_all_work():
    project, _ = gold_project(0.75)
    ann = make_annotator()
    rate_gold(ann, project, [4, 2])
    assert state(ann, project) == "active"
    unfinished = take(ann, project, 5)
    submit(unfinished, [1, 1, 0, 0], now=later(6))  # rolling (1 + 0.5 + 0.5) / 3 = 0.67
    score_gold()
    row = screening.status_of(ann, project)
    assert (row.state, row.decided_by) == ("paused", None)
    assert row.reason == "rolling gold score 0.67 < 0.75 over last 3 gold passes"
    assert take(ann, project, 7) is None
    assert screening.my_status(ann, project)["message"] == "paused — a lead will review"
    assert "0.67" not in json.dumps(screening.my_status(ann, project))


def test_a_paused_annotator_does_not_get_their_unfinished_assignment_back():
    project, _ = gold_project(0.0)
    ann = make_annotator()
    assert take(ann, project) is not None
    screening.pause(ann, project, reason="sloppy")
    assert take(ann, project, 1) is None
    assert screening.status_of(ann, project).reason == "sloppy"


def test_too_few_gold_passes_never_pause():
    project, _ = gold_project(0.75, gold_window=5)
    project.gold_min_passes = 3
    project.save()
    ann = make_annotator()
    rate_gold(ann, project, [0, 0])
    assert state(ann, project) == "active"
    rate_gold(ann, project, [0], start=2)
    assert state(ann, project) == "paused"


def test_resume_restores_work_and_judges_only_new_gold_passes():
    project, items = gold_project(0.75)
    ann = make_annotator()
    rate_gold(ann, project, [0, 0])
    assert state(ann, project) == "paused" and take(ann, project, 3) is None
    screening.resume(ann, project, now=later(4))
    had = set(Assignment.objects.filter(annotator=ann).values_list("solution_id", flat=True))
    back = take(ann, project, 5)
    assert back.solution_id in {item.pk for item in items} - had
    rate_gold(ann, project, [4, 4], start=6)
    # The rolling score still holds the old passes, but the resume started a fresh record.
    assert gold.rolling_gold_score(ann, project) == 0.5
    assert state(ann, project) == "active"
    rate_gold(ann, project, [1], start=8)  # since the resume: (1 + 1 + 0.25) / 3 = 0.75
    assert state(ann, project) == "active"
    rate_gold(ann, project, [0], start=9)
    assert state(ann, project) == "paused"


def test_a_global_pause_still_wins():
    project, _ = gold_project(0.0)
    ann = make_annotator(status=Annotator.PAUSED)
    assert take(ann, project) is None


# Exports --------------------------------------------------------------------------------


def test_export_can_leave_out_paused_annotators(tmp_path):
    project = make_project(overlap=3)
    make_solution(project, steps=1)
    people = [make_annotator() for _ in range(3)]
    for n, ann in enumerate(people):
        submit(take(ann, project, n), [1], now=later(n))
    screening.pause(people[1], project, reason="test")
    AnnotatorProjectStatus.objects.create(annotator=people[2], project=project, state="failed_screening")
    assert screening.paused_annotator_ids(project) == (people[1].pk, people[2].pk)
    everyone, kept = tmp_path / "all.jsonl", tmp_path / "kept.jsonl"
    call_command("export_prm800k", project=project.name, output=str(everyone), quiet=True)
    call_command("export_prm800k", "--exclude-paused", project=project.name, output=str(kept), quiet=True)
    labelers = [json.loads(line)["labeler"] for line in kept.read_text().splitlines()]
    assert labelers == [str(people[0].uuid)]
    assert len(everyone.read_text().splitlines()) == 3
