"""Roles: Django groups that carry one permission each.

A user may hold several roles. Staff and superusers hold every role: they run the site.

- ``annotator`` (``labeling.label``): rates steps.
- ``lead`` (``labeling.lead``): quality control, annotators, throughput.
- ``researcher`` (``labeling.research``): imports, exports, model jobs.

Migration 0003 creates the groups, so ``migrate`` alone gives working roles; ``ensure_roles``
repairs them (for example after someone edited a group in the admin).
"""
from django.contrib.auth.models import Group, Permission
from django.contrib.contenttypes.models import ContentType

ANNOTATOR, LEAD, RESEARCHER = "annotator", "lead", "researcher"

# role -> the permission codenames (on labeling.Project) its group holds.
ROLE_PERMISSIONS = {
    ANNOTATOR: ["label"],
    LEAD: ["lead"],
    RESEARCHER: ["research"],
}

ROLES = tuple(ROLE_PERMISSIONS)


def permission_name(role):
    """The ``app_label.codename`` string ``user.has_perm`` takes for ``role``."""
    return f"labeling.{ROLE_PERMISSIONS[role][0]}"


def ensure_roles():
    """Create the role groups and give each exactly its permissions; return ``{role: group}``."""
    from .models import Project

    project_type = ContentType.objects.get_for_model(Project)
    labels = dict(Project._meta.permissions)
    groups = {}
    for role, codenames in ROLE_PERMISSIONS.items():
        group, _ = Group.objects.get_or_create(name=role)
        permissions = [
            Permission.objects.get_or_create(
                content_type=project_type, codename=codename, defaults={"name": labels[codename]}
            )[0]
            for codename in codenames
        ]
        group.permissions.set(permissions)
        groups[role] = group
    return groups


def grant_role(user, role):
    """Add ``user`` to the group of ``role``; an annotator also gets their Annotator row.

    Raises ValueError for an unknown role. Returns the user's Annotator for the annotator
    role, else None.
    """
    if role not in ROLE_PERMISSIONS:
        raise ValueError(f"unknown role {role!r}; known: {', '.join(ROLES)}")
    group = Group.objects.filter(name=role).first() or ensure_roles()[role]
    user.groups.add(group)
    _forget_cached_permissions(user)
    if role == ANNOTATOR:
        from .models import Annotator

        annotator, _ = Annotator.objects.get_or_create(user=user)
        return annotator
    return None


def revoke_role(user, role):
    """Remove ``user`` from the group of ``role`` (their Annotator row and work stay)."""
    if role not in ROLE_PERMISSIONS:
        raise ValueError(f"unknown role {role!r}; known: {', '.join(ROLES)}")
    user.groups.remove(*Group.objects.filter(name=role))
    _forget_cached_permissions(user)


def has_role(user, role):
    """Whether ``user`` acts in ``role``: by the role's permission, or as staff/superuser."""
    if user is None or not user.is_authenticated or not user.is_active:
        return False
    return user.is_staff or user.is_superuser or user.has_perm(permission_name(role))


def roles_of(user):
    """The roles ``user`` holds, in the order of ``ROLES`` (every role for staff)."""
    return [role for role in ROLES if has_role(user, role)]


def _forget_cached_permissions(user):
    # ModelBackend caches permissions on the user object; a grant must show at once.
    for attr in ("_perm_cache", "_user_perm_cache", "_group_perm_cache"):
        user.__dict__.pop(attr, None)
