"""The Stepmark Django project: settings, root URLs, the Celery app."""
from .celery import app as celery_app

__all__ = ("celery_app",)
