"""Background jobs of the human side, on the ``default`` (CPU) queue.

Beat runs ``export_all_snapshots`` on the schedule ``labeling/schedules.py`` creates; the
researcher page queues ``export_project_snapshot`` for one project. Both are safe to run
twice (see ``labeling/exports/snapshots.py``).
"""
import logging

from celery import shared_task
from django.conf import settings

from labeling.exports import snapshots
from labeling.models import Project
from labeling.outages import RetriedOnOutage, will_retry
# The jobs that live with their rules, imported here so that workers register them: gold
# scoring, drawing the [asy] diagrams of an import, and an upload's import job.
from labeling.diagrams.tasks import draw_project_diagrams  # noqa: F401
from labeling.imports.jobs import run_import_job  # noqa: F401
from labeling.quality.gold_passes import score_pending_gold_passes  # noqa: F401

logger = logging.getLogger(__name__)


@shared_task(name="labeling.tasks.export_project_snapshot", base=RetriedOnOutage, bind=True)
def export_project_snapshot(self, project_id):
    """Write a PRM800K snapshot of one project, then apply the retention rule.

    Returns the snapshot's file name (None when the project is gone). An outage runs it again
    (``RetriedOnOutage``); a failure for good is recorded for the researcher page, then raised
    so the worker logs it.
    """
    project = Project.objects.filter(pk=project_id).first()
    if project is None:
        return None  # deleted since the job was queued
    snapshots.record_job(project, snapshots.RUNNING)
    try:
        path = snapshots.export_project_snapshot(project, settings.STEPMARK_EXPORT_DIR)
        deleted = snapshots.apply_retention(
            project,
            settings.STEPMARK_EXPORT_DIR,
            keep_last=settings.STEPMARK_EXPORT_KEEP,
            max_age_days=settings.STEPMARK_EXPORT_RETENTION_DAYS,
            keep=[path],
        )
    except Exception as exc:
        if not will_retry(self, exc):
            snapshots.record_job(project, snapshots.FAILED, error=f"{type(exc).__name__}: {exc}")
        raise
    snapshots.record_job(project, snapshots.DONE, name=path.name, deleted=len(deleted))
    if deleted:
        logger.info("snapshot %s of project %s; retention deleted %s", path.name, project.pk, deleted)
    return path.name


@shared_task(name="labeling.tasks.export_all_snapshots", base=RetriedOnOutage)
def export_all_snapshots():
    """Queue a snapshot of every project (one job each, so one failure stops no other)."""
    ids = list(Project.objects.order_by("pk").values_list("pk", flat=True))
    for project_id in ids:
        export_project_snapshot.delay(project_id)
    return len(ids)
