"""``manage.py draw_diagrams [--project NAME] [--redraw-failed]``: draw the [asy] diagrams now.

An import queues this work for a worker by itself (labeling/diagrams/tasks.py); the command is
for projects imported before diagrams were drawn, and for trying failed ones again
(``--redraw-failed``, say after raising STEPMARK_DIAGRAM_TIMEOUT). Every project without
``--project``. A code drawn once is never drawn again, in any project.
"""
import time

from django.core.management.base import BaseCommand

from labeling.diagrams import store
from labeling.management.importing import get_project
from labeling.models import Diagram, Project


class Command(BaseCommand):
    help = "Find and draw the [asy] diagrams of a project's problems and steps with Asymptote."

    def add_arguments(self, parser):
        parser.add_argument("--project", help="project name (default: every project)")
        parser.add_argument("--redraw-failed", action="store_true", help="try the failed diagrams again")

    def handle(self, *, project, redraw_failed, **options):
        projects = [get_project(project, create=False)] if project else Project.objects.order_by("name")
        for one in projects:
            start = time.monotonic()
            found = store.collect(one)
            if redraw_failed:
                Diagram.objects.filter(projects=one, status=Diagram.FAILED).update(status=Diagram.PENDING)
            drawn, failed = store.draw_pending(one)
            self.stdout.write(
                f"{one.name}: {found:,} diagrams; drew {drawn:,}, {failed:,} could not be drawn, "
                f"in {time.monotonic() - start:.1f}s"
            )
