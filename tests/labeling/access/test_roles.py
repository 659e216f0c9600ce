"""Roles as groups: what migrate creates, granting, and who holds which role."""
import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.core.management import CommandError, call_command

from labeling.access.roles import (
    ROLE_PERMISSIONS,
    ROLES,
    ensure_roles,
    grant_role,
    has_role,
    roles_of,
)
from labeling.models import Annotator

pytestmark = pytest.mark.django_db


def user(name, **extra):
    return get_user_model().objects.create_user(name, **extra)  # no password: nothing here logs in


def fresh(u):
    # A new object: permission caches on the old one must not hide a bug.
    return get_user_model().objects.get(pk=u.pk)


def test_migrate_alone_creates_the_groups_with_their_permissions():
    for role, codenames in ROLE_PERMISSIONS.items():
        group = Group.objects.get(name=role)
        held = {(p.content_type.app_label, p.codename) for p in group.permissions.all()}
        assert held == {("labeling", c) for c in codenames}


def test_each_role_grants_exactly_its_own_permission():
    for role in ROLES:
        u = user(f"u-{role}")
        grant_role(u, role)
        assert roles_of(fresh(u)) == [role]
        assert fresh(u).has_perm(f"labeling.{ROLE_PERMISSIONS[role][0]}")


def test_a_user_may_hold_several_roles_and_lose_one():
    u = user("both")
    grant_role(u, "lead")
    grant_role(u, "researcher")
    assert roles_of(fresh(u)) == ["lead", "researcher"]
    u.groups.remove(Group.objects.get(name="lead"))  # what the admin's user form does
    assert roles_of(fresh(u)) == ["researcher"]


def test_grant_shows_at_once_on_the_same_user_object():
    u = user("cached")
    assert roles_of(u) == []  # fills ModelBackend's permission cache
    grant_role(u, "lead")
    assert roles_of(u) == ["lead"]


def test_granting_annotator_creates_one_annotator_row_and_is_idempotent():
    u = user("ann")
    first = grant_role(u, "annotator")
    second = grant_role(u, "annotator")
    assert first.pk == second.pk
    assert Annotator.objects.filter(user=u).count() == 1
    assert grant_role(u, "lead") is None
    assert Annotator.objects.count() == 1


def test_staff_and_superusers_hold_every_role_without_groups():
    assert roles_of(user("staff", is_staff=True)) == list(ROLES)
    assert roles_of(get_user_model().objects.create_superuser("root", password=None)) == list(ROLES)


def test_inactive_users_and_anonymous_hold_no_role():
    from django.contrib.auth.models import AnonymousUser

    u = user("gone")
    grant_role(u, "researcher")
    u.is_active = False
    u.save()
    assert roles_of(fresh(u)) == []
    assert not has_role(AnonymousUser(), "annotator")


def test_unknown_role_is_refused():
    with pytest.raises(ValueError, match="unknown role 'admin'"):
        grant_role(user("x"), "admin")


def test_ensure_roles_repairs_a_group_edited_by_hand():
    Group.objects.get(name="lead").permissions.clear()
    Group.objects.get(name="researcher").delete()
    ensure_roles()
    u = user("repaired")
    grant_role(u, "lead")
    grant_role(u, "researcher")
    assert roles_of(fresh(u)) == ["lead", "researcher"]


def test_create_roles_command_grants_and_reports_bad_input(capsys):
    u = user("cli")
    call_command("create_roles", "--grant", "cli", "researcher", "--grant", "cli", "annotator")
    assert roles_of(fresh(u)) == ["annotator", "researcher"]
    with pytest.raises(CommandError, match="no user named 'ghost'"):
        call_command("create_roles", "--grant", "ghost", "lead")
    with pytest.raises(CommandError, match="unknown role"):
        call_command("create_roles", "--grant", "cli", "boss")


@pytest.mark.parametrize("held", [(), ("annotator",), ("lead", "researcher"), ("annotator", "lead", "researcher")])
def test_the_token_checks_role_mask_names_exactly_the_roles_held(held):
    """The one-statement token check reads roles as a bit mask: every combination comes back whole."""
    from django.db import connection

    from labeling.access.roles import _role_codenames, role_mask_sql

    u = user("masked")
    for role in held:
        grant_role(u, role)
    if "lead" in held:  # a permission held directly as well as through the group counts once
        u.user_permissions.add(Group.objects.get(name="lead").permissions.get())
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT {role_mask_sql('%s')}", [u.pk, u.pk])
        mask = cursor.fetchone()[0]
    assert mask == sum(1 << ROLES.index(role) for role in held)
    assert _role_codenames(u.pk) == {ROLE_PERMISSIONS[role][0] for role in held}
