"""Which projects a person sees and what they may do in each: the one home of that rule.

Every page, API view, export, import and job of a project asks here (Argilla's
``authorize(user, policy)``, in plain functions): ``project_for`` and ``authorize`` answer
404 to a person who is no member of the project (a project they may not see does not exist
for them) and 403 to a member without the role the action needs; ``projects_of`` lists the
projects a person sees. Roles themselves are labeling/access/roles.py.
"""
from django.core.exceptions import PermissionDenied
from django.db.models import Q
from django.http import Http404

from labeling.models import Membership, Project

from . import roles

NOT_FOUND = "No such project."


def projects_of(user, *needed):
    """The projects ``user`` sees, with one of ``needed`` roles (any role when none is named).

    A lead or researcher sees their projects active or not; an annotator only the active ones
    (a deactivated project vanishes from their list). A superuser sees every project.
    """
    needed = set(needed or roles.ROLES)
    if roles.is_admin(user):
        return Project.objects.all()
    if user is None or not user.is_authenticated or not user.is_active:
        return Project.objects.none()
    held = Membership.objects.filter(user_id=user.pk)
    staff_roles = needed - {roles.ANNOTATOR}
    visible = Q(pk__in=held.filter(role__in=staff_roles).values("project_id")) if staff_roles else Q(pk__in=[])
    if roles.ANNOTATOR in needed:
        visible |= Q(is_active=True, pk__in=held.filter(role=roles.ANNOTATOR).values("project_id"))
    return Project.objects.filter(visible)


def authorize(user, project, *needed):
    """Refuse unless ``user`` holds one of ``needed`` roles in ``project`` (any role when none is named).

    Raises Http404 for a non-member (or an annotator-only member of a deactivated project,
    which they no longer see) and PermissionDenied for a member without the role.
    """
    held = roles.roles_in(user, project.pk)
    if not held or (held == {roles.ANNOTATOR} and not project.is_active):
        raise Http404(NOT_FOUND)
    if needed and not held & set(needed):
        raise PermissionDenied(f"This needs the {' or '.join(needed)} role in this project.")
    return project


def project_for(user, pk, *needed, queryset=None):
    """The project ``pk`` if ``user`` may act in it with one of ``needed`` roles (``authorize``), else 404/403."""
    project = (queryset if queryset is not None else Project.objects).filter(pk=pk).first()
    if project is None:
        raise Http404(NOT_FOUND)
    return authorize(user, project, *needed)


def visible_projects(user):
    """Every project ``user`` sees in any role (the pages, the projects API, the diagrams)."""
    return projects_of(user)


def object_for(user, queryset, pk, *needed, project_of=lambda obj: obj.project):
    """The row ``pk`` of ``queryset`` if ``user`` may act in its project with one of ``needed`` roles.

    404 when there is no such row or its project is not the caller's (the row does not exist
    for them), 403 for a member without the role. ``project_of`` finds the row's project.
    """
    found = queryset.filter(pk=pk).first()
    if found is None:
        raise Http404("Not found.")
    authorize(user, project_of(found), *needed)
    return found
