"""People against the PRM: the champion's step scores beside people's consensus, most disagreement first."""
import pytest
from django.urls import reverse

from labeling.access.roles import ANNOTATOR, LEAD, RESEARCHER
from labeling.quality.consensus import adjudicate
from scoring.models import Checkpoint, SolutionScore
from scoring.people import people_vs_prm
from tests.factories import client_for, make_annotator, make_project, make_solution, make_user, rated_pass

pytestmark = pytest.mark.django_db


def scored(checkpoint, solution, steps):
    SolutionScore.objects.create(checkpoint=checkpoint, solution=solution, score=None, step_scores=steps)


@pytest.fixture
def loop():
    """A project whose champion scored three rated solutions, and the steps it and people disagree on."""
    project = make_project()
    older = Checkpoint.objects.create(project=project, status=Checkpoint.REJECTED)
    best = Checkpoint.objects.create(project=project, status=Checkpoint.CHAMPION, is_champion=True)
    ann, bob = make_annotator("ann"), make_annotator("bob")
    # Both found step 2 wrong; the champion trusted it (0.95) and doubted step 1 (0.2).
    first = make_solution(project, steps=3, generation=0, is_correct=False)
    for who in (ann, bob):
        rated_pass(first, who, [1, 1, -1])
    scored(best, first, [0.9, 0.2, 0.95])
    # Step 0: the passes tie (+1, -1) and a lead ruled +1; step 1: a neutral 0 counts as correct.
    second = make_solution(project, steps=2, generation=0)
    rated_pass(second, ann, [1, 0])
    rated_pass(second, bob, [-1, 0])
    adjudicate(second, {(0, 0): 1})
    scored(best, second, [0.6, 0.3])
    # A step the model could not read (null) is not compared.
    unread = make_solution(project, steps=1, generation=0)
    rated_pass(unread, ann, [1])
    scored(best, unread, [None])
    # Rated, but scored only by an earlier checkpoint: counted as unscored.
    earlier = make_solution(project, steps=2, generation=0)
    rated_pass(earlier, ann, [-1])
    scored(older, earlier, [0.99, 0.99])
    # Scored but not rated, a gold item and another project's work: left out.
    scored(best, make_solution(project, steps=2), [0.1, 0.1])
    gold = make_solution(project, steps=1, is_gold=True)
    rated_pass(gold, ann, [-1])
    scored(best, gold, [1.0])
    theirs = make_project()
    other = make_solution(theirs, steps=1)
    rated_pass(other, ann, [-1])
    scored(Checkpoint.objects.create(project=theirs, status=Checkpoint.CHAMPION, is_champion=True), other, [1.0])
    return project, best, first, second


def test_steps_come_by_disagreement_with_both_values(loop):
    project, best, first, second = loop
    checkpoint, rows, unscored = people_vs_prm(project)
    assert checkpoint == best and unscored == 1
    assert [(r.solution, r.position) for r in rows] == [
        (first.pk, 2), (first.pk, 1), (second.pk, 1), (second.pk, 0), (first.pk, 0)]
    assert [r.disagreement for r in rows] == pytest.approx([0.95, 0.8, 0.7, 0.4, 0.1])
    top = rows[0]
    assert (top.prm, top.people, top.target, top.votes, top.adjudicated) == (0.95, -1, 0.0, {-1: 2}, False)
    neutral, ruled = rows[2], rows[3]
    assert (neutral.people, neutral.target) == (0, 1.0)
    assert (ruled.people, ruled.target, ruled.adjudicated, ruled.votes) == (1, 1.0, True, {1: 1, -1: 1})


def test_without_a_champion_nothing_is_compared(loop):
    project, best, *_ = loop
    Checkpoint.objects.filter(pk=best.pk).update(is_champion=False, status=Checkpoint.REJECTED)
    checkpoint, rows, unscored = people_vs_prm(project)
    assert (checkpoint, rows, unscored) == (None, [], 4)


def url(project, **params):
    query = "&".join(f"{k}={v}" for k, v in params.items())
    return reverse("scoring:project-people-vs-prm", args=[project.pk]) + (f"?{query}" if query else "")


@pytest.mark.parametrize("role", [LEAD, RESEARCHER])
def test_leads_and_researchers_read_it_paged_and_linked_to_the_solution(loop, role):
    project, best, first, second = loop
    client = client_for(make_user(f"a-{role}", role, projects=[project]))
    body = client.get(url(project, limit=2)).json()
    assert (body["checkpoint"], body["neutral"], body["count"], body["unscored"]) == (best.pk, "positive", 5, 1)
    assert [(r["solution"], r["position"]) for r in body["results"]] == [(first.pk, 2), (first.pk, 1)]
    top = body["results"][0]
    assert (top["prm"], top["people"], top["target"], top["votes"]) == (0.95, -1, 0.0, {"-1": 2})
    assert (top["step"], top["generation"], top["is_correct"], top["problem"]) == ("step 2.0", 0, False, "Find $x$.")
    assert top["url"] == reverse("api:solution-detail", args=[first.pk])
    assert client.get(top["url"]).status_code == 200  # the link opens for whoever reads the list
    rest = client.get(url(project, limit=100, offset=2)).json()["results"]
    assert [(r["solution"], r["position"]) for r in rest] == [(second.pk, 1), (second.pk, 0), (first.pk, 0)]
    assert rest[1]["adjudicated"] is True


@pytest.mark.parametrize("params", [{"limit": 101}, {"limit": 0}, {"limit": "x"}, {"offset": -1}])
def test_a_page_is_bounded(loop, params):
    project, *_ = loop
    client = client_for(make_user("res", RESEARCHER, projects=[project]))
    answer = client.get(url(project, **params))
    assert answer.status_code == 400 and answer.json()["field"] == next(iter(params))


def test_an_annotator_is_refused_and_a_non_member_finds_no_project(loop):
    project, *_ = loop
    annotator = client_for(make_user("worker", ANNOTATOR, projects=[project]))
    assert annotator.get(url(project)).status_code == 403
    outsider = client_for(make_user("elsewhere", LEAD, RESEARCHER, projects=[make_project()]))
    assert outsider.get(url(project)).status_code == 404
    assert client_for(None).get(url(project)).status_code in (401, 403)
