"""``manage.py register_prm --project NAME DIRECTORY [--layout auto] [--step-separator S] [--champion] [--here]``.

Registers a PRM checkpoint from a directory the workers can read, as the research page and
``POST /api/projects/{id}/checkpoints/`` do (``scoring.registry``): the files are checked here
(a missing file or tensor is an error naming it, exit 1), the row is stored ``validating`` and
the validation is queued for a GPU worker. ``--here`` validates in this process instead (it loads
the model: torch and the weights must be here), and prints what the worker would store.
"""
from django.core.management.base import BaseCommand, CommandError

from labeling.errors import DomainError
from labeling.models import Project
from scoring import registry


class Command(BaseCommand):
    help = "Register a PRM checkpoint (any supported layout) for a project; a worker validates it."

    def add_arguments(self, parser):
        parser.add_argument("directory", help="absolute path of the PRM's directory, as the workers see it")
        parser.add_argument("--project", required=True, help="project name")
        parser.add_argument("--layout", default=registry.AUTO, choices=[registry.AUTO, *registry.LAYOUTS],
                            help="how the directory is laid out (default: told from its files)")
        parser.add_argument("--step-separator", default=None,
                            help='token-classification only: the step separator (default "\\n", as TRL\'s PRMTrainer)')
        parser.add_argument("--champion", action="store_true", help="make it the champion once validated")
        parser.add_argument("--here", action="store_true",
                            help="validate in this process instead of queueing it for a worker")

    def handle(self, *args, directory, project, layout, step_separator, champion, here, **options):
        try:
            project = Project.objects.get(name=project)
        except Project.DoesNotExist:
            raise CommandError(f"no project named {project!r}") from None
        separator = step_separator.replace("\\n", "\n").replace("\\t", "\t") if step_separator else None  # typed \n
        try:
            checkpoint = registry.register(project, directory, layout=layout, step_separator=separator,
                                           champion=champion, enqueue=not here)
        except DomainError as exc:
            raise CommandError(exc.message) from None
        if not here:
            self.stdout.write(f"Checkpoint {checkpoint.pk}: {checkpoint.layout} layout, validation queued "
                              f"(task {checkpoint.task_id}).")
            return
        from scoring.registration import validate_registration

        checkpoint = validate_registration(checkpoint.pk)
        if checkpoint.status == checkpoint.INVALID:
            raise CommandError(f"Checkpoint {checkpoint.pk}: {checkpoint.reason}")
        champion_note = " It is the champion." if checkpoint.is_champion else ""
        self.stdout.write(f"Checkpoint {checkpoint.pk}: {checkpoint.reason}{champion_note}")
