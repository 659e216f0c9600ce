"""The submission rules' shared test vectors through the server.

tests/vectors/submission_rules.json holds scenarios of the phase-1 and phase-2 rules with what
the server answers; frontend/tests/sequence.test.js runs the page's copy of the rules
(sequence.js) on the same file, so the two cannot drift apart. Here each scenario's ratings
go with a real ``submission.submit`` of a freshly handed-out assignment, once per finish
reason (each try rolled back), and the answer must be the one the file states. The payload
the page would load for the scenario's ratings is checked too: the node suite builds that
shape itself from the same file.
"""
import json

import pytest
from django.db import transaction

from labeling.api.work_serializers import present
from labeling.models import Assignment
from labeling.work import queue, submission
from tests.conftest import ROOT
from tests.factories import NOW, later, make_annotator, make_project, make_solution

pytestmark = pytest.mark.django_db

VECTORS = json.loads((ROOT / "tests" / "vectors" / "submission_rules.json").read_text())["scenarios"]
RULED = ("found_error", "solution")


def handed(scenario):
    project = make_project(**scenario["project"])
    alternatives = {int(position): n for position, n in scenario["alternatives"].items()}
    make_solution(project, steps=scenario["steps"], alternatives=alternatives)
    return queue.next_assignment(make_annotator(), project, now=NOW)


def answer(assignment, reason, ratings, note=""):
    """"accepted", or the field the server names when it refuses; nothing it did is kept."""
    fresh = Assignment.objects.select_related("project", "solution").get(pk=assignment.pk)
    with transaction.atomic():
        try:
            submission.submit(fresh, finish_reason=reason, note=note, ratings=json.loads(json.dumps(ratings)),
                              now=later(60))
        except submission.LabelingError as refused:
            found = refused.field
        else:
            found = "accepted"
        transaction.set_rollback(True)
    return found


def test_the_vectors_cover_both_phases_and_every_rule_family():
    names = " ".join(s["name"] for s in VECTORS)
    assert 20 <= len(VECTORS) <= 40 and len({s["name"] for s in VECTORS}) == len(VECTORS)
    for words in ("phase 1", "phase 2", "own step", "out of order", "past the first -1", "alternative", "unrated"):
        assert words in names
    assert {s["page"] for s in VECTORS} == {None, "found_error", "solution"}


@pytest.mark.parametrize("scenario", VECTORS, ids=[s["name"] for s in VECTORS])
def test_the_server_answers_each_scenario_as_the_vectors_say(scenario):
    assignment = handed(scenario)
    ratings = scenario["ratings"]
    got = {reason: answer(assignment, reason, ratings) for reason in RULED}
    refused_ratings = scenario.get("ratings_refused")
    if refused_ratings:
        assert got == {reason: refused_ratings for reason in RULED}
        assert answer(assignment, "give_up", ratings, note="stuck") == refused_ratings
        return
    assert got == {**{reason: "accepted" for reason in scenario["accepts"]}, **scenario["refusals"]}
    # give_up and bad_problem end a pass anywhere, with a note.
    assert answer(assignment, "give_up", ratings, note="stuck") == "accepted"
    assert answer(assignment, "bad_problem", ratings, note="ambiguous") == "accepted"
    assert answer(assignment, "give_up", ratings, note=" ") == "note"


def page_payload(scenario):
    """The assignment payload's ``steps`` and ``ratings`` as sequence.test.js builds them from a scenario."""
    steps, ratings = [], []
    human = {r["position"]: r for r in scenario["ratings"] if "human_text" in r}
    for position in range(scenario["steps"]):
        count = scenario["alternatives"].get(str(position), 0)
        alternatives = [{"alternative": a, "text": f"step {position}.{a}", "source": "model"} for a in range(count + 1)]
        if position in human:
            alternatives.append({"alternative": count + 1, "text": human[position]["human_text"], "source": "human"})
        steps.append({"position": position, "alternatives": alternatives})
    for item in scenario["ratings"]:
        if "human_text" in item:
            alternative = 1 + scenario["alternatives"].get(str(item["position"]), 0)
        elif item["value"] is None:
            continue  # a cleared rating leaves no row
        else:
            alternative = item["alternative"]
        ratings.append({"position": item["position"], "alternative": alternative, "value": item["value"],
                        "flagged": False})
    return steps, sorted(ratings, key=lambda r: (r["position"], r["alternative"]))


@pytest.mark.parametrize("scenario", [s for s in VECTORS if not s.get("ratings_refused")],
                         ids=[s["name"] for s in VECTORS if not s.get("ratings_refused")])
def test_the_page_loads_the_payload_the_node_suite_builds(scenario):
    """Saved as a draft, the scenario's ratings come back in the shape sequence.test.js gives sequence()."""
    assignment = handed(scenario)
    submission.save_draft(assignment, json.loads(json.dumps(scenario["ratings"])), now=later(30))
    stored = Assignment.objects.select_related("project", "solution__problem").get(pk=assignment.pk)
    payload = present(stored)
    assert (payload["steps"], payload["ratings"]) == page_payload(scenario)
    assert {k: payload["project"][k] for k in scenario["project"]} == scenario["project"]
