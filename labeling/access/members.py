"""A project's members: who holds which role in it, added and removed by its leads (and admins).

The use cases behind ``/api/projects/{id}/members/`` and the members page; the views check
that the caller leads the project (labeling/access/projects.py), these functions the rules.
"""
from django.contrib.auth import get_user_model
from django.db import transaction
from rest_framework import status

from labeling import audit
from labeling.errors import DomainError
from labeling.models import Membership

from . import roles


def members(project):
    """The project's memberships, by username then role."""
    return (Membership.objects.filter(project=project).select_related("user", "added_by")
            .order_by("user__username", "role"))


def add_member(project, username, role, by):
    """Give ``username`` the ``role`` in ``project``; ``(membership, created)`` (adding twice changes nothing)."""
    if role not in roles.ROLES:
        raise DomainError(f"Unknown role {role!r}: use one of {', '.join(roles.ROLES)}.", "role")
    user = get_user_model().objects.filter(username=(username or "").strip()).first()
    if user is None:
        raise DomainError(f"No account named {username!r}; an admin creates accounts.", "username")
    if not user.is_active:
        raise DomainError(f"The account {username!r} is deactivated.", "username")
    existing = Membership.objects.filter(project=project, user=user, role=role).first()
    if existing is not None:
        return existing, False
    with transaction.atomic():
        roles.grant_role(user, role, project, by=by)
        membership = Membership.objects.get(project=project, user=user, role=role)
        audit.record(project, by, audit.MEMBER_ADDED, target=f"{user.get_username()} as {role}",
                     after={"username": user.get_username(), "role": role, "membership": membership.pk})
    return membership, True


def remove_member(project, membership_id, by=None):
    """End one membership of ``project``; a project keeps at least one lead."""
    with transaction.atomic():
        found = Membership.objects.select_for_update().filter(project=project, pk=membership_id).first()
        if found is None:
            raise DomainError("No such member of this project.", "membership", status=status.HTTP_404_NOT_FOUND)
        if found.role == roles.LEAD:
            leads = Membership.objects.select_for_update().filter(project=project, role=roles.LEAD)
            if leads.count() == 1:
                raise DomainError("A project keeps at least one lead: add another lead first.", "membership",
                                  status=status.HTTP_409_CONFLICT)
        audit.record(project, by, audit.MEMBER_REMOVED, target=f"{found.user.get_username()} as {found.role}",
                     before={"username": found.user.get_username(), "role": found.role, "membership": found.pk})
        found.delete()
    roles.forget(found.user)
