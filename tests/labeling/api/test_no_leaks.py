"""Annotators cannot tell a gold item from ordinary work, nor read its gold ratings.

One gold solution (GoldRating rows, chosen by the PRM with a verifier score, graded wrong)
and one ordinary solution of the same shape. With ``quality_control_rate=1.0`` the queue
serves the gold item first; the annotator then works through both over the API, and every
answer an annotator can reach is compared: the same keys at every depth, no key that names
gold, grading or how the solution was chosen, and none of the gold item's tell-tale values.
"""
import json

import pytest
from django.urls import reverse
from rest_framework.test import APIClient

from labeling.models import Generation, GoldRating, Step
from tests.factories import FORBIDDEN_IN_KEYS, key_paths, keys, make_project, make_solution, make_user, token_client, walk


pytestmark = pytest.mark.django_db

# Values only the gold solution carries; none may show up anywhere in an annotator's answers.
GOLD_TELLS = ("secret-generator-x", "31415926", "987654321", "86420531", "approver-zed", "Gold problem answer 17")


@pytest.fixture
def served():
    """The annotator's client, the gold and the ordinary solution, in a project that serves gold first."""
    project = make_project(quality_control_rate=1.0, overlap=3)
    lead = make_user("approver-zed", "lead")
    generation = Generation.objects.create(project=project, number=86420531)
    gold = make_solution(project, steps=3, alternatives={1: 1}, generation=generation, rank=987654321,
                         is_gold=True, is_correct=False, verifier_score=0.31415926, generator="secret-generator-x")
    ordinary = make_solution(project, steps=3, alternatives={1: 1}, is_correct=True)
    gold.problem.ground_truth_solution = "Gold problem answer 17 (the reference solution, never shown)"
    gold.problem.save()
    for step, value in zip(Step.objects.filter(solution=gold).order_by("position", "alternative"), [1, -1, 0, 1, 1]):
        GoldRating.objects.create(step=step, value=value, approved_by=lead)
    client = token_client(make_user("ann", "annotator"))
    return client, project, gold, ordinary


def walk_one(client, project, ratings, finish):
    """next -> read -> draft -> submit -> retry: every assignment answer, in order."""
    taken = client.post(reverse("api:project-next", args=[project.pk]))
    assert taken.status_code == 201, taken.content
    pk = taken.json()["id"]
    answers = [taken, client.get(reverse("api:assignment-detail", args=[pk]))]
    answers.append(client.put(reverse("api:assignment-draft", args=[pk]), {"ratings": ratings}, format="json"))
    answers.append(client.patch(reverse("api:assignment-draft", args=[pk]), {"ratings": ratings[:1]}, format="json"))
    submit = {"submit_key": f"key-{pk}", **finish}
    answers.append(client.post(reverse("api:assignment-submit", args=[pk]), submit, format="json"))
    answers.append(client.post(reverse("api:assignment-submit", args=[pk]), submit, format="json"))
    assert [a.status_code for a in answers] == [201, 200, 200, 200, 200, 200], [a.content for a in answers]
    return pk, [a.json() for a in answers]


def test_gold_and_ordinary_work_look_alike_and_gold_ratings_never_show(served):
    client, project, gold, ordinary = served
    ratings = [{"position": 0, "alternative": 0, "value": 1, "flagged": False},
               {"position": 1, "alternative": 0, "value": -1, "flagged": False},
               {"position": 1, "alternative": 1, "value": 0, "flagged": True}]
    finish = {"finish_reason": "found_error", "note": "", "client_elapsed_ms": 1000}
    gold_pk, gold_answers = walk_one(client, project, ratings, finish)
    plain_pk, plain_answers = walk_one(client, project, ratings, finish)
    assert {a.solution_id for a in gold.assignments.all()} == {gold.pk}, "the queue did not serve gold first"
    assert ordinary.assignments.get().pk == plain_pk

    for gold_json, plain_json in zip(gold_answers, plain_answers):
        assert key_paths(gold_json) == key_paths(plain_json)
    # Before any draft the gold item carries no ratings at all, then only the annotator's own.
    assert gold_answers[0]["ratings"] == []
    assert gold_answers[-1]["ratings"] == plain_answers[-1]["ratings"] == ratings

    everything = gold_answers + plain_answers
    for path in ("api:me-assignments", "api:me-counts", "api:me", "api:project-list"):
        answer = client.get(reverse(path))
        assert answer.status_code == 200, path
        everything.append(answer.json())
    history = everything[-4]["results"]
    assert [row["id"] for row in history] == [plain_pk, gold_pk]
    assert key_paths(history[0]) == key_paths(history[1])
    detail = client.get(reverse("api:project-detail", args=[project.pk]))
    everything.append(detail.json())

    for data in everything:
        named = [k for k in keys(data) if any(word in k.lower() for word in FORBIDDEN_IN_KEYS)]
        assert not named, named
        text = json.dumps(data)
        assert not [tell for tell in GOLD_TELLS if tell in text], text


def test_the_payload_of_a_gold_item_is_the_payload_of_its_twin(served):
    """Same texts, same answer: the gold item and its ordinary twin give equal payloads but for ids and times."""
    client, project, gold, ordinary = served
    for solution in (gold, ordinary):
        solution.problem.problem, solution.problem.ground_truth_answer = "Twin problem", "5"
        solution.problem.save()
    first = client.post(reverse("api:project-next", args=[project.pk])).json()
    client.post(reverse("api:assignment-submit", args=[first["id"]]), {"finish_reason": "give_up", "note": "x"},
                format="json")
    second = client.post(reverse("api:project-next", args=[project.pk])).json()
    volatile = ("id", "handed_out_at", "lease_expires_at")
    assert {k: v for k, v in first.items() if k not in volatile} == {
        k: v for k, v in second.items() if k not in volatile}


def every_route():
    """Every named URL of the site (API and pages), with sample keyword arguments."""
    from django.urls import get_resolver

    return [(route, name, kwargs) for route, name, kwargs in walk(get_resolver().url_patterns)
            if name and not route.lstrip("^").startswith("admin/")]


def test_no_route_or_page_an_annotator_reaches_shows_the_gold(served):
    """Walk every route of the site as the annotator who holds the gold item: GET each one with
    every id that matters here (project, both solutions, the assignment, the annotator) and
    check that no answer an annotator is allowed to read carries a gold tell-tale."""
    client, project, gold, ordinary = served
    taken = client.post(reverse("api:project-next", args=[project.pk]))
    assert taken.status_code == 201
    assignment = gold.assignments.get()
    annotator = assignment.annotator
    browser = APIClient()
    browser.force_login(annotator.user)  # the pages use the session
    ids = sorted({project.pk, gold.pk, ordinary.pk, assignment.pk, annotator.pk})
    read = 0
    for route, name, kwargs in every_route():
        for pk in ids:
            filled = {k: (str(pk) if k in ("pk", "id", "annotator_id", "project_id", "solution_id") else v)
                      for k, v in kwargs.items()}
            try:
                url = reverse(name, kwargs=filled)
            except Exception:  # noqa: BLE001 - a route whose sample arguments do not fit
                continue
            for who in (client, browser):
                answer = who.get(url)
                if answer.status_code != 200:
                    continue
                read += 1
                if getattr(answer, "streaming", False):
                    body = b"".join(answer.streaming_content).decode(errors="replace")
                else:
                    body = answer.content.decode(errors="replace")
                found = [tell for tell in GOLD_TELLS if tell in body]
                assert not found, f"{name} ({url}) shows {found} to an annotator"
                if answer.get("Content-Type", "").startswith("application/json"):
                    named = [k for k in keys(json.loads(body)) if any(w in k.lower() for w in FORBIDDEN_IN_KEYS)]
                    assert not named, f"{name} ({url}) names {named}"
            if not kwargs:
                break
    assert read >= 8, "the walk read almost nothing: it is not checking what it claims"
