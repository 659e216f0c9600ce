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


def ensure_roles():
    """Create the role groups and give each exactly its permissions; return ``{role: group}``."""
    from labeling.models import Project

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
        from labeling.models import Annotator

        annotator, _ = Annotator.objects.get_or_create(user=user)
        return annotator
    return None


def has_role(user, role):
    """Whether ``user`` acts in ``role``: by the role's permission, or as staff/superuser.

    The role permissions are read in one query per user object and kept on it (like
    ModelBackend's permission cache), so a request checks any number of roles for one query.
    """
    if user is None or not user.is_authenticated or not user.is_active:
        return False
    if user.is_staff or user.is_superuser:
        return True
    held = user.__dict__.get(_CACHE)
    if held is None:
        held = user.__dict__[_CACHE] = _role_codenames(user.pk)
    return ROLE_PERMISSIONS[role][0] in held


def roles_of(user):
    """The roles ``user`` holds, in the order of ``ROLES`` (every role for staff)."""
    return [role for role in ROLES if has_role(user, role)]


def role_mask_sql(user_id_sql):
    """Select-list SQL: a bit mask of the roles whose permission the user ``user_id_sql`` holds.

    Bit ``i`` stands for ``ROLES[i]``. For a statement that reads the user anyway (the
    labelling API's token check): hand the value to ``remember_roles`` and ``has_role`` asks
    no more. ``user_id_sql`` is a column or a placeholder (then the statement takes the id
    twice). One subquery over the role permissions, which PostgreSQL runs in about half the
    time of an EXISTS per role.
    """
    from django.contrib.auth import get_user_model

    User = get_user_model()
    direct = User.user_permissions.through._meta.db_table
    member = User.groups.through._meta.db_table
    granted = Group.permissions.through._meta.db_table
    bits = " ".join(f"WHEN '{ROLE_PERMISSIONS[role][0]}' THEN {1 << i}" for i, role in enumerate(ROLES))
    codenames = ", ".join(f"'{ROLE_PERMISSIONS[role][0]}'" for role in ROLES)
    return (
        f"(SELECT COALESCE(SUM(CASE p.codename {bits} END), 0) FROM {Permission._meta.db_table} p"
        f" JOIN {ContentType._meta.db_table} ct ON ct.id = p.content_type_id"
        f" WHERE ct.app_label = 'labeling' AND p.codename IN ({codenames})"
        f" AND (p.id IN (SELECT permission_id FROM {direct} WHERE user_id = {user_id_sql})"
        f" OR p.id IN (SELECT g.permission_id FROM {granted} g JOIN {member} m ON m.group_id = g.group_id"
        f" WHERE m.user_id = {user_id_sql})))"
    )


def remember_roles(user, mask):
    """Keep on ``user`` which roles' permissions it holds (``mask``: the ``role_mask_sql`` value)."""
    user.__dict__[_CACHE] = _codenames(mask)


def _codenames(mask):
    return frozenset(ROLE_PERMISSIONS[role][0] for i, role in enumerate(ROLES) if int(mask) >> i & 1)


_CACHE = "_stepmark_role_codenames"


def _role_codenames(user_id):
    """The role permission codenames the user holds directly or through a group (one query)."""
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute(f"SELECT {role_mask_sql('%s')}", [user_id, user_id])
        return _codenames(cursor.fetchone()[0])


def _forget_cached_permissions(user):
    # Permissions are cached on the user object (ours and ModelBackend's); a grant must show at once.
    for attr in ("_perm_cache", "_user_perm_cache", "_group_perm_cache", _CACHE):
        user.__dict__.pop(attr, None)
