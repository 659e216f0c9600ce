"""DRF permission classes, one per role (see labeling/access/roles.py).

Every API view names its permission explicitly from this module (or AllowAny / the
authenticated-only default where the endpoint is meant for everyone, such as the login).
Staff and superusers pass every check.
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
