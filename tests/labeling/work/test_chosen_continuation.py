"""The alternative a phase-1 pass goes on from after a -1: the default, or the annotator's pick.

The scenarios with ``continues`` in tests/vectors/submission_rules.json are submitted as
``solution`` here, and the chosen flags the server stores (PRM800K's ``chosen_completion`` on
export) must be the ones the file states; frontend/tests/sequence.test.js checks that the page
marks the same alternatives ``continues``.
"""
import json

import pytest

from labeling.models import Rating
from labeling.work import submission
from tests.factories import later

from .test_rule_vectors import VECTORS, handed

pytestmark = pytest.mark.django_db

GOING_ON = [s for s in VECTORS if "continues" in s]


def test_some_scenarios_say_where_the_pass_goes_on():
    assert len(GOING_ON) >= 3
    assert any(any(r.get("chosen") for r in s["ratings"]) for s in GOING_ON)


@pytest.mark.parametrize("scenario", GOING_ON, ids=[s["name"] for s in GOING_ON])
def test_the_server_marks_chosen_the_alternative_the_vectors_name(scenario):
    assignment = handed(scenario)
    submission.submit(assignment, finish_reason="solution", ratings=json.loads(json.dumps(scenario["ratings"])),
                      now=later(60))
    chosen = {
        (r.step.position, r.step.alternative)
        for r in Rating.objects.filter(assignment=assignment, chosen=True).select_related("step")
    }
    for position, alternative in scenario["continues"].items():
        at = {a for p, a in chosen if p == int(position)}
        assert at == {alternative}


def pick_scenario():
    return next(s for s in GOING_ON if any(r.get("chosen") for r in s["ratings"]))


@pytest.mark.parametrize("index, value", [(1, -1), (2, 0)])
def test_a_pick_of_the_own_step_or_an_alternative_rated_minus_one_is_refused_naming_the_item(index, value):
    scenario = pick_scenario()
    ratings = json.loads(json.dumps(scenario["ratings"]))
    for r in ratings:
        r.pop("chosen", None)
    ratings[index] = {**ratings[index], "chosen": True}  # ratings[1]: the own step -1; ratings[2]: alternative 1
    if index == 2:
        ratings[2]["value"] = -1
    with pytest.raises(submission.LabelingError) as refused:
        submission.submit(handed(scenario), finish_reason="solution", ratings=ratings, now=later(60))
    assert refused.value.field == f"ratings[{index}].chosen"


def test_two_picks_at_one_step_are_refused():
    scenario = pick_scenario()
    ratings = json.loads(json.dumps(scenario["ratings"]))
    ratings[3] = {**ratings[3], "chosen": True}
    with pytest.raises(submission.LabelingError) as refused:
        submission.submit(handed(scenario), finish_reason="solution", ratings=ratings, now=later(60))
    assert refused.value.field == "ratings[4]"
    assert "Pick one alternative" in str(refused.value)
