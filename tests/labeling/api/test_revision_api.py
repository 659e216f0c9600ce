"""Two tabs (or two devices) on one assignment: a change based on an older revision is a 409.

labeling/work/revision.py: the payload says the revision of what is stored; a draft or submit
that sends back the revision it was based on is refused, naming the field ``revision``, when the
stored ratings changed since, and nothing is overwritten. (Issue #26: tab B's -1 overwrote tab A's
+1 while tab A still said "All changes saved".)
"""
import pytest
from django.urls import reverse

from labeling.models import Assignment
from tests.factories import make_project, make_solution, make_user, token_client

from .test_work_api import draft, finish, r, stored

pytestmark = pytest.mark.django_db


@pytest.fixture
def tabs():
    """One annotator's two clients (two tabs) on one phase-2 assignment, and its payload."""
    project = make_project(allow_alternatives=True, allow_human_steps=False)
    make_solution(project, steps=3, alternatives={1: 1})
    user = make_user("ann", "annotator")
    a, b = token_client(user), token_client(user)
    first = a.post(reverse("api:project-next", args=[project.pk]))
    again = b.post(reverse("api:project-next", args=[project.pk]))  # the second tab resumes the same
    assert (first.status_code, again.status_code) == (201, 200)
    assert first.json()["id"] == again.json()["id"]
    assert first.json()["revision"] == again.json()["revision"]
    return a, b, first.json()


def save(client, task, ratings, revision):
    url = reverse("api:assignment-draft", args=[task["id"]])
    return client.patch(url, {"ratings": ratings, "revision": revision}, format="json")


def test_the_second_tabs_change_based_on_the_older_revision_is_a_409_and_overwrites_nothing(tabs):
    a, b, task = tabs
    saved = save(a, task, [r(0, 1)], task["revision"])
    assert saved.status_code == 200, saved.content
    assert saved.json()["revision"] != task["revision"]

    refused = save(b, task, [r(0, -1)], task["revision"])
    assert refused.status_code == 409
    assert refused.json()["field"] == "revision"
    assert "another tab or on another device" in refused.json()["detail"]
    assert "nothing was overwritten" in refused.json()["detail"]
    assert {k: v[0] for k, v in stored(task["id"]).items()} == {(0, 0): 1}

    # The second tab reloads (GET) and goes on from what is stored.
    fresh = b.get(reverse("api:assignment-detail", args=[task["id"]])).json()
    assert fresh["revision"] == saved.json()["revision"]
    assert save(b, task, [r(1, -1)], fresh["revision"]).status_code == 200
    # Now the first tab is behind: its keep-alive (an empty save) says so.
    behind = save(a, task, [], saved.json()["revision"])
    assert behind.status_code == 409 and behind.json()["field"] == "revision"


def test_a_rule_the_stale_tab_breaks_is_answered_as_the_change_it_did_not_see(tabs):
    # The case: A's next rating was refused as "Step 1 is rated after the -1 at step 0".
    a, b, task = tabs
    assert save(b, task, [r(0, -1)], task["revision"]).status_code == 200
    refused = save(a, task, [r(0, 1), r(1, 1)], task["revision"])
    assert refused.status_code == 409 and refused.json()["field"] == "revision"
    # Without a revision, the rule itself answers, numbering steps as the page does.
    ruled = draft(a, task["id"], [r(1, 1)], method="patch")
    assert ruled.status_code == 400
    assert ruled.json()["detail"].startswith("Step 2 is rated after the -1 at step 1;")


def test_a_save_sent_again_after_its_answer_was_lost_is_taken(tabs):
    a, _, task = tabs
    items = [r(0, 1, flagged=True), r(1, -1)]
    first = save(a, task, items, task["revision"])
    assert first.status_code == 200
    again = save(a, task, items, task["revision"])  # the same change, on the same base
    assert again.status_code == 200
    assert again.json()["revision"] == first.json()["revision"]
    assert save(a, task, [r(1, 1)], task["revision"]).status_code == 409  # a new change on it is not


def test_a_submit_based_on_an_older_revision_is_a_409_and_submits_nothing(tabs):
    a, b, task = tabs
    assert save(a, task, [r(0, 1)], task["revision"]).status_code == 200
    refused = finish(b, task["id"], finish_reason="found_error", ratings=[r(0, -1)], revision=task["revision"],
                     submit_key="b")
    assert refused.status_code == 409 and refused.json()["field"] == "revision"
    assert Assignment.objects.get(pk=task["id"]).state == Assignment.ACTIVE
    assert {k: v[0] for k, v in stored(task["id"]).items()} == {(0, 0): 1}


def test_a_submit_refused_for_its_finish_answers_the_drafts_revision_and_the_next_save_goes_on_from_it(tabs):
    a, _, task = tabs
    refused = finish(a, task["id"], finish_reason="found_error", ratings=[r(0, 1), r(1, -1)],
                     revision=task["revision"], submit_key="k")
    assert refused.status_code == 400
    assert "alternative 1 is unrated" in refused.json()["detail"]
    kept = refused.json()["revision"]
    assert kept == a.get(reverse("api:assignment-detail", args=[task["id"]])).json()["revision"]
    saved = save(a, task, [r(1, 0, alternative=1)], kept)
    assert saved.status_code == 200
    done = finish(a, task["id"], finish_reason="found_error", revision=saved.json()["revision"], submit_key="k")
    assert done.status_code == 200 and done.json()["state"] == "submitted"


def test_without_a_revision_a_save_is_not_checked(tabs):
    a, b, task = tabs
    assert draft(a, task["id"], [r(0, 1)], method="patch").status_code == 200
    assert draft(b, task["id"], [r(0, -1)], method="patch").status_code == 200
    assert {k: v[0] for k, v in stored(task["id"]).items()} == {(0, 0): -1}


def test_the_revision_covers_own_steps_flags_and_undone_ratings():
    # The revision a save answers is the one the next save is checked against, whatever it holds.
    project = make_project(stop_at_first_error=False, allow_alternatives=True, allow_human_steps=True)
    make_solution(project, steps=3, alternatives={1: 1})
    client = token_client(make_user("ann", "annotator"))
    task = client.post(reverse("api:project-next", args=[project.pk])).json()
    base = task["revision"]
    saves = [
        [r(0, 1, flagged=True), r(1, -1), r(1, -1, alternative=1)],
        [{"position": 1, "text": "my step", "value": None}],
        [{"position": 1, "text": "my better step", "value": 1, "flagged": True}],
        [r(0, None)],
        [{"position": 1, "text": None, "value": None}, r(0, 0)],
    ]
    seen = {base}
    for items in saves:
        answer = save(client, task, items, base)
        assert answer.status_code == 200, answer.content
        base = answer.json()["revision"]
        seen.add(base)
    assert len(seen) == len(saves) + 1  # every change is a new revision
    assert base == client.get(reverse("api:assignment-detail", args=[task["id"]])).json()["revision"]
