"""Tokens that end (issue #19, item 5).

Found: an API token (DRF's one per account) never expired, survived logging out and a password
change, and nothing revoked it. Now tokens end after STEPMARK_TOKEN_TTL_HOURS, on a password
change and on "log out everywhere"; their owner lists and revokes them (API and page), an admin
anyone's. The token check stays one indexed lookup with no write per request (the annotator
loop runs it on every request).
"""
import datetime

import pytest
from django.conf import settings
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone
from rest_framework.test import APIClient

from labeling.access import tokens
from labeling.models import ApiToken
from tests.factories import PASSWORD, make_project, make_solution, make_user

pytestmark = pytest.mark.django_db

EXPIRED = "Token expired: ask for a new one (POST /api/auth/token/)."


@pytest.fixture(autouse=True)
def fast_hashing(settings):
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


def with_token(key):
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {key}")
    return client


def works(key):
    """Whether ``key`` signs in: the ordinary token check (/api/me/) and the loop's fused one agree."""
    project = make_project()
    me = with_token(key).get(reverse("api:me"))
    loop = with_token(key).post(reverse("api:project-next", args=[project.pk]))
    # A refused token is DRF's 403 here (session authentication comes first and sends no challenge).
    assert (me.status_code == 200) == (loop.status_code != 403), (me.content, loop.content)
    return me.status_code == 200


def log_in(username):
    answer = APIClient().post(reverse("api:auth-token"), {"username": username, "password": PASSWORD, "name": "cron"})
    assert answer.status_code == 200, answer.content
    return answer.json()


# Expiry ----------------------------------------------------------------------------------


def test_the_login_token_ends_after_the_configured_time(settings):
    settings.STEPMARK_TOKEN_TTL_HOURS = 12
    make_user("ann", "annotator")
    before = timezone.now()
    answer = log_in("ann")
    expires = datetime.datetime.fromisoformat(answer["expires_at"])
    assert before + datetime.timedelta(hours=12) <= expires <= timezone.now() + datetime.timedelta(hours=12)
    assert answer["name"] == "cron" and works(answer["token"])


def test_a_token_made_longer_ago_than_its_lifetime_is_refused_by_name():
    ann = make_user("ann", "annotator")
    key, _ = tokens.issue(ann, now=timezone.now() - datetime.timedelta(hours=settings.STEPMARK_TOKEN_TTL_HOURS, seconds=1))
    for answer in (with_token(key).get(reverse("api:me")),
                   with_token(key).post(reverse("api:project-next", args=[make_project().pk]))):
        assert answer.status_code == 403 and answer.json()["detail"] == EXPIRED
    assert not works(key)


def test_each_login_makes_its_own_token_and_old_ones_stay_valid():
    make_user("ann", "annotator")
    first, second = log_in("ann")["token"], log_in("ann")["token"]
    assert first != second and works(first) and works(second)


def test_only_the_keys_hash_is_stored():
    ann = make_user("ann", "annotator")
    key, token = tokens.issue(ann)
    stored = ApiToken.objects.filter(pk=token.pk).values().get()
    assert key not in [str(v) for v in stored.values()]
    assert stored["digest"] == tokens.digest(key) and key.startswith(stored["prefix"])


def test_an_account_holds_a_bounded_number_of_tokens():
    ann = make_user("ann", "annotator")
    keys = [tokens.issue(ann)[0] for _ in range(tokens.MAX_PER_USER + 5)]
    assert ApiToken.objects.filter(user=ann).count() == tokens.MAX_PER_USER
    assert works(keys[-1]) and not works(keys[0])  # the oldest made way


# Revoked on a password change and on log out everywhere ----------------------------------


def test_changing_the_password_ends_every_token():
    ann = make_user("ann", "annotator")
    key = log_in("ann")["token"]
    browser = Client()
    browser.force_login(ann)
    answer = browser.post(reverse("password_change"), {
        "old_password": PASSWORD, "new_password1": "a-new-long-passphrase-7", "new_password2": "a-new-long-passphrase-7"})
    assert answer.status_code == 302, answer.content
    assert not works(key)


def test_an_admin_setting_a_password_ends_the_tokens_too():
    ann = make_user("ann", "annotator")
    key, _ = tokens.issue(ann)
    ann.set_password("another-long-passphrase")
    ann.save()
    assert not works(key)


def test_a_login_that_only_upgrades_the_password_hash_keeps_the_tokens(settings):
    ann = make_user("ann", "annotator")  # hashed with MD5 (the fixture)
    key, _ = tokens.issue(ann)
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.PBKDF2PasswordHasher",
                                 "django.contrib.auth.hashers.MD5PasswordHasher"]
    assert Client().login(username="ann", password=PASSWORD)
    ann.refresh_from_db()
    assert ann.password.startswith("pbkdf2_sha256$")  # upgraded on login
    assert works(key)


def test_log_out_everywhere_ends_every_token_and_browser_session():
    ann = make_user("ann", "annotator")
    bob = make_user("bob", "annotator")
    keys = [log_in("ann")["token"] for _ in range(2)]
    bobs = log_in("bob")["token"]
    laptop, phone, bobs_browser = Client(), Client(), Client()
    for browser, user in ((laptop, ann), (phone, ann), (bobs_browser, bob)):
        browser.force_login(user)
    answer = with_token(keys[0]).post(reverse("api:me-logout-everywhere"))
    assert answer.status_code == 200 and answer.json() == {"tokens": 2, "sessions": 2}
    assert not works(keys[0]) and not works(keys[1])
    for browser in (laptop, phone):
        assert browser.get("/").status_code == 302  # back to the login page
    assert works(bobs) and bobs_browser.get("/").status_code == 200  # another person's untouched


# A person's own list ---------------------------------------------------------------------


def test_a_person_lists_their_own_tokens_without_keys():
    ann = make_user("ann", "annotator")
    key = log_in("ann")["token"]
    tokens.issue(ann, "nightly export")
    tokens.issue(make_user("bob", "annotator"), "bob's")
    listed = with_token(key).get(reverse("api:me-tokens")).json()
    assert [(t["name"], t["current"]) for t in listed] == [("nightly export", False), ("cron", True)]
    assert all("token" not in t and key not in str(t) for t in listed)
    assert listed[1]["prefix"] == key[:8] and listed[1]["last_used_at"] is not None


def test_a_person_revokes_one_of_their_tokens_and_not_anothers():
    ann, bob = make_user("ann", "annotator"), make_user("bob", "annotator")
    kept, revoked = tokens.issue(ann)[0], tokens.issue(ann)[1]
    bobs_key, bobs = tokens.issue(bob)
    client = with_token(kept)
    assert client.delete(reverse("api:me-token", args=[revoked.pk])).status_code == 204
    assert not ApiToken.objects.filter(pk=revoked.pk).exists() and works(kept)
    answer = client.delete(reverse("api:me-token", args=[bobs.pk]))
    assert answer.status_code == 404 and works(bobs_key)


def test_a_new_token_is_made_from_a_browser_session_not_from_a_token():
    ann = make_user("ann", "annotator")
    key, _ = tokens.issue(ann)
    refused = with_token(key).post(reverse("api:me-tokens"), {"name": "successor"})
    assert refused.status_code == 403 and "cannot make another" in refused.json()["detail"]
    browser = APIClient()
    browser.force_login(ann)
    made = browser.post(reverse("api:me-tokens"), {"name": "from the browser"})
    assert made.status_code == 201 and made.json()["name"] == "from the browser"
    assert works(made.json()["token"])


def test_the_tokens_page_makes_shows_once_and_revokes():
    ann = make_user("ann", "annotator")
    browser = Client()
    browser.force_login(ann)
    page = reverse("account-tokens")
    assert page in browser.get("/").content.decode()  # linked from every page's top bar
    made = browser.post(page, {"action": "create", "name": "laptop script"}, follow=True)
    key = made.context["new_key"]
    assert key in made.content.decode() and works(key)
    again = browser.get(page).content.decode()
    assert key not in again and "laptop script" in again  # shown once
    token = ApiToken.objects.get(user=ann)
    assert browser.post(page, {"action": "revoke", "token": token.pk}).status_code == 302
    assert not works(key)
    assert browser.post(page, {"action": "revoke", "token": "x"}).status_code == 400


def test_the_tokens_page_logs_out_everywhere():
    ann = make_user("ann", "annotator")
    key, _ = tokens.issue(ann)
    browser, other = Client(), Client()
    browser.force_login(ann)
    other.force_login(ann)
    answer = browser.post(reverse("account-tokens"), {"action": "logout-everywhere"})
    assert answer.status_code == 302 and answer["Location"] == reverse("login")
    assert not works(key) and other.get("/").status_code == 302 and browser.get("/").status_code == 302


# Admins ----------------------------------------------------------------------------------


def test_an_admin_revokes_anyones_token():
    ann = make_user("ann", "annotator")
    key, token = tokens.issue(ann, "ann's script")
    admin = Client()
    admin.force_login(make_user("root", is_staff=True, is_superuser=True))
    listing = admin.get(reverse("admin:labeling_apitoken_changelist")).content.decode()
    assert "ann&#x27;s script" in listing and key not in listing
    answer = admin.post(reverse("admin:labeling_apitoken_changelist"),
                        {"action": "delete_selected", "_selected_action": [token.pk], "post": "yes"})
    assert answer.status_code == 302
    assert not works(key)
    assert admin.get(reverse("admin:labeling_apitoken_add")).status_code == 403  # made by owners only


# The annotator loop's cost ---------------------------------------------------------------


def test_the_token_check_is_one_statement_and_writes_at_most_once_a_minute():
    ann = make_user("ann", "annotator")
    project = make_project()
    make_solution(project, steps=2)
    key, token = tokens.issue(ann)
    client = with_token(key)

    def statements():
        with CaptureQueriesContext(connection) as captured:
            assert client.get(reverse("api:me-counts")).status_code == 200
        return [q["sql"] for q in captured.captured_queries if "SAVEPOINT" not in q["sql"]]

    first = statements()
    assert sum(sql.startswith("UPDATE") for sql in first) == 1  # the first use is written down
    again = statements()
    assert not any(sql.startswith(("UPDATE", "INSERT", "DELETE")) for sql in again)
    assert sum("labeling_apitoken" in sql for sql in again) == 1
    assert "\"labeling_apitoken\".\"digest\" = " in next(sql for sql in again if "labeling_apitoken" in sql)
    ApiToken.objects.filter(pk=token.pk).update(last_used_at=timezone.now() - datetime.timedelta(seconds=61))
    assert sum(sql.startswith("UPDATE") for sql in statements()) == 1
