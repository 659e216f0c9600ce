"""Users in each role, API clients signed in as them, and a small project."""
import pytest
from django.contrib.auth import get_user_model
from rest_framework.test import APIClient

from labeling.access.roles import grant_role
from labeling.models import Project


def make_user(username, *roles, **extra):
    user = get_user_model().objects.create_user(username, password="a-long-test-password", **extra)
    for role in roles:
        grant_role(user, role)
    return user


def client_for(user):
    client = APIClient()
    if user is not None:
        client.force_authenticate(user)
    return client


@pytest.fixture(autouse=True)
def fast_password_hashing(settings):
    # The production hasher costs about half a second per password by design; these tests
    # check who may do what, not the hasher, and sign users in dozens of times.
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture
def users(db):
    return {
        "nobody": make_user("nobody"),
        "annotator": make_user("ann", "annotator"),
        "lead": make_user("lead", "lead"),
        "researcher": make_user("res", "researcher"),
    }


@pytest.fixture
def clients(users):
    """One APIClient per role, plus ``anonymous``."""
    return {"anonymous": APIClient(), **{name: client_for(user) for name, user in users.items()}}


@pytest.fixture
def project(db):
    return Project.objects.create(name="MATH phase 2", instructions="Rate every step.")
