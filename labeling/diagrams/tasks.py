"""The Celery job that draws a project's diagrams, queued when an import commits.

On the ``default`` (CPU) queue. Safe to run twice or at once in two workers (store.py); queued
once per import, so it runs again on an outage (``RetriedOnOutage``). The worker registers it
through labeling/tasks.py.
"""
from celery import shared_task
from django.db import transaction

from labeling.models import Project
from labeling.outages import RetriedOnOutage

from . import store


@shared_task(name="labeling.diagrams.draw_project_diagrams", base=RetriedOnOutage)
def draw_project_diagrams(project_id):
    """Find the project's diagrams and draw those not drawn yet; returns the counts."""
    project = Project.objects.filter(pk=project_id).first()
    if project is None:
        return None  # deleted since the job was queued
    found = store.collect(project)
    drawn, failed = store.draw_pending(project)
    return {"diagrams": found, "drawn": drawn, "failed": failed}


def queue_after_commit(project):
    """Queue the drawing once the current transaction (the import's) commits."""
    project_id = project.id
    transaction.on_commit(lambda: draw_project_diagrams.delay(project_id), robust=True)
