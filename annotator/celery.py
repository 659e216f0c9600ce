"""The Celery application.

Two queues: ``gpu`` for scoring and training (the PRM worker), ``default`` for exports and
statistics. The broker comes from ``CELERY_BROKER_URL`` (Redis in production); the demo uses
a filesystem broker so it needs no Redis.
"""
import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "annotator.settings")

app = Celery("stepmark")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
