"""Accounts (issue #19, item 7): strong new passwords, a demo loader that stays out of production,
password reset only where mail is configured.

Found: passwords like ``83920174`` or ``stepmark`` were accepted; ``load_demo`` ran in production
mode and made the superuser ``admin`` / ``demo-admin`` published in the README;
``/accounts/password_reset/`` was open and unthrottled with no mail configured.
"""
import io
import re
import secrets
import uuid

import pytest
from django.contrib.auth import authenticate, get_user_model
from django.contrib.auth.password_validation import validate_password
from django.core import mail
from django.core.exceptions import ValidationError
from django.core.management import CommandError, call_command
from django.test import Client

from labeling.management.commands.load_demo import ACCOUNTS
from labeling.models import Project
from tests.factories import PASSWORD, make_user

# password -> the validators that refuse it (for the user margaret.hamilton)
REFUSED = {
    "83920174": {"password_too_short", "password_entirely_numeric"},
    "839201748392017": {"password_entirely_numeric"},
    "stepmark": {"password_too_short"},
    "password1234": {"password_too_common"},
    "margarethamilton": {"password_too_similar"},
}


@pytest.mark.parametrize("password", REFUSED)
def test_weak_new_passwords_are_refused(password):
    user = get_user_model()(username="margaret.hamilton", email="mh@example.org")
    with pytest.raises(ValidationError) as refused:
        validate_password(password, user)
    assert {error.code for error in refused.value.error_list} == REFUSED[password]


def test_a_long_unrelated_password_is_accepted():
    validate_password("correct horse battery staple", get_user_model()(username="margaret.hamilton"))


def test_the_password_change_page_applies_the_rules(db):
    user = make_user("margaret.hamilton", "annotator")
    client = Client()
    client.force_login(user)
    page = client.post("/accounts/password_change/", {"old_password": PASSWORD, "new_password1": "83920174",
                                                      "new_password2": "83920174"})
    assert page.status_code == 200 and "at least 12 characters" in page.content.decode()
    user.refresh_from_db()
    assert user.check_password(PASSWORD)
    done = client.post("/accounts/password_change/", {"old_password": PASSWORD, "new_password1": "a sturdy new phrase",
                                                      "new_password2": "a sturdy new phrase"})
    assert done.status_code == 302
    user.refresh_from_db()
    assert user.check_password("a sturdy new phrase")


# load_demo ------------------------------------------------------------------------------------


def test_load_demo_refuses_to_run_without_debug(db, settings, data_dir):
    settings.DEBUG = False
    with pytest.raises(CommandError, match="--allow-production"):
        call_command("load_demo", data_dir=str(data_dir), quiet_progress=True, stdout=io.StringIO())
    assert not get_user_model().objects.exists() and not Project.objects.exists()


@pytest.mark.slow
def test_load_demo_in_production_publishes_no_password_and_makes_no_superuser(db, settings, data_dir):
    settings.DEBUG = False
    make_user("lead", "lead", password="the lead's own passphrase")
    out = io.StringIO()
    call_command("load_demo", data_dir=str(data_dir), quiet_progress=True, allow_production=True, stdout=out)

    User = get_user_model()
    assert not User.objects.filter(is_superuser=True).exists()
    assert not User.objects.filter(username="admin").exists()
    for username, (published, _, _) in ACCOUNTS.items():
        user = User.objects.filter(username=username).first()
        assert user is None or not user.check_password(published), username
    # An existing account keeps its password; each new one's is printed once, and works.
    assert authenticate(username="lead", password="the lead's own passphrase") is not None
    printed = dict(re.findall(r"(\w+)/(\S+?)(?:,|$)", out.getvalue().split("shown only now): ", 1)[1].splitlines()[0]))
    assert set(printed) == set(ACCOUNTS) - {"admin", "lead"}
    assert all(authenticate(username=u, password=p) is not None for u, p in printed.items())
    assert "demo-" not in out.getvalue()


# Password reset -------------------------------------------------------------------------------

RESET_PAGES = ["/accounts/password_reset/", "/accounts/password_reset/done/", "/accounts/reset/MQ/set-password/",
               "/accounts/reset/done/"]


def address():
    return f"10.{secrets.randbelow(250)}.{secrets.randbelow(250)}.{secrets.randbelow(250) + 2}"


def ask_reset(email, source):
    return Client().post("/accounts/password_reset/", {"email": email}, REMOTE_ADDR=source)


def test_password_reset_is_off_without_a_mail_server(db, settings):
    settings.EMAIL_HOST = ""
    make_user("ann", "annotator", email="ann@example.org")
    for page in RESET_PAGES:
        assert Client().get(page).status_code == 404, page
    assert ask_reset("ann@example.org", address()).status_code == 404
    assert not mail.outbox


@pytest.fixture
def mail_server(settings):
    settings.EMAIL_HOST = "smtp.example.org"  # pytest-django keeps the mail in mail.outbox


def test_password_reset_with_a_mail_server_sends_the_link(db, mail_server):
    email = f"ann-{uuid.uuid4().hex[:8]}@example.org"  # the per-address throttle outlives a run in Redis
    make_user("ann", "annotator", email=email)
    assert Client().get("/accounts/password_reset/").status_code == 200
    answer = ask_reset(email, address())
    assert answer.status_code == 302 and answer["Location"] == "/accounts/password_reset/done/"
    assert len(mail.outbox) == 1 and "/accounts/reset/" in mail.outbox[0].body


def test_password_reset_is_throttled_per_address(db, mail_server):
    source = address()
    statuses = [ask_reset(f"{uuid.uuid4().hex}@example.org", source).status_code for _ in range(6)]
    assert statuses == [302] * 5 + [429]
    assert ask_reset(f"{uuid.uuid4().hex}@example.org", address()).status_code == 302


def test_password_reset_is_throttled_per_email_address(db, mail_server):
    email = f"{uuid.uuid4().hex}@example.org"
    make_user(f"u{uuid.uuid4().hex[:8]}", "annotator", email=email)
    statuses = [ask_reset(email.upper() if i % 2 else email, address()).status_code for i in range(4)]
    assert statuses == [302] * 3 + [429]
    assert len(mail.outbox) == 3
