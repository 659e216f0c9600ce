"""The default beat schedule, as django_celery_beat rows an admin edits without a deploy.

``ensure_default_schedules`` (run by ``manage.py setup_schedules``, which the compose file's
one-shot ``migrate`` service runs after the migrations) creates the periodic tasks below when
they are missing, and leaves existing ones alone: an interval, a time of day or an "enabled"
box changed in the admin (Periodic tasks) survives every later deploy. To stop a job, untick
"enabled" rather than deleting the row; a deleted row comes back at the next deploy.

Beat (``celery -A annotator beat``, ``CELERY_BEAT_SCHEDULER`` = the database scheduler) reads
the rows; the queue follows ``CELERY_TASK_ROUTES`` (``scoring.tasks.*`` on ``gpu``).
"""
import dataclasses

from django.db import transaction
from django_celery_beat.models import CrontabSchedule, IntervalSchedule, PeriodicTask


@dataclasses.dataclass(frozen=True)
class Default:
    name: str
    task: str
    description: str
    interval: tuple | None = None  # (every, period), e.g. (1, IntervalSchedule.HOURS)
    crontab: dict | None = None  # CrontabSchedule fields


DEFAULTS = [
    Default(
        name="export snapshots of every project",
        task="labeling.tasks.export_all_snapshots",
        description="A PRM800K snapshot of each project under STEPMARK_EXPORT_DIR, then the retention "
        "rule (STEPMARK_EXPORT_KEEP, STEPMARK_EXPORT_RETENTION_DAYS). Daily at 03:00 UTC by default.",
        crontab={"minute": "0", "hour": "3", "day_of_week": "*", "day_of_month": "*", "month_of_year": "*",
                 "timezone": "UTC"},
    ),
    Default(
        name="score gold passes",
        task="labeling.quality.score_pending_gold_passes",
        description="Score the new passes over gold items and pause annotators whose rolling gold score fell "
        "below the project's threshold (not in the submit, so that a gold submit looks like any other). Every "
        "minute by default.",
        interval=(1, IntervalSchedule.MINUTES),
    ),
    Default(
        name="retrain projects that are due",
        task="scoring.tasks.retrain_all_due",
        description="Retrain the PRM of every project whose new ratings make it due (GPU worker). Hourly by "
        "default.",
        interval=(1, IntervalSchedule.HOURS),
    ),
]


@transaction.atomic
def ensure_default_schedules():
    """Create the missing default periodic tasks; return the names created (empty when none)."""
    created = []
    for default in DEFAULTS:
        if PeriodicTask.objects.filter(name=default.name).exists():
            continue  # the admin's version wins
        if default.interval is not None:
            every, period = default.interval
            schedule = {"interval": _reuse_or_create(IntervalSchedule, every=every, period=period)}
        else:
            schedule = {"crontab": _reuse_or_create(CrontabSchedule, **default.crontab)}
        # get_or_create: two deploys running this at once create one row.
        _, new = PeriodicTask.objects.get_or_create(
            name=default.name,
            defaults={"task": default.task, "description": default.description, "enabled": True, **schedule},
        )
        if new:
            created.append(default.name)
    return created


def _reuse_or_create(model, **fields):
    # The admin may have made several identical schedule rows; any of them will do.
    return model.objects.filter(**fields).order_by("pk").first() or model.objects.create(**fields)
