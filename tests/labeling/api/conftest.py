"""Users in each role, API clients signed in as them, and a small project."""
import pytest
from django.contrib.auth.models import Permission
from rest_framework.test import APIClient

from labeling.models import Project
from tests.factories import client_for, make_user, make_project


@pytest.fixture
def users(db, project):
    """One user per role, members of ``project`` and of every project the test makes; leads and
    researchers may create projects (as migration 0016 left the roles of before)."""
    users = {
        "nobody": make_user("nobody"),
        "annotator": make_user("ann", "annotator"),
        "lead": make_user("lead", "lead"),
        "researcher": make_user("res", "researcher"),
    }
    add_project = Permission.objects.get(content_type__app_label="labeling", codename="add_project")
    for name in ("lead", "researcher"):
        users[name].user_permissions.add(add_project)
    return users


@pytest.fixture
def clients(users):
    """One APIClient per role, plus ``anonymous``."""
    return {"anonymous": APIClient(), **{name: client_for(user) for name, user in users.items()}}


@pytest.fixture
def project(db):
    return make_project(name="MATH phase 2", instructions="Rate every step.")
