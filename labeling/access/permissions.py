"""DRF permission classes, one per role (see labeling/access/roles.py): the coarse first check.

Every API view names its permission explicitly from this module (or AllowAny / the
authenticated-only default where the endpoint is meant for everyone, such as the login).
A role class passes a person who holds the role in at least one project (superusers pass
every check), so an account without it is refused before anything is read; the view then
names the project and ``labeling.access.projects`` decides there (404 for a non-member, 403
for a member without the role).
"""
from rest_framework.permissions import BasePermission

from labeling.access import roles


class _RolePermission(BasePermission):
    roles: tuple = ()
    message = "Your account does not have the role this needs."

    def has_permission(self, request, view):
        return any(roles.has_role(request.user, role) for role in self.roles)


class IsAnnotator(_RolePermission):
    """Holds ``labeling.label``: rates steps."""

    roles = (roles.ANNOTATOR,)
    message = "This needs the annotator role."


class IsLead(_RolePermission):
    """Holds ``labeling.lead``: quality control and annotators."""

    roles = (roles.LEAD,)
    message = "This needs the lead role."


class IsResearcher(_RolePermission):
    """Holds ``labeling.research``: imports, exports, model jobs."""

    roles = (roles.RESEARCHER,)
    message = "This needs the researcher role."


class LeadOrResearcher(_RolePermission):
    """Holds the lead or the researcher role."""

    roles = (roles.LEAD, roles.RESEARCHER)
    message = "This needs the lead or the researcher role."


class HasAnyRole(_RolePermission):
    """Holds at least one role: an account nobody has given a role yet sees nothing."""

    roles = roles.ROLES
    message = "Your account has no role yet; ask a lead to grant one."


class MayCreateProjects(BasePermission):
    """The site-wide right ``labeling.add_project`` (or a superuser): whoever creates a project leads it."""

    message = "Creating a project needs the permission to create projects; ask an admin."

    def has_permission(self, request, view):
        return roles.may_create_projects(request.user)
