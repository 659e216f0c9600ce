"""Signing in with a token or a session, and /api/me/."""
from django.urls import reverse
from rest_framework.test import APIClient

from tests.factories import make_project, make_user


def test_token_for_username_and_password_then_token_auth(db):
    make_project()
    make_user("carol", "researcher", "annotator")
    client = APIClient()
    answer = client.post(reverse("api:auth-token"), {"username": "carol", "password": "a-long-test-password"})
    assert answer.status_code == 200
    token = answer.json()["token"]

    client.credentials(HTTP_AUTHORIZATION=f"Token {token}")
    me = client.get(reverse("api:me")).json()
    assert me["username"] == "carol"
    assert me["roles"] == ["annotator", "researcher"]


def test_wrong_password_gets_no_token(db):
    make_user("carol", "researcher")
    answer = APIClient().post(reverse("api:auth-token"), {"username": "carol", "password": "guess"})
    assert answer.status_code == 400
    assert "token" not in answer.json()


def test_a_bad_token_is_refused(db):
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION="Token 0123456789abcdef0123456789abcdef01234567")
    answer = client.get(reverse("api:me"))
    assert answer.status_code in (401, 403)
    assert answer.json()["detail"] == "Invalid token."


def test_session_login_works_as_the_browser_does(db):
    make_project()
    make_user("dan", "lead")
    client = APIClient(enforce_csrf_checks=True)
    assert client.login(username="dan", password="a-long-test-password")
    assert client.get(reverse("api:me")).json()["roles"] == ["lead"]
    # A session-authenticated write without the CSRF token is refused.
    assert client.post(reverse("api:project-list"), {"name": "x"}).status_code == 403


def test_me_gives_the_annotator_uuid_and_none_for_others(clients, users):
    ann = clients["annotator"].get(reverse("api:me")).json()
    assert ann == {"username": "ann", "roles": ["annotator"], "annotator": str(users["annotator"].annotator.uuid),
                   "is_staff": False}
    assert clients["lead"].get(reverse("api:me")).json()["annotator"] is None


def test_me_answers_a_user_without_roles_and_refuses_anonymous(clients):
    assert clients["nobody"].get(reverse("api:me")).json()["roles"] == []
    assert clients["anonymous"].get(reverse("api:me")).status_code in (401, 403)
