"""``"chosen": true`` on a rating item through the HTTP API: the pick of the alternative a
phase-1 pass goes on from after a -1 (labeling/work/submission.py ``_continuation``)."""
import pytest

from labeling.models import Assignment

from tests.factories import make_project, make_solution, make_user, token_client

from .test_work_api import finish, r, stored, take

pytestmark = pytest.mark.django_db

PHASE_ONE = dict(stop_at_first_error=False, allow_alternatives=True, allow_human_steps=False)


@pytest.fixture
def ann():
    return token_client(make_user("alice", "annotator"))


@pytest.fixture
def task(ann):
    project = make_project(**PHASE_ONE)
    make_solution(project, steps=3, alternatives={1: 2})
    return take(ann, project)["id"]


def rated(pick=None, **extra):
    items = [r(0, 1), r(1, -1), r(1, 0, alternative=1), r(1, 1, alternative=2), r(2, 1)]
    if pick is not None:
        items[pick] = {**items[pick], "chosen": True, **extra}
    return items


def test_the_submit_takes_the_pick_and_stores_it_as_the_chosen_rating(ann, task):
    answer = finish(ann, task, finish_reason="solution", ratings=rated(pick=2))
    assert answer.status_code == 200, answer.content
    assert {k for k, (_, _, chosen) in stored(task).items() if chosen} == {(0, 0), (1, 1), (2, 0)}


def test_without_a_pick_the_lowest_plus_one_alternative_is_chosen(ann, task):
    assert finish(ann, task, finish_reason="solution", ratings=rated()).status_code == 200
    assert {k for k, (_, _, chosen) in stored(task).items() if chosen} == {(0, 0), (1, 2), (2, 0)}


@pytest.mark.parametrize("pick, extra, field", [
    (1, {}, "ratings[1].chosen"),  # the -1 own step
    (0, {}, "ratings[0].chosen"),  # an own step rated +1: nothing to pick there
    (3, {"chosen": "maybe"}, "ratings[3].chosen"),  # not a boolean
])
def test_a_pick_that_cannot_be_one_is_a_400_naming_it_and_nothing_is_submitted(ann, task, pick, extra, field):
    answer = finish(ann, task, finish_reason="solution", ratings=rated(pick=pick, **extra))
    assert answer.status_code == 400, answer.content
    assert answer.json()["field"] == field
    assert Assignment.objects.get(pk=task).state == Assignment.ACTIVE
