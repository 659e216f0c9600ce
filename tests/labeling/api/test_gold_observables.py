"""Nothing an annotator can observe tells a gold hand-out from an ordinary one (issue #26).

An annotator is played through a phase-1 project whose hand-outs alternate between gold and
ordinary work (the draw is scripted; which kind each was is read from the database afterwards).
Around every hand-out it records everything it can see: the home page's card before, during and
after, the status and payload of ``next``, its standing, its checked results, its counts and
history, the answers of a draft that writes an own step (its number) and withdraws it, of the submit,
of its undo and of the submit again, with the gold job run in between. The record of each gold hand-out must be one an
ordinary hand-out also produced, observable by observable. Other annotators' hidden activity
differs on purpose: gold items, which bypass overlap, carry three other people's own steps at
the position the annotator writes at; ordinary ones one.

Then the queue runs dry of ordinary work: with gold due at every draw and unseen gold left, the
answer stays "no work".
"""
import json
import re

import pytest
from django.urls import reverse
from rest_framework.test import APIClient

from labeling.models import Assignment, Solution, Step
from labeling.quality import gold
from labeling.work import queue
from tests.factories import NOW, make_annotator, make_project, make_solution, make_user, score_gold

pytestmark = pytest.mark.django_db

# Values that differ from one hand-out to the next whatever its kind (ids, times, a list's size
# and links as passes pile up): compared by type only.
VARYING = {"id", "assignment", "handed_out_at", "lease_expires_at", "submitted_at", "total_time", "through",
           "count", "next", "previous", "revision"}
HEADERS_VARYING = {"Content-Length", "Date"}


def shape(data):
    if isinstance(data, dict):
        return {k: type(v).__name__ if k in VARYING else shape(v) for k, v in data.items()}
    if isinstance(data, list):
        return [shape(v) for v in data]
    return data


def answer(response):
    headers = sorted(k for k in response.headers if k not in HEADERS_VARYING)
    body = response.json() if response.content else None
    return {"status": response.status_code, "headers": headers, "body": shape(body)}


def card(client, project):
    """The annotator's card of ``project`` on the home page, as HTML, and how many passes it says
    are theirs (a count every submit moves by one, compared as a change)."""
    html = client.get("/").content.decode()
    found = re.search(rf'<section class="card project" data-project-id="{project.pk}">(.*?)</section>', html, re.S)
    mine = re.search(r"<b>(\d+)</b> passes by you", found.group(1))
    return re.sub(r"<b>\d+</b> passes by you", "<b>#</b> passes by you", found.group(1)), int(mine.group(1))


def with_hidden_steps(solution, people):
    """``people`` other annotators who wrote an own step at position 0 (their passes submitted)."""
    for n in range(people):
        theirs = Assignment.objects.create(project=solution.project, solution=solution, annotator=make_annotator(),
                                           state=Assignment.SUBMITTED, finish_reason="give_up", finish_note="x",
                                           submitted_at=NOW)
        Step.objects.create(solution=solution, position=0, alternative=3 + n, text="theirs", source=Step.HUMAN,
                            author=theirs)


@pytest.fixture
def played(monkeypatch):
    project = make_project(name="Checked", overlap=3, allow_alternatives=True, allow_human_steps=True,
                           stop_at_first_error=False, quality_control_rate=0.5)
    shape_of = dict(steps=3, alternatives={0: 2}, problem="Find $x$.")
    golds = []
    for _ in range(5):
        item = make_solution(project, **shape_of)
        gold.set_gold(item, {(0, 0): 1, (1, 0): 1, (2, 0): 1})
        with_hidden_steps(item, 3)
        golds.append(item.pk)
    ordinary = [make_solution(project, **shape_of) for _ in range(8)]
    for item in ordinary:
        with_hidden_steps(item, 1)
    queue.recount_live_assignments(project)
    user = make_user("ann", "annotator")
    client = APIClient()
    client.force_login(user)
    script = []
    monkeypatch.setattr(queue, "quality_control_due", lambda rate: script.pop(0) if script else False)
    return project, client, golds, script


def play_one(client, project):
    """Everything the annotator sees around one hand-out, and whether it was gold (from the database)."""
    seen = {}
    seen["card before"], mine = card(client, project)
    counts = client.get(reverse("api:me-counts")).json()
    taken = client.post(reverse("api:project-next", args=[project.pk]))
    seen["next"] = answer(taken)
    pk = taken.json()["id"]
    seen["card during"], mine_during = card(client, project)
    seen["status during"] = answer(client.get(reverse("api:project-my-status", args=[project.pk])))
    seen["checks during"] = answer(client.get(reverse("api:project-my-missed", args=[project.pk])))
    seen["assignment"] = answer(client.get(reverse("api:assignment-detail", args=[pk])))
    draft = reverse("api:assignment-draft", args=[pk])
    wrong = [{"position": 0, "alternative": a, "value": -1} for a in range(3)]
    # Each change names the revision it is based on, as the page does: an own step numbered apart
    # from how it is stored must not make the next change look stale.
    written = client.patch(draft, {"revision": taken.json()["revision"], "ratings": [
        *wrong, {"position": 0, "text": "Mine.", "value": 1}]}, format="json")
    seen["own step"] = answer(written)
    seen["own step withdrawn"] = answer(client.patch(draft, {"revision": written.json()["revision"], "ratings": [
        {"position": 0, "text": None, "value": None}]}, format="json"))
    assert seen["own step"]["status"] == seen["own step withdrawn"]["status"] == 200, seen
    own = [a for s in seen["own step"]["body"]["steps"] for a in s["alternatives"] if a["source"] == "human"]
    assert [a["alternative"] for a in own] == [3]  # after the model's 0, 1 and 2 at that position
    seen["submit"] = answer(client.post(reverse("api:assignment-submit", args=[pk]),
                                        {"finish_reason": "give_up", "note": "unsure"}, format="json"))
    # The confirmation's undo, then the submit again: in the window gold and ordinary answer alike.
    seen["undo"] = answer(client.post(reverse("api:assignment-unsubmit", args=[pk])))
    seen["submit again"] = answer(client.post(reverse("api:assignment-submit", args=[pk]),
                                              {"finish_reason": "give_up", "note": "unsure"}, format="json"))
    assert seen["undo"]["status"] == seen["submit again"]["status"] == 200, seen
    score_gold()  # the every-minute job, run here
    seen["card after"], mine_after = card(client, project)
    seen["passes by you moved"] = [mine_during - mine, mine_after - mine]
    seen["checks after"] = answer(client.get(reverse("api:project-my-missed", args=[project.pk])))
    seen["status after"] = answer(client.get(reverse("api:project-my-status", args=[project.pk])))
    after = client.get(reverse("api:me-counts")).json()
    seen["counts moved"] = {k: after[0][k] - (counts[0][k] if counts else 0)
                            for k in ("submitted_today", "submitted_total", "steps_rated", "in_progress")}
    seen["history"] = answer(client.get(reverse("api:me-assignments") + f"?project={project.pk}&limit=1"))
    return Assignment.objects.get(pk=pk).is_quality_control, seen


def test_what_an_annotator_sees_around_a_gold_hand_out_an_ordinary_one_shows_too(played):
    project, client, golds, script = played
    script += [False, True] * 4
    kinds = {True: {}, False: {}}
    for _ in range(8):
        is_gold, seen = play_one(client, project)
        for name, value in seen.items():
            kinds[is_gold].setdefault(name, set()).add(json.dumps(value, sort_keys=True))
    assert len(kinds[True]["next"]) and len(kinds[False]["next"])  # both kinds were played
    assert Assignment.objects.filter(is_quality_control=True).exclude(solution__in=golds).count() == 0
    assert Assignment.objects.filter(annotator__user__username="ann", is_quality_control=True).count() == 4
    told = {name: (sorted(kinds[True][name]), sorted(kinds[False][name]))
            for name in kinds[True] if not kinds[True][name] <= kinds[False][name]}
    assert not told, f"gold showed what no ordinary hand-out did: {sorted(told)}\n{json.dumps(told, indent=1)[:3000]}"


def test_once_ordinary_work_is_gone_gold_never_comes(played):
    project, client, golds, script = played
    url = reverse("api:project-next", args=[project.pk])
    ordinary = Solution.objects.filter(project=project, is_gold=False).count()
    for _ in range(ordinary):
        taken = client.post(url)
        assert taken.status_code == 201
        client.post(reverse("api:assignment-submit", args=[taken.json()["id"]]),
                    {"finish_reason": "give_up", "note": "n"}, format="json")
    script += [True] * 5  # gold due at every draw, and five unseen gold items left
    assert [client.post(url).status_code for _ in range(5)] == [204] * 5
    assert 'data-waiting="no"' in card(client, project)[0]
    assert not Assignment.objects.filter(annotator__user__username="ann", is_quality_control=True).exists()
