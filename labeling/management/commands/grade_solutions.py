"""``manage.py grade_solutions --project NAME [--regrade]``: grade final answers with math-verify.

By default only solutions not graded yet (``is_correct`` null) are graded, so grades that came
with an import stay; ``--regrade`` grades every solution of the project again.
"""
import time

from django.core.management.base import BaseCommand

from labeling.grading.answers import grade_solutions
from labeling.management.importing import get_project
from labeling.models import Solution


class Command(BaseCommand):
    help = "Grade solutions' final answers against their problems' ground truth."

    def add_arguments(self, parser):
        parser.add_argument("--project", required=True, help="project name")
        parser.add_argument("--regrade", action="store_true", help="grade solutions already graded too")

    def handle(self, *, project, regrade, **options):
        project = get_project(project, create=False)
        solutions = Solution.objects.filter(project=project)
        if not regrade:
            solutions = solutions.filter(is_correct__isnull=True)
        start = time.monotonic()
        counts = grade_solutions(solutions)
        self.stdout.write(
            f"{project.name}: graded {counts['graded']:,} solutions in {time.monotonic() - start:.1f}s: "
            f"{counts['correct']:,} correct, {counts['wrong']:,} wrong, "
            f"{counts['ungradable']:,} without an answer or ground truth; {counts['changed']:,} changed"
        )
