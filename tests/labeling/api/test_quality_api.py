"""The quality-control API (labeling/api/quality.py): leads manage gold, proposals, consensus and
standing; annotators see their own standing and nothing of the gold."""
import json

import pytest
from django.urls import reverse

from labeling.models import Annotator, Assignment, GoldProposal, GoldRating, Solution
from labeling.quality import gold, proposals, screening
from tests.factories import (
    FORBIDDEN_IN_KEYS,
    client_for,
    keys,
    make_annotator,
    make_gold,
    make_solution,
    make_user,
    submit,
    take,
)


pytestmark = pytest.mark.django_db

LEAD_ENDPOINTS = [
    ("api:solution-gold", "get", "solution"),
    ("api:solution-gold", "put", "solution"),
    ("api:solution-gold", "delete", "solution"),
    ("api:solution-gold-from-assignment", "post", "solution"),
    ("api:solution-gold-propose", "post", "solution"),
    ("api:solution-consensus", "get", "solution"),
    ("api:solution-consensus", "put", "solution"),
    ("api:project-gold-proposals", "get", "project"),
    ("api:gold-proposal-approve", "post", "proposal"),
    ("api:gold-proposal-reject", "post", "proposal"),
    ("api:project-quality-settings", "get", "project"),
    ("api:project-quality-settings", "patch", "project"),
    ("api:project-annotator-pause", "post", "annotator"),
    ("api:project-annotator-resume", "post", "annotator"),
]


@pytest.fixture
def world(project):
    """A gold item, an ordinary solution rated by three annotators, and a pending proposal."""
    item = make_gold(project, [1, 1, -1])
    shared = make_solution(project, steps=2)
    project.overlap = 3
    project.save()
    people = [make_annotator() for _ in range(3)]
    for n, (ann, values) in enumerate(zip(people, ([1, 1], [1, -1], [1, -1]))):
        a = take(ann, project, n)
        assert a.solution_id == shared.pk
        submit(a, values)
    proposal = proposals.propose_gold_from_consensus(shared)
    return {"item": item, "shared": shared, "people": people, "proposal": proposal}


def url_for(name, kind, project, world):
    args = {
        "solution": [world["item"].pk],
        "project": [project.pk],
        "proposal": [world["proposal"].pk],
        "annotator": [project.pk, world["people"][0].pk],
    }[kind]
    return reverse(name, args=args)


@pytest.mark.parametrize("role", ["annotator", "researcher"])
def test_only_leads_reach_the_lead_endpoints_and_nothing_changes(clients, project, world, role):
    for name, method, kind in LEAD_ENDPOINTS:
        answer = getattr(clients[role], method)(url_for(name, kind, project, world), {}, format="json")
        assert answer.status_code == 403, (name, method, answer.status_code)
        assert "ratings" not in answer.json()
    assert gold.gold_ratings(world["item"]) == {(0, 0): 1, (1, 0): 1, (2, 0): -1}
    assert GoldProposal.objects.get().state == "pending"
    assert screening.my_status(world["people"][0], project)["state"] == "active"


def test_leads_read_set_and_remove_gold(clients, project, users):
    solution = make_solution(project, steps=3, alternatives={2: 1})
    url = reverse("api:solution-gold", args=[solution.pk])
    lead = clients["lead"]
    assert lead.get(url).json()["ratings"] == []
    body = {"ratings": [{"position": 0, "value": 1}, {"position": 2, "alternative": 1, "value": -1}],
            "is_screening": True}
    answer = lead.put(url, body, format="json")
    assert answer.status_code == 200, answer.content
    data = answer.json()
    assert (data["is_gold"], data["is_screening"], data["approved_by"]) == (True, True, "lead")
    assert data["ratings"] == [{"position": 0, "alternative": 0, "value": 1},
                               {"position": 2, "alternative": 1, "value": -1}]
    assert lead.get(url).json() == data
    refused = lead.put(url, {"ratings": [{"position": 9, "value": 1}]}, format="json")
    assert refused.status_code == 400
    assert refused.json()["field"] == "ratings" and "position 9" in refused.json()["detail"]
    assert lead.put(url, {"ratings": [{"position": 0, "value": 2}]}, format="json").status_code == 400
    assert gold.gold_ratings(solution) == {(0, 0): 1, (2, 1): -1}  # refused input changed nothing
    assert lead.delete(url).status_code == 204
    assert not Solution.objects.get(pk=solution.pk).is_gold and not GoldRating.objects.exists()
    assert lead.get(reverse("api:solution-gold", args=[999999])).status_code == 404


def test_gold_from_a_submitted_pass(clients, project, world):
    shared, people = world["shared"], world["people"]
    url = reverse("api:solution-gold-from-assignment", args=[shared.pk])
    chosen = Assignment.objects.get(solution=shared, annotator=people[1])
    answer = clients["lead"].post(url, {"assignment": chosen.pk}, format="json")
    assert answer.status_code == 200, answer.content
    assert [(r["position"], r["value"]) for r in answer.json()["ratings"]] == [(0, 1), (1, -1)]
    wrong = clients["lead"].post(reverse("api:solution-gold-from-assignment", args=[world["item"].pk]),
                                 {"assignment": chosen.pk}, format="json")
    assert wrong.status_code == 400 and wrong.json()["field"] == "assignment"


def test_proposals_are_listed_approved_once_and_become_gold(clients, project, world):
    lead, shared = clients["lead"], world["shared"]
    listed = lead.get(reverse("api:project-gold-proposals", args=[project.pk]), {"state": "pending"}).json()["results"]
    assert [(p["solution"], p["votes"], p["ratings"]) for p in listed] == [
        (shared.pk, 3, [{"position": 0, "alternative": 0, "value": 1}, {"position": 1, "alternative": 0, "value": -1}])]
    again = lead.post(reverse("api:solution-gold-propose", args=[shared.pk]))
    assert again.status_code == 201 and again.json()["id"] == listed[0]["id"]
    approve = reverse("api:gold-proposal-approve", args=[listed[0]["id"]])
    answer = lead.post(approve)
    assert (answer.status_code, answer.json()["state"], answer.json()["decided_by"]) == (200, "approved", "lead")
    assert gold.gold_ratings(shared) == {(0, 0): 1, (1, 0): -1}
    assert lead.post(approve).status_code == 400
    assert lead.get(reverse("api:project-gold-proposals", args=[project.pk]), {"state": "pending"}).json()["results"] == []
    assert lead.get(reverse("api:project-gold-proposals", args=[project.pk]), {"state": "nope"}).status_code == 400
    lonely = make_solution(project, steps=1)
    refused = lead.post(reverse("api:solution-gold-propose", args=[lonely.pk]))
    assert refused.status_code == 400 and refused.json()["field"] == "solution"


def test_consensus_shows_votes_and_takes_rulings(clients, world):
    url = reverse("api:solution-consensus", args=[world["shared"].pk])
    lead = clients["lead"]
    assert lead.get(url).json() == [
        {"position": 0, "alternative": 0, "value": 1, "votes": {"1": 3}, "adjudicated": False},
        {"position": 1, "alternative": 0, "value": -1, "votes": {"-1": 2, "1": 1}, "adjudicated": False},
    ]
    answer = lead.put(url, {"ratings": [{"position": 1, "value": 0}], "note": "both readings hold"}, format="json")
    assert answer.status_code == 200
    assert answer.json()[1] == {"position": 1, "alternative": 0, "value": 0, "votes": {"-1": 2, "1": 1},
                                "adjudicated": True}
    cleared = lead.put(url, {"ratings": [{"position": 1, "value": None}]}, format="json").json()
    assert cleared[1]["value"] == -1 and not cleared[1]["adjudicated"]
    assert lead.put(url, {"ratings": [{"position": 5, "value": 1}]}, format="json").status_code == 400


def test_a_lead_pauses_and_resumes_and_the_annotator_sees_only_their_state(clients, project, users):
    make_solution(project, steps=1)
    me, _ = Annotator.objects.get_or_create(user=users["annotator"])
    base = [project.pk, me.pk]
    paused = clients["lead"].post(reverse("api:project-annotator-pause", args=base),
                                  {"reason": "rated 40 steps in a minute"}, format="json")
    assert paused.status_code == 200
    assert (paused.json()["state"], paused.json()["reason"], paused.json()["decided_by"]) == (
        "paused", "rated 40 steps in a minute", "lead")
    annotator = clients["annotator"]
    assert annotator.post(reverse("api:project-next", args=[project.pk])).status_code == 204
    status = annotator.get(reverse("api:project-my-status", args=[project.pk]))
    assert status.json() == {"project": project.pk, "state": "paused", "done": 0, "total": 0,
                             "message": "paused — a lead will review", "reason": "rated 40 steps in a minute",
                             "results": "0.0"}
    resumed = clients["lead"].post(reverse("api:project-annotator-resume", args=base), format="json")
    assert resumed.json()["state"] == "active"
    assert annotator.post(reverse("api:project-next", args=[project.pk])).status_code == 201
    assert annotator.get(reverse("api:project-my-status", args=[project.pk])).json()["message"] == "active"
    assert clients["lead"].post(reverse("api:project-annotator-pause", args=[project.pk, 999999])).status_code == 404


def test_quality_settings_are_a_lead_setting_with_ranges(clients, project):
    url = reverse("api:project-quality-settings", args=[project.pk])
    lead = clients["lead"]
    answer = lead.patch(url, {"gold_threshold": 0.75, "gold_window": 5, "requires_screening": True}, format="json")
    assert answer.status_code == 200
    assert answer.json()["gold_threshold"] == 0.75 and answer.json()["gold_window"] == 5
    project.refresh_from_db()
    assert (project.gold_threshold, project.gold_window, project.requires_screening) == (0.75, 5, True)
    for bad in ({"gold_threshold": 1.5}, {"screening_threshold": -0.1}, {"gold_window": 0}):
        refused = lead.patch(url, bad, format="json")
        assert refused.status_code == 400 and set(refused.json()) == set(bad)


def test_my_status_walks_through_screening_without_a_trace_of_gold(clients, project, users):
    project.requires_screening = True
    project.save()
    tells = ("secret-screening-text", "0.5", "0.8", "score", "threshold")
    items = []
    for _ in range(2):
        item = make_solution(project, steps=2, generator="secret-screening-text")
        gold.set_gold(item, {(0, 0): 1, (1, 0): -1}, screening=True)
        items.append(item)
    make_solution(project, steps=1)
    annotator = clients["annotator"]
    status_url = reverse("api:project-my-status", args=[project.pk])
    seen = [annotator.get(status_url).json()]
    assert seen[0]["message"] == "screening: 0 of 2 done"
    for n in range(2):
        taken = annotator.post(reverse("api:project-next", args=[project.pk])).json()
        answer = annotator.post(reverse("api:assignment-submit", args=[taken["id"]]),
                                {"finish_reason": "found_error", "ratings": [{"position": 0, "value": -1}]},
                                format="json")
        assert answer.status_code == 200, answer.content
        seen.append(annotator.get(status_url).json())
    assert [s["message"] for s in seen] == ["screening: 0 of 2 done", "screening: 1 of 2 done",
                                            "failed — a lead will review"]
    assert annotator.post(reverse("api:project-next", args=[project.pk])).status_code == 204
    # "Something new on your checked results page": each missed screening pass, scored with its submit.
    assert [s["results"] for s in seen] == ["0.0", "1.0", "2.0"]
    for data in seen:
        assert set(data) == {"project", "state", "done", "total", "message", "reason", "results"}
        assert not [k for k in keys(data) if any(word in k.lower() for word in FORBIDDEN_IN_KEYS)]
        assert not [tell for tell in tells if tell in json.dumps(data)]
    # An inactive project does not exist for annotators.
    project.is_active = False
    project.save()
    assert annotator.get(status_url).status_code == 404


def test_export_leaves_out_paused_annotators_and_serves_the_consensus_format(clients, project, world):
    people = world["people"]
    screening.pause(people[0], project, reason="test")
    url = reverse("api:project-export", args=[project.pk])

    def labelers(**params):
        answer = clients["researcher"].get(url, params)
        assert answer.status_code == 200, answer.content
        return [json.loads(line)["labeler"] for line in b"".join(answer.streaming_content).decode().splitlines()]

    everyone = labelers()
    assert str(people[0].uuid) in everyone
    kept = labelers(exclude_paused="1")
    assert str(people[0].uuid) not in kept and len(kept) == len(everyone) - 1
    assert labelers(format="prm800k-consensus") == ["00000000-0000-0000-0000-00000000c0de"]


def test_a_superuser_without_an_annotator_row_gets_a_status(project):
    staff = client_for(make_user("boss", is_staff=True, is_superuser=True))
    answer = staff.get(reverse("api:project-my-status", args=[project.pk]))
    assert answer.status_code == 200 and answer.json()["state"] == "active"


def test_the_proposals_list_is_paged_like_every_list(clients, project):
    ids = [GoldProposal.objects.create(solution=make_solution(project, steps=2), votes=2,
                                       ratings=[[0, 0, 1], [1, 0, -1]]).pk for _ in range(3)]
    url = reverse("api:project-gold-proposals", args=[project.pk])
    first = clients["lead"].get(url, {"state": "pending", "limit": 2}).json()
    assert first["count"] == 3 and [p["id"] for p in first["results"]] == ids[:0:-1] and first["next"]
    assert [s["value"] for s in first["results"][0]["steps"]] == [1, -1]  # the evidence rides along
    rest = clients["lead"].get(first["next"]).json()
    assert [p["id"] for p in rest["results"]] == ids[:1] and rest["next"] is None
    refused = clients["lead"].get(url, {"offset": "-1"})
    assert refused.status_code == 400 and refused.json()["field"] == "offset"
