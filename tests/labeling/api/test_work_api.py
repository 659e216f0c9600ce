"""The annotator's labelling API (labeling/api/work.py) over HTTP with token auth.

The rules themselves are tested without HTTP in tests/labeling/work/test_submission.py; here:
the flow a client follows, the shape of answers and refusals, and who may touch what.
"""
from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone
from rest_framework.test import APIClient

from labeling.models import Annotator, Assignment, Project, Rating
from tests.factories import make_project, make_solution, make_user, token_client


pytestmark = pytest.mark.django_db


@pytest.fixture
def ann():
    return token_client(make_user("alice", "annotator"))


@pytest.fixture
def other():
    return token_client(make_user("bob", "annotator"))


def phase_two(steps=4, alternatives=None, **fields):
    """A phase-2 project with one solution whose problem has a ground-truth answer."""
    project = make_project(instructions="Rate **every** step.", **fields)
    solution = make_solution(project, steps=steps, alternatives=alternatives)
    solution.problem.problem, solution.problem.ground_truth_answer = "What is $1+1$?", "2"
    solution.problem.save()
    return project, solution


def take(client, project, expect=201):
    answer = client.post(reverse("api:project-next", args=[project.pk]))
    assert answer.status_code == expect, answer.content
    return answer.json() if answer.content else None


def draft(client, assignment_id, ratings, method="put"):
    url = reverse("api:assignment-draft", args=[assignment_id])
    return getattr(client, method)(url, {"ratings": ratings}, format="json")


def finish(client, assignment_id, **body):
    return client.post(reverse("api:assignment-submit", args=[assignment_id]), body, format="json")


def r(position, value, alternative=0, **extra):
    return {"position": position, "alternative": alternative, "value": value, **extra}


def stored(assignment_id):
    return {
        (x.step.position, x.step.alternative): (x.value, x.flagged, x.chosen)
        for x in Rating.objects.filter(assignment_id=assignment_id).select_related("step")
    }


def test_the_task_carries_the_projects_rendering_settings(ann):
    # The workspace renders the problem and steps with them (frontend/src/math.js renderOptions);
    # both differ from the defaults here, so neither can pass by accident.
    gsm8k, _ = phase_two(steps=2, dollar_math=False, show_calculator_markup=True)
    rules = take(ann, gsm8k)["project"]
    assert (rules["dollar_math"], rules["show_calculator_markup"]) == (False, True)


# The flow ---------------------------------------------------------------------------------


def test_phase_two_next_draft_submit_found_error_with_alternatives(ann):
    project, _ = phase_two(steps=4, alternatives={1: 2})
    task = take(ann, project)
    assert task["state"] == "active" and task["lease_expires_at"] and task["ratings"] == []
    assert task["problem"] == {"problem": "What is $1+1$?", "ground_truth_answer": "2"}
    assert [s["position"] for s in task["steps"]] == [0, 1, 2, 3]
    assert task["steps"][1]["alternatives"] == [
        {"alternative": a, "text": f"step 1.{a}", "source": "model"} for a in range(3)
    ]
    rules = task["project"]
    assert (rules["stop_at_first_error"], rules["allow_alternatives"], rules["allow_human_steps"]) == (True, True, False)
    assert rules["instructions_html"] == "<p>Rate <strong>every</strong> step.</p>"
    # Asking again resumes the same assignment (200, not a new one).
    assert take(ann, project, expect=200)["id"] == task["id"]

    saved = draft(ann, task["id"], [r(0, 1), r(1, -1, flagged=True)])
    assert saved.status_code == 200, saved.content
    assert saved.json()["ratings"] == [r(0, 1, flagged=False), r(1, -1, flagged=True)]

    # found_error needs every alternative at the error rated: refused, and the draft stays.
    refused = finish(ann, task["id"], finish_reason="found_error", submit_key="k1")
    assert refused.status_code == 400
    answer = refused.json()
    # The kept draft's revision comes with the refusal (the base of the next save).
    assert answer.pop("revision") == ann.get(reverse("api:assignment-detail", args=[task["id"]])).json()["revision"]
    assert answer == {"detail": "Rate every alternative at step 2 (alternative 1 is unrated).", "field": "ratings"}
    assert Assignment.objects.get(pk=task["id"]).state == Assignment.ACTIVE

    done = finish(ann, task["id"], finish_reason="found_error", submit_key="k1", client_elapsed_ms=1500,
                  ratings=[r(1, 1, alternative=1), r(1, 0, alternative=2)])
    assert done.status_code == 200, done.content
    body = done.json()
    assert (body["state"], body["finish_reason"]) == ("submitted", "found_error")
    assert body["submitted_at"] and 0 <= body["total_time"] <= 1500
    assert stored(task["id"]) == {
        (0, 0): (1, False, True), (1, 0): (-1, True, False), (1, 1): (1, False, False), (1, 2): (0, False, False),
    }
    # The same pass, read back.
    assert ann.get(reverse("api:assignment-detail", args=[task["id"]])).json() == body


def test_a_solution_finish_rates_every_step_in_the_submit_itself(ann):
    project, _ = phase_two(steps=3)
    task = take(ann, project)
    done = finish(ann, task["id"], finish_reason="solution", ratings=[r(0, 1), r(1, 0), r(2, 1, flagged=True)])
    assert done.status_code == 200, done.content
    assert done.json()["finish_reason"] == "solution"
    assert {k: v[0] for k, v in stored(task["id"]).items()} == {(0, 0): 1, (1, 0): 0, (2, 0): 1}
    # Nothing left for this annotator.
    take(ann, project, expect=204)


def test_patch_and_put_both_merge_into_the_draft(ann):
    project, _ = phase_two(steps=3)
    task = take(ann, project)
    assert draft(ann, task["id"], [r(0, 1)], method="put").status_code == 200
    assert draft(ann, task["id"], [r(1, 0)], method="patch").status_code == 200
    assert {k: v[0] for k, v in stored(task["id"]).items()} == {(0, 0): 1, (1, 0): 0}


def test_a_retried_submit_gets_the_same_answer_and_another_key_is_refused(ann):
    project, _ = phase_two(steps=2)
    task = take(ann, project)
    body = {"finish_reason": "give_up", "note": "I do not follow step 1.", "submit_key": "tab-1:42"}
    first = finish(ann, task["id"], **body)
    again = finish(ann, task["id"], **body)
    assert first.status_code == again.status_code == 200
    assert again.json() == first.json()
    assert first.json()["finish_note"] == "I do not follow step 1."
    other_key = finish(ann, task["id"], **{**body, "submit_key": "tab-2:1"})
    assert other_key.status_code == 400
    assert other_key.json()["field"] == "submit_key" and "already submitted" in other_key.json()["detail"]
    assert draft(ann, task["id"], [r(0, 1)]).status_code == 400


# Refusals ---------------------------------------------------------------------------------


@pytest.mark.parametrize("ratings, field, words", [
    ([r(0, 2)], "ratings[0].value", "less than or equal to 1"),
    ([r(0, 1), {"position": 1, "alternative": 0}], "ratings[1].value", "required"),
    ([{"position": "first", "value": 1}], "ratings[0].position", "valid integer"),
    ([r(0, 1, flagged="maybe")], "ratings[0].flagged", "valid boolean"),
    ([r(0, True)], "ratings[0].value", "valid integer"),
    ([{"alternative": 0, "value": 1}], "ratings[0].position", "required"),
    (["1"], "ratings[0]", "dictionary"),
    ([r(0, 1, chosen="perhaps")], "ratings[0].chosen", "valid boolean"),
    ("all +1", "ratings", "list"),
    ([r(7, 1)], "ratings[0]", "no step 8 (position 7)"),
    ([r(0, 1), r(2, 1)], "ratings[1]", "rate steps in order"),
    ([r(0, 1, text="my own step")], "ratings[0].human_text", "does not take steps written by annotators"),
])
def test_bad_drafts_are_400_naming_the_field_and_store_nothing(ann, ratings, field, words):
    project, _ = phase_two(steps=3)
    task = take(ann, project)
    answer = draft(ann, task["id"], ratings)
    assert answer.status_code == 400
    assert answer.json()["field"] == field
    assert words in answer.json()["detail"]
    assert not Rating.objects.filter(assignment_id=task["id"]).exists()


@pytest.mark.parametrize("body, field, words", [
    ({"finish_reason": "tired"}, "finish_reason", "not a valid choice"),
    ({}, "finish_reason", "required"),
    ({"finish_reason": "give_up"}, "note", "Say why"),
    ({"finish_reason": "solution"}, "finish_reason", "every step rated"),
    ({"finish_reason": "give_up", "note": "x", "client_elapsed_ms": -5}, "client_elapsed_ms", "greater than"),
    ({"finish_reason": "give_up", "note": "x", "client_elapsed_ms": "soon"}, "client_elapsed_ms", "valid number"),
    ({"finish_reason": "give_up", "note": "x", "submit_key": "k" * 101}, "submit_key", "100 characters"),
])
def test_bad_submits_are_400_naming_the_field(ann, body, field, words):
    project, _ = phase_two(steps=2)
    task = take(ann, project)
    answer = finish(ann, task["id"], **body)
    assert answer.status_code == 400
    assert answer.json()["field"] == field and words in answer.json()["detail"]
    assert Assignment.objects.get(pk=task["id"]).state == Assignment.ACTIVE


def test_a_body_that_is_not_an_object_is_400(ann):
    project, _ = phase_two(steps=2)
    task = take(ann, project)
    answer = ann.put(reverse("api:assignment-draft", args=[task["id"]]), [r(0, 1)], format="json")
    assert answer.status_code == 400 and answer.json()["field"] is None


def test_a_lease_lost_to_someone_else_is_a_409_and_the_ratings_stay(ann, other):
    project, _ = phase_two(steps=3, lease_seconds=60)
    task = take(ann, project)
    assert draft(ann, task["id"], [r(0, 1)]).status_code == 200
    Assignment.objects.filter(pk=task["id"]).update(lease_expires_at=timezone.now() - timedelta(seconds=1))
    take(other, project)  # reaps the lapsed lease and takes the only slot
    for answer in (draft(ann, task["id"], [r(1, 1)]), finish(ann, task["id"], finish_reason="give_up", note="x")):
        assert answer.status_code == 409
        assert "went to another annotator" in answer.json()["detail"]
    assert {k: v[0] for k, v in stored(task["id"]).items()} == {(0, 0): 1}


def test_a_lapsed_lease_nobody_took_just_continues(ann):
    project, _ = phase_two(steps=3, lease_seconds=60)
    task = take(ann, project)
    Assignment.objects.filter(pk=task["id"]).update(lease_expires_at=timezone.now() - timedelta(seconds=1))
    saved = draft(ann, task["id"], [r(0, 1)])
    assert saved.status_code == 200
    assert saved.json()["lease_expires_at"] > timezone.now().isoformat()


# Who may do what --------------------------------------------------------------------------


def test_another_annotators_assignment_does_not_exist_for_me(ann, other):
    project, _ = phase_two(steps=2)
    task = take(ann, project)
    draft(ann, task["id"], [r(0, 1)])
    detail = reverse("api:assignment-detail", args=[task["id"]])
    assert other.get(detail).status_code == 404
    assert draft(other, task["id"], [r(0, -1)]).status_code == 404
    assert draft(other, task["id"], [r(0, -1)], method="patch").status_code == 404
    assert finish(other, task["id"], finish_reason="give_up", note="x").status_code == 404
    assert {k: v[0] for k, v in stored(task["id"]).items()} == {(0, 0): 1}
    assert Assignment.objects.get(pk=task["id"]).state == Assignment.ACTIVE


@pytest.mark.parametrize("role", ["lead", "researcher"])
def test_leads_and_researchers_without_the_annotator_role_are_refused(role):
    project, _ = phase_two(steps=2)
    owner = token_client(make_user("alice", "annotator"))
    task = take(owner, project)
    client = token_client(make_user("boss", role))
    answers = [
        client.post(reverse("api:project-next", args=[project.pk])),
        client.get(reverse("api:assignment-detail", args=[task["id"]])),
        draft(client, task["id"], [r(0, 1)]),
        finish(client, task["id"], finish_reason="give_up", note="x"),
        client.get(reverse("api:me-assignments")),
        client.get(reverse("api:me-counts")),
    ]
    assert [a.status_code for a in answers] == [403] * 6
    assert not Annotator.objects.filter(user__username="boss").exists()


def test_no_content_when_there_is_no_work(ann):
    empty = make_project()
    take(ann, empty, expect=204)
    project, _ = phase_two(steps=2)
    Project.objects.filter(pk=project.pk).update(is_active=False)
    take(ann, project, expect=204)
    Project.objects.filter(pk=project.pk).update(is_active=True)
    Annotator.objects.filter(user__username="alice").update(status=Annotator.PAUSED)
    take(ann, project, expect=204)
    Annotator.objects.filter(user__username="alice").update(status=Annotator.ACTIVE)
    take(ann, project, expect=201)
    assert ann.post(reverse("api:project-next", args=[999999])).status_code == 404


def test_session_login_works_like_a_token():
    make_user("carol", "annotator")
    project, _ = phase_two(steps=2)
    client = APIClient()
    assert client.login(username="carol", password="a-long-test-password")
    assert take(client, project)["state"] == "active"


# Human steps (phase 1) --------------------------------------------------------------------


def test_a_written_step_is_shown_to_its_author_only(ann, other):
    project, _ = phase_two(steps=2, alternatives={0: 1}, stop_at_first_error=False, allow_human_steps=True,
                           overlap=2)
    mine = take(ann, project)
    saved = draft(ann, mine["id"], [r(0, -1), r(0, -1, alternative=1), {"position": 0, "value": 1,
                                                                        "text": "Let $x = 2$."}])
    assert saved.status_code == 200, saved.content
    at_zero = saved.json()["steps"][0]["alternatives"]
    assert at_zero[-1] == {"alternative": 2, "text": "Let $x = 2$.", "source": "human"}
    assert r(0, 1, alternative=2, flagged=False) in saved.json()["ratings"]

    theirs = take(other, project)
    assert [a["source"] for a in theirs["steps"][0]["alternatives"]] == ["model", "model"]
    assert "Let $x = 2$." not in str(theirs)
    # Nor can they rate it.
    assert draft(other, theirs["id"], [r(0, 1, alternative=2)]).status_code == 400


# Rules as the client sees them ----------------------------------------------------------


def test_instructions_are_rendered_from_markdown_and_sanitized(ann):
    project, _ = phase_two(steps=1)
    project.instructions = ("# Rules\n\n*Think* first. <script>alert('x')</script>"
                            "<img src=x onerror=\"alert('y')\"> [docs](javascript:alert(1))")
    project.save()
    html = take(ann, project)["project"]["instructions_html"]
    assert "<h1>Rules</h1>" in html and "<em>Think</em>" in html
    # Raw HTML in the Markdown is shown as text (labeling/markdown_text.py), never as markup.
    assert "<script" not in html and "<img" not in html and "javascript:" not in html
    assert "&lt;img src=x onerror=" in html


# My history and counts ------------------------------------------------------------------


def test_my_history_lists_submitted_passes_newest_first_with_counts(ann, other):
    project = make_project(name="Phase 2 (a)")
    for _ in range(3):
        make_solution(project, steps=3)
    done = []
    for reason, ratings in [("found_error", [r(0, 1), r(1, -1)]), ("solution", [r(0, 1), r(1, 1), r(2, 0)])]:
        task = take(ann, project)
        assert finish(ann, task["id"], finish_reason=reason, ratings=ratings).status_code == 200
        done.append(task["id"])
    in_progress = take(ann, project)
    draft(ann, in_progress["id"], [r(0, 1)])
    theirs = make_project(name="someone else's")
    make_solution(theirs, steps=1)
    finish(other, take(other, theirs)["id"], finish_reason="solution", ratings=[r(0, 1)])

    page = ann.get(reverse("api:me-assignments")).json()
    assert page["count"] == 2
    rows = page["results"]
    assert [row["id"] for row in rows] == done[::-1]
    assert [(row["finish_reason"], row["steps_rated"], row["project"], row["project_name"]) for row in rows] == [
        ("solution", 3, project.pk, "Phase 2 (a)"), ("found_error", 2, project.pk, "Phase 2 (a)")]
    assert all(row["submitted_at"] and row["total_time"] is not None for row in rows)
    assert ann.get(reverse("api:me-assignments"), {"limit": 1}).json()["next"]
    assert ann.get(reverse("api:me-assignments"), {"project": project.pk + 1000}).json()["count"] == 0
    assert other.get(reverse("api:me-assignments")).json()["count"] == 1

    counts = ann.get(reverse("api:me-counts")).json()
    assert counts == [{"project": project.pk, "project_name": "Phase 2 (a)", "submitted_today": 2,
                       "submitted_total": 2, "steps_rated": 5, "in_progress": 1}]


def test_yesterdays_work_counts_in_the_total_only(ann):
    project, _ = phase_two(steps=1)
    task = take(ann, project)
    finish(ann, task["id"], finish_reason="solution", ratings=[r(0, 1)])
    Assignment.objects.filter(pk=task["id"]).update(submitted_at=timezone.now() - timedelta(days=1, hours=1))
    [row] = ann.get(reverse("api:me-counts")).json()
    assert (row["submitted_today"], row["submitted_total"], row["in_progress"]) == (0, 1, 0)


# Undo a submit ----------------------------------------------------------------------------


def unsubmit(client, assignment_id):
    return client.post(reverse("api:assignment-unsubmit", args=[assignment_id]))


def test_an_undo_reopens_my_pass_with_its_ratings_and_the_counts_follow(ann, other):
    project, _ = phase_two(steps=2)
    task = take(ann, project)
    assert finish(ann, task["id"], finish_reason="solution", ratings=[r(0, 1), r(1, 0)]).status_code == 200
    assert unsubmit(other, task["id"]).status_code == 404  # not theirs: it does not exist for them
    [row] = ann.get(reverse("api:me-counts")).json()
    assert (row["submitted_today"], row["in_progress"]) == (1, 0)

    answer = unsubmit(ann, task["id"])
    assert answer.status_code == 200, answer.content
    body = answer.json()
    assert body["state"] == "active" and body["id"] == task["id"] and body["lease_expires_at"]
    assert [(x["position"], x["value"]) for x in body["ratings"]] == [(0, 1), (1, 0)]
    assert unsubmit(ann, task["id"]).json()["state"] == "active"  # again: the same, nothing changes
    [row] = ann.get(reverse("api:me-counts")).json()
    assert (row["submitted_today"], row["in_progress"]) == (0, 1)
    assert ann.get(reverse("api:me-assignments")).json()["count"] == 0
    assert take(ann, project, expect=200)["id"] == task["id"]  # it is my unfinished task again
    assert finish(ann, task["id"], finish_reason="solution", ratings=[r(1, 1)]).status_code == 200
    assert stored(task["id"]) == {(0, 0): (1, False, True), (1, 0): (1, False, True)}


def test_an_undo_after_the_window_is_a_409_that_says_why(ann):
    project, _ = phase_two(steps=1)
    task = take(ann, project)
    finish(ann, task["id"], finish_reason="solution", ratings=[r(0, 1)])
    Assignment.objects.filter(pk=task["id"]).update(submitted_at=timezone.now() - timedelta(minutes=1))
    answer = unsubmit(ann, task["id"])
    assert answer.status_code == 409 and "10 seconds after the submit" in answer.json()["detail"]
    assert Assignment.objects.get(pk=task["id"]).state == "submitted"


def test_my_history_carries_my_ratings_as_sent_and_the_page_shows_them(ann, other):
    from django.contrib.auth.models import User

    project = make_project(name="Recent", allow_alternatives=True, allow_human_steps=True, stop_at_first_error=False)
    make_solution(project, steps=2, alternatives={1: 1})
    task = take(ann, project)
    ratings = [r(0, 1, flagged=True), r(1, -1), r(1, -1, alternative=1), {"position": 1, "text": "Mine: x = 2.", "value": 1}]
    assert finish(ann, task["id"], finish_reason="solution", ratings=ratings).status_code == 200, "submitted"
    [row] = ann.get(reverse("api:me-assignments")).json()["results"]
    assert row["ratings"] == [
        {"position": 0, "alternative": 0, "value": 1, "flagged": True, "chosen": True, "text": None},
        {"position": 1, "alternative": 0, "value": -1, "flagged": False, "chosen": False, "text": None},
        {"position": 1, "alternative": 1, "value": -1, "flagged": False, "chosen": False, "text": None},
        {"position": 1, "alternative": None, "value": 1, "flagged": False, "chosen": True, "text": "Mine: x = 2."},
    ]
    alice, bob = APIClient(), APIClient()  # the page takes a session, as a browser has
    alice.force_login(User.objects.get(username="alice"))
    bob.force_login(User.objects.get(username="bob"))
    page = alice.get(reverse("my-passes", args=[project.pk]))
    html = page.content.decode()
    assert page.status_code == 200 and f'data-assignment="{task["id"]}"' in html
    assert html.count('data-rating="1"') == 2 and html.count('data-rating="-1"') == 2 and "Mine: x = 2." in html
    assert "unsure" in html and "your own" in html
    home = alice.get("/").content.decode()
    assert f'href="/projects/{project.pk}/passes/"' in home
    theirs = bob.get(reverse("my-passes", args=[project.pk])).content.decode()  # a member with no pass of theirs
    assert 'data-testid="no-passes"' in theirs and "Mine: x = 2." not in theirs
