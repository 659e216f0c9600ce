"""Users in each role, API clients signed in as them, and a small project."""
import pytest
from rest_framework.test import APIClient

from labeling.models import Project
from tests.factories import client_for, make_user


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
