"""Changing a project's settings: the one use case behind the project's, the quality and the loop settings.

Each of those forms validates its own fields (its serializer); this saves only what was sent
(a lead saving the quality settings meanwhile keeps theirs) and logs what changed, before and
after, in the same transaction (labeling/audit).
"""
from django.db import transaction

from labeling import audit
from labeling.models import Project


def _plain(value):
    """A setting's value as JSON can hold it (a Decimal or a date as text)."""
    return value if isinstance(value, (str, int, float, bool, list, dict, type(None))) else str(value)


def change_settings(project, values, by, *, reason=""):
    """Set ``values`` ({field: value}, already validated) on ``project``; logs the fields that changed."""
    with transaction.atomic():
        current = Project.objects.select_for_update().get(pk=project.pk)
        before = {name: _plain(getattr(current, name)) for name in values}
        for name, value in values.items():
            setattr(project, name, value)
        project.save(update_fields=list(values))
        was, now = audit.changed(before, {name: _plain(getattr(project, name)) for name in values})
        if now:
            audit.record(project, by, audit.SETTINGS, target=f"project {project.pk}", before=was, after=now,
                         reason=reason)
    return project
