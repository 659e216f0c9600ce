from django.apps import AppConfig


class LabelingConfig(AppConfig):
    name = "labeling"
    verbose_name = "Labeling"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self):
        # Submits keep the lead dashboard's cache current (labeling/stats/cache.py).
        from django.db.models.signals import post_delete, post_save

        from labeling import checks  # noqa: F401 (checks registers itself)
        from labeling.models import Assignment
        from labeling.stats import cache as stats_cache

        post_save.connect(stats_cache.on_submit, sender=Assignment, dispatch_uid="stats_cache_submit")
        post_delete.connect(stats_cache.on_delete, sender=Assignment, dispatch_uid="stats_cache_delete")
        # A new password ends the account's API tokens (labeling/access/tokens.py).
        from django.conf import settings

        from labeling.access import tokens

        post_save.connect(tokens.on_user_saved, sender=settings.AUTH_USER_MODEL, dispatch_uid="tokens_password")
        # The end of an outage is logged when the service answers again (labeling/outages.py).
        from celery.signals import after_task_publish
        from django.db.backends.signals import connection_created

        from labeling import outages

        connection_created.connect(outages.database_connected, dispatch_uid="outages_database")
        after_task_publish.connect(outages.job_published, dispatch_uid="outages_broker")
