"""Which projects a person sees and what they may do in each: the one home of that rule.

Every page, API view, export, import and job of a project asks here (Argilla's
``authorize(user, policy)``, in plain functions): ``project_for`` and ``authorize`` answer
404 to a person who is no member of the project (a project they may not see does not exist
for them) and 403 to a member without the role the action needs; ``projects_of`` lists the
projects a person sees. Roles themselves are labeling/access/roles.py.
"""
from django.core.exceptions import PermissionDenied
from django.db.models import Exists, OuterRef, Q
from django.http import Http404

from labeling.models import Annotator, AnnotatorProjectStatus, Assignment, Membership, Project

from . import roles

NOT_FOUND = "No such project."
# A row's 404, the same bytes whether the row exists nowhere or in a project the caller does
# not see: a different wording would tell a non-member which ids exist elsewhere (issue #26).
NO_SUCH_ROW = "Not found."


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
    for them: one answer for both), 403 for a member without the role. ``project_of`` finds
    the row's project.
    """
    found = queryset.filter(pk=pk).first()
    if found is None:
        raise Http404(NO_SUCH_ROW)
    try:
        authorize(user, project_of(found), *needed)
    except Http404:
        raise Http404(NO_SUCH_ROW) from None
    return found


def annotator_in(project, annotator_id):
    """The annotator ``annotator_id`` if they are of ``project`` (an annotator member, or one who
    holds work or a standing in it), else the 404 of an annotator that exists nowhere: a lead
    learns nothing of the people of projects they do not lead (not even that the id exists)."""
    of_project = (Exists(Membership.objects.filter(user_id=OuterRef("user_id"), project=project,
                                                   role=roles.ANNOTATOR))
                  | Exists(Assignment.objects.filter(annotator=OuterRef("pk"), project=project))
                  | Exists(AnnotatorProjectStatus.objects.filter(annotator=OuterRef("pk"), project=project)))
    annotator = Annotator.objects.select_related("user").filter(of_project, pk=annotator_id).first()
    if annotator is None:
        raise Http404(NO_SUCH_ROW)
    return annotator
