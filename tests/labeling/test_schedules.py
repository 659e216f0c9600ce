"""The default beat schedule: created once, then the admin's to change."""
import io

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django_celery_beat.models import CrontabSchedule, IntervalSchedule, PeriodicTask
from django_celery_beat.schedulers import DatabaseScheduler

from annotator.celery import app
from labeling import tasks as labeling_tasks
from labeling.schedules import DEFAULTS, ensure_default_schedules

pytestmark = pytest.mark.django_db

EXPORT, RETRAIN = "export snapshots of every project", "retrain projects that are due"
GOLD = "score gold passes"


def test_creates_the_three_jobs_with_their_schedules():
    assert set(ensure_default_schedules()) == {EXPORT, GOLD, RETRAIN}

    export = PeriodicTask.objects.get(name=EXPORT)
    assert export.task == "labeling.tasks.export_all_snapshots" and export.enabled
    assert (export.crontab.minute, export.crontab.hour, export.crontab.day_of_week) == ("0", "3", "*")
    assert export.interval is None

    retrain = PeriodicTask.objects.get(name=RETRAIN)
    assert retrain.task == "scoring.tasks.retrain_all_due" and retrain.enabled
    assert (retrain.interval.every, retrain.interval.period) == (1, IntervalSchedule.HOURS)

    gold = PeriodicTask.objects.get(name=GOLD)
    assert gold.task == "labeling.quality.score_pending_gold_passes" and gold.enabled
    assert labeling_tasks.score_pending_gold_passes.name == gold.task  # in the module workers import
    assert (gold.interval.every, gold.interval.period) == (1, IntervalSchedule.MINUTES)


def test_running_again_changes_nothing():
    ensure_default_schedules()
    before = list(PeriodicTask.objects.order_by("pk").values())
    counts = IntervalSchedule.objects.count(), CrontabSchedule.objects.count()
    assert ensure_default_schedules() == []
    assert list(PeriodicTask.objects.order_by("pk").values()) == before
    assert (IntervalSchedule.objects.count(), CrontabSchedule.objects.count()) == counts


def test_an_admins_edits_survive_the_next_deploy(client):
    ensure_default_schedules()
    retrain = PeriodicTask.objects.get(name=RETRAIN)
    admin = get_user_model().objects.create_superuser("boss", password="a-long-test-password")
    client.force_login(admin)
    # Through the admin's change form, as a person would: every 6 hours, and the export off.
    six_hours = IntervalSchedule.objects.create(every=6, period=IntervalSchedule.HOURS)
    form = client.get(f"/admin/django_celery_beat/periodictask/{retrain.pk}/change/")
    assert form.status_code == 200
    response = client.post(f"/admin/django_celery_beat/periodictask/{retrain.pk}/change/", {
        "name": RETRAIN, "regtask": "", "task": retrain.task, "enabled": "on", "description": retrain.description,
        "interval": six_hours.pk, "crontab": "", "solar": "", "clocked": "", "args": "[]", "kwargs": "{}",
        "expire_seconds": "", "queue": "", "exchange": "", "routing_key": "", "headers": "{}", "priority": "",
        "start_time_0": "", "start_time_1": "", "expires_0": "", "expires_1": "",
    })
    assert response.status_code == 302, response.content.decode()[:2000]
    PeriodicTask.objects.filter(name=EXPORT).update(enabled=False)

    call_command("setup_schedules", stdout=io.StringIO())

    retrain.refresh_from_db()
    assert (retrain.interval.every, retrain.interval.period) == (6, IntervalSchedule.HOURS)
    assert not PeriodicTask.objects.get(name=EXPORT).enabled


def test_a_deleted_default_comes_back_and_the_command_says_what_it_did():
    ensure_default_schedules()
    PeriodicTask.objects.filter(name=EXPORT).delete()
    out = io.StringIO()
    call_command("setup_schedules", stdout=out)
    assert f"{EXPORT} (labeling.tasks.export_all_snapshots): created" in out.getvalue()
    assert f"{RETRAIN} (scoring.tasks.retrain_all_due): kept" in out.getvalue()
    assert PeriodicTask.objects.filter(name__in=[d.name for d in DEFAULTS]).count() == 3


def test_beat_reads_the_rows():
    ensure_default_schedules()
    scheduler = DatabaseScheduler(app=app, lazy=True)
    # (The scheduler loads a crontab row only in the hours around its run; read it directly.)
    export = scheduler.Entry(PeriodicTask.objects.get(name=EXPORT), app=app)
    assert export.task == "labeling.tasks.export_all_snapshots"
    assert export.schedule.hour == {3} and export.schedule.minute == {0}
    retrain = scheduler.all_as_schedule()[RETRAIN]
    assert retrain.task == "scoring.tasks.retrain_all_due"
    assert retrain.schedule.run_every.total_seconds() == 3600
