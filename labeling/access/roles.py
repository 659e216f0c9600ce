"""Roles, held per project: annotator, lead, researcher (``labeling.models.Membership``).

- ``annotator``: rates steps in the project.
- ``lead``: the project's quality control, annotators, throughput and members.
- ``researcher``: the project's imports, exports and model jobs.

A person may hold several roles in a project and none in another. Superusers act in every
project without a membership (they run the site); creating a project is the one site-wide
right besides that, the permission ``labeling.add_project`` (its creator becomes the new
project's lead and researcher). What a person may see and do in a project is decided in
``labeling/access/projects.py`` from what this module answers.
"""
from labeling.models import Membership
from labeling.models.prepared import prepared

ANNOTATOR, LEAD, RESEARCHER = Membership.ANNOTATOR, Membership.LEAD, Membership.RESEARCHER
ROLES = (ANNOTATOR, LEAD, RESEARCHER)


def _check(role):
    if role not in ROLES:
        raise ValueError(f"unknown role {role!r}; known: {', '.join(ROLES)}")


def grant_role(user, role, projects, by=None):
    """Make ``user`` a member with ``role`` of each of ``projects`` (a project or several).

    Raises ValueError for an unknown role. An annotator also gets their Annotator row, which
    the loop needs; returns it for the annotator role, else None.
    """
    from labeling.models import Annotator, Project

    _check(role)
    projects = [projects] if isinstance(projects, Project) else list(projects)
    Membership.objects.bulk_create(
        [Membership(user=user, project=project, role=role, added_by=by) for project in projects],
        ignore_conflicts=True,
    )
    forget(user)
    if role == ANNOTATOR:
        return Annotator.objects.get_or_create(user=user)[0]
    return None


def revoke_role(user, role, project):
    """End ``user``'s ``role`` in ``project``; whether they held it."""
    _check(role)
    deleted, _ = Membership.objects.filter(user=user, project=project, role=role).delete()
    forget(user)
    return bool(deleted)


def is_admin(user):
    """A superuser: acts in every project without a membership."""
    return bool(user is not None and user.is_authenticated and user.is_active and user.is_superuser)


def may_create_projects(user):
    """The site-wide right to create a project (its creator leads and researches it)."""
    return bool(user is not None and user.is_authenticated and user.is_active and user.has_perm("labeling.add_project"))


def roles_in(user, project_id):
    """The roles ``user`` holds in project ``project_id`` (every role for a superuser)."""
    if user is None or not user.is_authenticated or not user.is_active:
        return frozenset()
    if user.is_superuser:
        return frozenset(ROLES)
    return _memberships(user).get(int(project_id), frozenset())


def has_role(user, role, project_id=None):
    """Whether ``user`` holds ``role`` in project ``project_id``, or in any project when None.

    "In any project" is the coarse check of the API's permission classes (labeling/access/
    permissions.py); each view then names the project (labeling/access/projects.py). The
    roles are read in one query per user object and kept on it (``_memberships``).
    """
    if project_id is not None:
        return role in roles_in(user, project_id)
    if user is None or not user.is_authenticated or not user.is_active:
        return False
    if user.is_superuser:
        return True
    return any(role in held for held in _memberships(user).values())


def roles_of(user):
    """The roles ``user`` holds in some project, in the order of ``ROLES`` (every role for a superuser)."""
    return [role for role in ROLES if has_role(user, role)]


_MEMBERSHIPS = "_stepmark_memberships"


def _memberships(user):
    """``{project id: roles}`` of ``user``, read in one query per user object and kept on it: every
    role check of a request (the permission's "anywhere", then the project's) asks it alone."""
    held = user.__dict__.get(_MEMBERSHIPS)
    if held is None:
        by_project = {}
        for project_id, role in _membership_rows(user.pk):
            by_project.setdefault(project_id, set()).add(role)
        held = user.__dict__[_MEMBERSHIPS] = {p: frozenset(r) for p, r in by_project.items()}
    return held


@prepared
def _membership_rows(user_id):
    return Membership.objects.filter(user_id=user_id).order_by().values_list("project_id", "role")


def forget(user):
    """Drop what is cached on ``user`` (ours and ModelBackend's permissions): a change must show at once."""
    for attr in ("_perm_cache", "_user_perm_cache", "_group_perm_cache", _MEMBERSHIPS):
        user.__dict__.pop(attr, None)
