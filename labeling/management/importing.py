"""What the import commands (import_prm800k, import_problems, import_candidates) share.

``FILE [FILE ...] --project NAME [--create-project] [--quiet]``: each file is imported whole or
not at all, with one summary line per file; bad input stops the command with the file, line
and field named. A command names its format and says in words what a file added.
"""
import time

from django.core.management.base import BaseCommand, CommandError

from formats.errors import FormatError
from labeling.imports import Progress, run_import
from labeling.models import Project


class ImportCommand(BaseCommand):
    format_name = None  # the import format (labeling/imports/registry.py)
    files_help = ".jsonl or .jsonl.gz files"

    def add_arguments(self, parser):
        parser.add_argument("files", nargs="+", help=self.files_help)
        parser.add_argument("--project", required=True, help="project name")
        parser.add_argument("--create-project", action="store_true", help="create the project if missing")
        parser.add_argument("--quiet", action="store_true", help="no progress lines")

    def handle(self, *args, files, project, create_project, quiet, **options):
        project = get_project(project, create_project)
        format_name = options.get("format", self.format_name)  # import_candidates takes --format
        for path in files:
            start = time.monotonic()
            progress = Progress(f"import {path}", stream=self.stderr._out, enabled=not quiet)
            try:
                result = run_import(format_name, path, project, progress=progress, options=self.import_options(options))
            except FormatError as exc:
                raise CommandError(f"import failed, nothing from {path} was imported: {exc}") from None
            except OSError as exc:
                raise CommandError(f"cannot read {path}: {exc}") from None
            self.stdout.write(
                f"{path}: {result.records:,} records ({result.counted()}) "
                f"in {time.monotonic() - start:.1f}s; {self.summary(result.details)}"
            )

    def import_options(self, options):
        """The format's own options (``run_import(options=)``) from the command line; none by default."""
        return None

    def summary(self, details):
        """What one file added, in words, from its ``ImportResult.details``."""
        raise NotImplementedError


def get_project(name, create):
    if create:
        return Project.objects.get_or_create(name=name)[0]
    try:
        return Project.objects.get(name=name)
    except Project.DoesNotExist:
        raise CommandError(f"no project named {name!r} (add --create-project to create it)") from None
