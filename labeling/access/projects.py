"""Which projects a person may see: the one home of that rule (pages, API, diagrams)."""
from labeling.models import Project

from . import roles


def visible_projects(user):
    """Every project for a lead or researcher (and staff), the active ones for an annotator,
    none for an account without a role."""
    held = roles.roles_of(user)
    if roles.LEAD in held or roles.RESEARCHER in held:
        return Project.objects.all()
    if roles.ANNOTATOR in held:
        return Project.objects.filter(is_active=True)
    return Project.objects.none()
