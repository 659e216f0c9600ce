"""The annotator loop stays cheap: queries per request, and the payload built without DRF fields.

bench/annotator_loop.py measures the loop under load; these tests pin what made it cheap, so
that a change which adds queries to ``next`` or ``submit`` fails here instead of quietly
costing throughput. The bounds are the counts of the ordinary case (ordinary work, no
gold due, no screening), with token authentication as a real client uses it.
"""
import pytest
from django.urls import reverse
from rest_framework.test import APIClient

from labeling.api.work_serializers import (
    AssignmentSerializer,
    SubmitSerializer,
    assignment_payload,
    plain_submit,
)
from labeling.models import Annotator, Assignment, Step
from labeling.work import queue, submission
from tests.factories import make_project, make_solution, make_user, token_client

pytestmark = pytest.mark.django_db


def serializer_output(assignment):
    """What AssignmentSerializer gives for ``assignment``'s raw values (the reference shape)."""
    payload = assignment_payload(assignment)
    raw = dict(payload, handed_out_at=assignment.handed_out_at, lease_expires_at=assignment.lease_expires_at,
               submitted_at=assignment.submitted_at)
    return AssignmentSerializer(raw).data


def test_the_direct_payload_is_what_the_serializer_would_render():
    project = make_project(instructions="Rate **every** step.", allow_alternatives=True, allow_human_steps=True)
    make_solution(project, steps=3, alternatives={1: 1})
    annotator = Annotator.objects.create()
    task = queue.next_assignment(annotator, project)
    submission.save_draft(task, [{"position": 0, "value": 1, "flagged": True}, {"position": 1, "value": -1},
                                {"position": 1, "alternative": 1, "value": -1},
                                {"position": 1, "human_text": "my step", "value": 1}])
    submission.submit(task, finish_reason="give_up", note="enough", client_elapsed_ms=1234.5)
    task = Assignment.objects.select_related("project", "solution__problem").get(pk=task.pk)
    task.submitted_at = task.submitted_at.replace(microsecond=123456)  # DRF keeps microseconds
    payload = assignment_payload(task)
    assert payload == serializer_output(task)
    assert payload["submitted_at"].endswith(".123456Z")
    assert isinstance(payload["total_time"], int) and payload["finish_reason"] == "give_up"
    assert [r["flagged"] for r in payload["ratings"]] == [True, False, False, False]
    assert any(a["source"] == Step.HUMAN for s in payload["steps"] for a in s["alternatives"])


def test_the_payload_after_a_save_or_submit_is_what_a_fresh_read_gives():
    """A save or submit answers from the ratings it just wrote, without reading them back."""
    project = make_project(stop_at_first_error=False, allow_alternatives=True, allow_human_steps=True)
    make_solution(project, steps=3, alternatives={1: 1})
    task = queue.next_assignment(Annotator.objects.create(), project)

    def reread():
        fresh = Assignment.objects.select_related("project", "solution__problem").get(pk=task.pk)
        return assignment_payload(fresh)

    saves = [
        [{"position": 0, "value": 1, "flagged": True}, {"position": 1, "value": -1}],
        [{"position": 1, "alternative": 1, "value": -1}, {"position": 1, "human_text": "my step", "value": 0}],
        [{"position": 0, "value": None}, {"position": 1, "human_text": "my better step"}],  # undo, rewrite
        [{"position": 0, "value": 0}, {"position": 1, "human_text": None}],  # withdraw the own step
    ]
    for items in saves:
        saved = submission.save_draft(task, items)
        assert saved.sheet is not None
        assert assignment_payload(saved) == reread()
    done = submission.submit(task, finish_reason="give_up", note="enough",
                            ratings=[{"position": 2, "value": None}, {"position": 0, "flagged": False, "value": 1}])
    payload = assignment_payload(done)
    assert payload == reread()
    assert [(r["position"], r["alternative"], r["value"], r["flagged"]) for r in payload["ratings"]] == [
        (0, 0, 1, False), (1, 0, -1, False), (1, 1, -1, False)]


def test_a_fresh_payload_has_no_ratings_and_the_same_shape():
    project = make_project()
    make_solution(project, steps=2)
    task = queue.next_assignment(Annotator.objects.create(), project)
    fresh = assignment_payload(task)
    assert fresh == serializer_output(task)
    assert fresh["ratings"] == [] and fresh["submitted_at"] is None and len(fresh["steps"]) == 2


# Queries per request --------------------------------------------------------------------


@pytest.fixture
def loop_project():
    project = make_project(overlap=3)
    for _ in range(4):
        make_solution(project, steps=3, alternatives={1: 1})
    return project


def count_queries(django_assert_max_num_queries, limit, call):
    with django_assert_max_num_queries(limit) as captured:
        answer = call()
    return answer, [q["sql"] for q in captured.captured_queries if "SAVEPOINT" not in q["sql"]]


@pytest.mark.parametrize("functions", [True, False])
def test_next_and_submit_run_a_fixed_small_number_of_queries(loop_project, django_assert_max_num_queries, settings,
                                                             functions):
    settings.STEPMARK_QUEUE_FUNCTIONS = functions
    # token+user+roles with project+annotator, then either the hand-out function (migration
    # 0007), or: annotator lock, own work, lapsed leases with generations, open heads, claim
    # with its problem, live count, insert with recount, steps+ratings
    next_limit = 2 if functions else 9
    client = token_client(make_user("loop", "annotator"))
    # A token's first use is written down (then at most once a minute): counted here is every other request.
    assert client.get(reverse("api:me")).status_code == 200
    take = lambda: client.post(reverse("api:project-next", args=[loop_project.pk]))  # noqa: E731
    answer, next_queries = count_queries(django_assert_max_num_queries, 30, take)
    assert answer.status_code == 201
    task = answer.json()
    assert len(next_queries) <= next_limit, "\n".join(next_queries)

    body = {"finish_reason": "solution", "submit_key": "k1",
            "ratings": [{"position": p, "value": 1} for p in range(3)] + [{"position": 1, "alternative": 1, "value": 0}]}
    submit = lambda: client.post(reverse("api:assignment-submit", args=[task["id"]]), body, format="json")  # noqa: E731
    answer, submit_queries = count_queries(django_assert_max_num_queries, 20, submit)
    assert answer.status_code == 200, answer.content
    # token+user+roles with the own assignment, solution lock with reload and sheet (one
    # function call, migration 0008; else three statements), the ratings' upsert carrying
    # the assignment's update (one statement on PostgreSQL); the response is built from the
    # ratings just written
    assert len(submit_queries) <= (3 if functions else 5), "\n".join(submit_queries)
    assert len(answer.json()["ratings"]) == 4

    # The same number for the next task: nothing grows with the annotator's history.
    answer, again = count_queries(django_assert_max_num_queries, 30, take)
    assert answer.status_code == 201 and len(again) <= next_limit


def test_the_loop_token_check_answers_as_drf_does(loop_project):
    """The labelling views' token check refuses exactly as the rest of the API does."""
    url = reverse("api:project-next", args=[loop_project.pk])
    standard = reverse("api:me-assignments")  # the project's default authentication

    def both(client):
        mine, theirs = client.post(url), client.get(standard)
        assert (mine.status_code, mine.json()) == (theirs.status_code, theirs.json())
        return mine

    bad = APIClient()
    bad.credentials(HTTP_AUTHORIZATION="Token not-a-token")
    assert both(bad).json()["detail"] == "Invalid token."

    gone = make_user("gone", "annotator")
    client = token_client(gone)
    gone.is_active = False
    gone.save()
    assert both(client).json()["detail"] == "User inactive or deleted."

    assert token_client(make_user("norole")).post(url).status_code == 403
    assert token_client(make_user("ok", "annotator")).post(url).status_code == 201


def session_client(user):
    client = APIClient()
    client.force_login(user)
    return client


@pytest.mark.parametrize("login", [token_client, session_client], ids=["token", "session"])
def test_reads_joined_onto_the_token_check_answer_as_the_views_own_reads(loop_project, login):
    """The views' first reads (project, own assignment) refuse the same with the token check and without."""
    mine, theirs = login(make_user("mine", "annotator")), login(make_user("theirs", "annotator"))
    assert mine.post(reverse("api:project-next", args=[loop_project.pk + 999])).status_code == 404
    task = mine.post(reverse("api:project-next", args=[loop_project.pk])).json()
    body = {"finish_reason": "solution", "ratings": [{"position": p, "value": 1} for p in range(3)]
            + [{"position": 1, "alternative": 1, "value": 0}]}
    for method, name, data in [("get", "api:assignment-detail", None), ("put", "api:assignment-draft", body),
                               ("post", "api:assignment-submit", body)]:
        url = reverse(name, args=[task["id"]])
        assert getattr(theirs, method)(url, data, format="json").status_code == 404, name
        assert getattr(mine, method)(reverse(name, args=[task["id"] + 999]), data, format="json").status_code == 404
    assert Assignment.objects.get(pk=task["id"]).state == Assignment.ACTIVE
    assert not Assignment.objects.get(pk=task["id"]).ratings.exists()
    # The owner's own reads, through the token check, see the whole assignment.
    own = mine.get(reverse("api:assignment-detail", args=[task["id"]])).json()
    assert own == task | {"lease_expires_at": own["lease_expires_at"]}
    assert mine.post(reverse("api:assignment-submit", args=[task["id"]]), body, format="json").status_code == 200


def test_a_revoked_role_applies_at_the_next_request(loop_project):
    from labeling.access.roles import ANNOTATOR, grant_role, revoke_role

    user = make_user("revoked", "annotator", projects=[loop_project])
    client = token_client(user)
    url = reverse("api:project-next", args=[loop_project.pk])
    taken = client.post(url)
    assert taken.status_code == 201
    elsewhere = make_project()
    grant_role(user, ANNOTATOR, elsewhere)
    revoke_role(user, ANNOTATOR, loop_project)  # what a lead's "remove" does
    assert client.post(url).status_code == 404  # no member: the project does not exist for them
    assert client.get(reverse("api:assignment-detail", args=[taken.json()["id"]])).status_code == 404
    revoke_role(user, ANNOTATOR, elsewhere)
    assert client.post(url).status_code == 403  # no annotator role anywhere: refused before any lookup


def test_a_role_granted_without_an_annotator_row_gets_one_at_the_first_task(loop_project):
    from labeling.models import Membership

    user = make_user("by-hand")
    Membership.objects.create(user=user, project=loop_project, role="annotator")  # as the admin would, without grant_role
    assert not Annotator.objects.filter(user=user).exists()
    answer = token_client(user).post(reverse("api:project-next", args=[loop_project.pk]))
    assert answer.status_code == 201
    assert Assignment.objects.get(pk=answer.json()["id"]).annotator == Annotator.objects.get(user=user)


# The submit body checked by hand --------------------------------------------------------

PLAIN_BODIES = [
    {"finish_reason": "solution"},
    {"finish_reason": "solution", "note": "", "ratings": [], "submit_key": None, "client_elapsed_ms": None},
    {"finish_reason": "found_error", "note": "  spaced  ", "submit_key": "k-1", "client_elapsed_ms": 0,
     "ratings": [{"position": 0, "value": 1}, {"position": 1, "alternative": 2, "value": -1, "flagged": True},
                 {"position": 2, "alternative": None, "value": None, "flagged": None, "text": ""},
                 {"position": 3, "value": 0, "text": " my step ", "unknown": "ignored"}]},
    {"finish_reason": "give_up", "note": "why", "client_elapsed_ms": 12.5, "extra": [1, 2]},
    {"finish_reason": "solution", "revision": "3f2a9c0d1e4b5a67"}, {"finish_reason": "solution", "revision": None},
]

# DRF takes these too, after coercing or trimming: the hand check leaves them to it.
COERCED_BODIES = [
    {"finish_reason": "solution", "ratings": [{"position": "1", "value": 1}]},
    {"finish_reason": "solution", "ratings": [{"position": 1, "value": 1, "flagged": "true"}]},
    {"finish_reason": "solution", "submit_key": " padded "},
    {"finish_reason": "solution", "client_elapsed_ms": "15"},
    {"finish_reason": "solution", "note": 5},
    {"finish_reason": "solution", "client_elapsed_ms": True},
    {"finish_reason": "solution", "revision": " padded "}, {"finish_reason": "solution", "revision": 7},
]

REFUSED_BODIES = [
    [], {"finish_reason": "maybe"}, {"finish_reason": "solution", "note": None},
    {"finish_reason": "solution", "ratings": {"position": 0}},
    {"finish_reason": "solution", "ratings": [{"position": 0}]},
    {"finish_reason": "solution", "ratings": [{"position": -1, "value": 1}]},
    {"finish_reason": "solution", "ratings": [{"position": True, "value": 1}]},
    {"finish_reason": "solution", "ratings": [{"position": 0, "value": 2}]},
    {"finish_reason": "solution", "ratings": [{"position": 0, "value": 1, "alternative": -1}]},
    {"finish_reason": "solution", "ratings": [{"position": 0, "value": 1, "text": "x" * 20001}]},
    {"finish_reason": "solution", "ratings": [{"position": 0, "value": 1, "text": "a\x00b"}]},
    {"finish_reason": "solution", "submit_key": ""}, {"finish_reason": "solution", "submit_key": "k" * 101},
    {"finish_reason": "solution", "revision": ""}, {"finish_reason": "solution", "revision": "r" * 65},
    {"finish_reason": "solution", "client_elapsed_ms": -1},
    {"finish_reason": "solution", "client_elapsed_ms": float("nan")},
    {"finish_reason": "solution", "client_elapsed_ms": 10**400},
]


def drf(body):
    form = SubmitSerializer(data=body)
    return form.validated_data if form.is_valid() else None


@pytest.mark.parametrize("body", PLAIN_BODIES)
def test_a_plain_submit_body_is_checked_by_hand_to_what_drf_gives(body):
    expected = drf(body)
    assert expected is not None
    assert plain_submit(body) == expected  # DRF's OrderedDicts compare equal to plain dicts


@pytest.mark.parametrize("body", COERCED_BODIES + REFUSED_BODIES)
def test_anything_else_is_left_to_drf(body):
    assert plain_submit(body) is None
    assert (drf(body) is not None) == (body in COERCED_BODIES)


def test_the_loop_answers_json_whatever_the_client_accepts(loop_project):
    client = token_client(make_user("picky", "annotator"))
    answer = client.post(reverse("api:project-next", args=[loop_project.pk]), HTTP_ACCEPT="text/html")
    assert answer.status_code == 201 and answer["Content-Type"] == "application/json"
    task = answer.json()
    url = reverse("api:assignment-submit", args=[task["id"]])
    answer = client.post(url, {"finish_reason": "give_up"}, format="json", HTTP_ACCEPT="application/xml")
    assert answer.status_code == 400 and answer.json()["field"] == "note"  # a refusal, as JSON too
    # The body's parser is still DRF's choice: a form-encoded submit is refused as such.
    answer = client.post(url, "finish_reason=give_up", content_type="application/x-www-form-urlencoded")
    assert answer.status_code == 415
