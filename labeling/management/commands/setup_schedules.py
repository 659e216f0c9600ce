"""``manage.py setup_schedules``: create the default beat schedule where it is missing."""
from django.core.management.base import BaseCommand

from labeling.schedules import DEFAULTS, ensure_default_schedules


class Command(BaseCommand):
    help = (
        "Create the default periodic tasks (scheduled snapshots, retraining) that are missing. "
        "Existing ones, as edited in the admin, are left alone. Safe to run on every deploy."
    )

    def handle(self, *args, **options):
        created = ensure_default_schedules()
        for default in DEFAULTS:
            state = "created" if default.name in created else "kept (as in the admin)"
            self.stdout.write(f"{default.name} ({default.task}): {state}")
