"""Roles held per project: granting, revoking, who holds which role where, the right to create projects."""
import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import AnonymousUser, Permission
from django.core.management import CommandError, call_command

from labeling.access.roles import (
    ROLES,
    grant_role,
    has_role,
    may_create_projects,
    revoke_role,
    roles_in,
    roles_of,
)
from labeling.models import Annotator, Membership
from tests.factories import make_project

pytestmark = pytest.mark.django_db


def user(name, **extra):
    return get_user_model().objects.create_user(name, **extra)  # no password: nothing here logs in


def fresh(u):
    # A new object: the role caches on the old one must not hide a bug.
    return get_user_model().objects.get(pk=u.pk)


def test_a_role_holds_in_its_project_only():
    one, two = make_project(), make_project()
    u = user("u")
    grant_role(u, "lead", one)
    assert roles_in(fresh(u), one.pk) == {"lead"}
    assert roles_in(fresh(u), two.pk) == set()
    assert has_role(fresh(u), "lead") and not has_role(fresh(u), "lead", two.pk)
    assert roles_of(fresh(u)) == ["lead"]


def test_a_user_may_hold_several_roles_and_lose_one():
    p = make_project()
    u = user("both")
    grant_role(u, "lead", p)
    grant_role(u, "researcher", p)
    assert roles_in(fresh(u), p.pk) == {"lead", "researcher"}
    assert revoke_role(u, "lead", p)
    assert roles_in(fresh(u), p.pk) == {"researcher"}
    assert not revoke_role(u, "lead", p)


def test_grant_and_revoke_show_at_once_on_the_same_user_object():
    p = make_project()
    u = user("cached")
    assert roles_of(u) == [] and roles_in(u, p.pk) == set()  # fills the caches
    grant_role(u, "lead", p)
    assert roles_of(u) == ["lead"] and roles_in(u, p.pk) == {"lead"}
    revoke_role(u, "lead", p)
    assert roles_of(u) == [] and roles_in(u, p.pk) == set()


def test_granting_annotator_creates_one_annotator_row_and_is_idempotent():
    p, q = make_project(), make_project()
    u = user("ann")
    first = grant_role(u, "annotator", p)
    second = grant_role(u, "annotator", [p, q])
    assert first.pk == second.pk
    assert Annotator.objects.filter(user=u).count() == 1
    assert Membership.objects.filter(user=u).count() == 2
    assert grant_role(u, "lead", p) is None


def test_superusers_hold_every_role_everywhere_staff_alone_none():
    p = make_project()
    assert roles_in(user("staff", is_staff=True), p.pk) == set()
    root = get_user_model().objects.create_superuser("root", password=None)
    assert roles_in(root, p.pk) == set(ROLES)
    assert roles_of(root) == list(ROLES)


def test_inactive_users_and_anonymous_hold_no_role():
    p = make_project()
    u = user("gone")
    grant_role(u, "researcher", p)
    u.is_active = False
    u.save()
    assert roles_of(fresh(u)) == [] and roles_in(fresh(u), p.pk) == set()
    assert not has_role(AnonymousUser(), "annotator")


def test_unknown_role_is_refused():
    with pytest.raises(ValueError, match="unknown role 'admin'"):
        grant_role(user("x"), "admin", make_project())


def test_creating_projects_is_its_own_site_wide_right():
    u = user("maker")
    grant_role(u, "lead", make_project())
    assert not may_create_projects(fresh(u))
    u.user_permissions.add(Permission.objects.get(content_type__app_label="labeling", codename="add_project"))
    assert may_create_projects(fresh(u))


def test_create_roles_command_grants_and_reports_bad_input():
    p = make_project(name="Algebra")
    u = user("cli")
    call_command("create_roles", "--grant", "cli", "researcher", "Algebra", "--grant", "cli", "annotator", str(p.pk))
    assert roles_in(fresh(u), p.pk) == {"annotator", "researcher"}
    with pytest.raises(CommandError, match="no user named 'ghost'"):
        call_command("create_roles", "--grant", "ghost", "lead", "Algebra")
    with pytest.raises(CommandError, match="unknown role"):
        call_command("create_roles", "--grant", "cli", "boss", "Algebra")
    with pytest.raises(CommandError, match="no project 'Geometry'"):
        call_command("create_roles", "--grant", "cli", "lead", "Geometry")
