"""A project's leads add members by name and make accounts for people who have none (labeling/access/members.py)."""
import pytest
from django.contrib.auth import get_user_model
from django.urls import reverse

from labeling import audit
from labeling.access.roles import roles_in
from labeling.models import AuditEntry, Membership
from tests.factories import client_for, make_project, make_user

pytestmark = pytest.mark.django_db


@pytest.fixture
def project():
    return make_project(name="Members")


@pytest.fixture
def lead(project):
    return make_user("lena", "lead", projects=[project])


def members_url(project):
    return reverse("api:project-members", args=[project.pk])


def test_a_name_with_spaces_or_in_another_case_finds_the_one_account_it_means(project, lead):
    cal = make_user("Cal", projects=[])
    client = client_for(lead)
    answer = client.post(members_url(project), {"username": " cal ", "role": "annotator"}, format="json")
    assert answer.status_code == 201, answer.content
    assert roles_in(cal, project.pk) == {"annotator"}
    make_user("dana", projects=[]), make_user("DANA", projects=[])
    answer = client.post(members_url(project), {"username": "Dana", "role": "annotator"}, format="json")
    assert (answer.status_code, answer.json()["field"]) == (400, "username")  # two accounts: it could mean either


def test_a_lead_makes_an_account_whose_owner_sets_the_password_once_through_its_link(project, lead, client):
    answer = client_for(lead).post(members_url(project), {"username": "newbie", "role": "annotator", "create": True,
                                                          "email": "newbie@example.org"}, format="json")
    assert answer.status_code == 201, answer.content
    link = answer.json()["set_password_url"]
    newbie = get_user_model().objects.get(username="newbie")
    assert not newbie.has_usable_password() and newbie.email == "newbie@example.org"
    assert roles_in(newbie, project.pk) == {"annotator"} and not newbie.is_staff
    entry = AuditEntry.objects.get(action=audit.MEMBER_ADDED)
    assert (entry.actor_name, entry.after["account"]) == ("lena", "created")

    # The link, opened by its owner without an account of theirs: a password form, then the login.
    path = link.split("testserver", 1)[1]
    form = client.get(path, follow=True)
    assert form.status_code == 200 and b"welcome-form" in form.content
    done = client.post(form.redirect_chain[-1][0], {"new_password1": "a long new password 77",
                                                    "new_password2": "a long new password 77"}, follow=True)
    assert done.redirect_chain[-1][0] == reverse("login") and b"Your password is set" in done.content
    newbie.refresh_from_db()
    assert newbie.check_password("a long new password 77")
    # Used once: it has ended.
    again = client.get(path, follow=True)
    assert b"welcome-ended" in again.content and b"welcome-form" not in again.content


@pytest.mark.parametrize("body, field", [
    ({"username": "lena", "role": "annotator", "create": True}, "username"),  # exists
    ({"username": "LENA", "role": "annotator", "create": True}, "username"),  # exists, in another case
    ({"username": "two words", "role": "annotator", "create": True}, "username"),
    ({"username": "x" * 151, "role": "annotator", "create": True}, "username"),
    ({"username": "fresh", "role": "admin", "create": True}, "role"),
    ({"username": "fresh", "role": "annotator", "create": True, "email": "not-mail"}, "email"),
])
def test_a_bad_new_account_is_a_400_naming_the_field_and_makes_nothing(project, lead, body, field):
    before = get_user_model().objects.count()
    answer = client_for(lead).post(members_url(project), body, format="json")
    assert (answer.status_code, answer.json()["field"]) == (400, field), answer.content
    assert get_user_model().objects.count() == before and not AuditEntry.objects.exists()


def test_only_the_projects_leads_make_accounts(project, lead):
    other = make_project(name="Elsewhere")
    outsider = make_user("olga", "lead", projects=[other])
    annotator = make_user("ann", "annotator", projects=[project])
    body = {"username": "sneaky", "role": "lead", "create": True}
    assert client_for(outsider).post(members_url(project), body, format="json").status_code == 404
    assert client_for(annotator).post(members_url(project), body, format="json").status_code == 403
    assert not get_user_model().objects.filter(username="sneaky").exists()
    assert not Membership.objects.filter(project=other, user__username="sneaky").exists()
