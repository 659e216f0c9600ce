"""``manage.py judge_labels --project NAME (--generation N | --solutions ID,ID...) [--queue]``.

Pre-labels steps with the project's LLM judge (its judge settings, ``scoring.judge_settings``), as
``POST /api/projects/{id}/judge-runs/`` does: one ``JudgeRun``, one open per project. By default
the run is judged in this process, which then needs the key's environment variable, and prints
its result; ``--queue`` queues it for a ``default`` worker instead.
"""
import json

from django.core.management.base import BaseCommand, CommandError

from labeling.errors import DomainError
from labeling.models import Project
from scoring import judge_runs
from scoring.runs import JobConflict


class Command(BaseCommand):
    help = "Pre-label a generation's or some solutions' steps with the project's LLM judge."

    def add_arguments(self, parser):
        parser.add_argument("--project", required=True, help="project name")
        asked = parser.add_mutually_exclusive_group(required=True)
        asked.add_argument("--generation", type=int, help="the generation's number")
        asked.add_argument("--solutions", help="comma-separated solution ids")
        parser.add_argument("--queue", action="store_true", help="queue the run for a worker instead of judging here")

    def handle(self, *args, project, generation, solutions, queue, **options):
        try:
            project = Project.objects.get(name=project)
        except Project.DoesNotExist:
            raise CommandError(f"no project named {project!r}") from None
        try:
            ids = [int(part) for part in solutions.split(",") if part.strip()] if solutions else None
        except ValueError:
            raise CommandError("--solutions takes comma-separated ids, e.g. 12,13,40") from None
        try:
            run = judge_runs.start_judge_run(project, generation=generation, solution_ids=ids)
        except (DomainError, JobConflict) as exc:
            raise CommandError(str(exc)) from None
        if queue:
            from scoring.judge_tasks import run_judge

            sent = run_judge.delay(run.pk)
            run.__class__.objects.filter(pk=run.pk).update(task_id=sent.id)
            self.stdout.write(f"Judge run {run.pk} queued (task {sent.id}).")
            return
        from scoring import judge_job

        run = judge_job.run(run.pk)
        if run.state != run.DONE:
            raise CommandError(f"Judge run {run.pk} {run.state}: {run.error}")
        self.stdout.write(f"Judge run {run.pk} done: {json.dumps(run.result)}")
