"""A project's members: who holds which role in it, added and removed by its leads (and admins).

The use cases behind ``/api/projects/{id}/members/`` and the members page; the views check
that the caller leads the project (labeling/access/projects.py), these functions the rules.
"""
from django.contrib.auth import get_user_model
from django.contrib.auth.tokens import default_token_generator
from django.contrib.auth.validators import UnicodeUsernameValidator
from django.core.exceptions import ValidationError
from django.db import transaction
from django.urls import reverse
from django.utils.encoding import force_bytes
from django.utils.http import urlsafe_base64_encode
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
    user = _account(username)
    if user is None:
        raise DomainError(f"No account named {username.strip()!r}: check the spelling, or create the account "
                          "(below).", "username")
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


def _account(username):
    """The account named ``username`` (spaces around it ignored); a name typed in another case finds
    the one account it can only mean (none when two differ only in case)."""
    name = (username or "").strip()
    accounts = get_user_model().objects
    found = accounts.filter(username=name).first()
    if found is None and name:
        alike = list(accounts.filter(username__iexact=name)[:2])
        found = alike[0] if len(alike) == 1 else None
    return found


def create_member(project, username, role, by, email=""):
    """A new account ``username`` with ``role`` in ``project`` (and nothing anywhere else), for a lead
    to hand to a person who has none: ``(membership, set_password_path)``.

    The account has no usable password until its owner opens the one-time link (Django's password
    reset token: it ends once a password is set, or after ``PASSWORD_RESET_TIMEOUT``), which works
    without a mail server; the lead hands it over. Logged as the member added, with the account made.
    """
    name = (username or "").strip()
    try:
        UnicodeUsernameValidator()(name)
    except ValidationError:
        raise DomainError("An account name holds letters, digits and @ . + - _ only.", "username") from None
    if not name or len(name) > 150:
        raise DomainError("Give the account a name of 1 to 150 characters.", "username")
    if role not in roles.ROLES:
        raise DomainError(f"Unknown role {role!r}: use one of {', '.join(roles.ROLES)}.", "role")
    users = get_user_model()
    with transaction.atomic():
        if users.objects.filter(username__iexact=name).exists():
            raise DomainError(f"An account named {name!r} exists: add it as a member instead.", "username")
        user = users(username=name, email=(email or "").strip())
        user.set_unusable_password()
        user.save()
        roles.grant_role(user, role, project, by=by)
        membership = Membership.objects.get(project=project, user=user, role=role)
        audit.record(project, by, audit.MEMBER_ADDED, target=f"{name} as {role}",
                     after={"username": name, "role": role, "membership": membership.pk, "account": "created"})
    link = reverse("welcome", kwargs={"uidb64": urlsafe_base64_encode(force_bytes(user.pk)),
                                      "token": default_token_generator.make_token(user)})
    return membership, link


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
