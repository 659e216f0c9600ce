"""``manage.py import_prm800k FILE [FILE ...] --project NAME [--create-project]``.

Each file (``.jsonl`` or ``.jsonl.gz``) is imported whole or not at all; a file already
imported adds nothing. Bad input stops the command with the file, line and field named.
"""
import time

from django.core.management.base import BaseCommand, CommandError

from labeling.imports import ImportFailed, Progress, run_import
from labeling.models import Project


class Command(BaseCommand):
    help = "Import PRM800K JSONL files (optionally gzip) into a project."

    def add_arguments(self, parser):
        parser.add_argument("files", nargs="+", help="PRM800K .jsonl or .jsonl.gz files")
        parser.add_argument("--project", required=True, help="project name")
        parser.add_argument("--create-project", action="store_true", help="create the project if missing")
        parser.add_argument("--quiet", action="store_true", help="no progress lines")

    def handle(self, *args, files, project, create_project, quiet, **options):
        project = _project(project, create_project)
        for path in files:
            start = time.monotonic()
            progress = Progress(f"import {path}", stream=self.stderr._out, enabled=not quiet)
            try:
                result = run_import("prm800k", path, project, progress=progress)
            except ImportFailed as exc:
                raise CommandError(f"import failed, nothing from {path} was imported: {exc}") from None
            except OSError as exc:
                raise CommandError(f"cannot read {path}: {exc}") from None
            elapsed = time.monotonic() - start
            d = result.details
            self.stdout.write(
                f"{path}: {result.records:,} records ({result.created:,} new, {result.skipped:,} already there) "
                f"in {elapsed:.1f}s; added {d['problems']:,} problems, {d['solutions']:,} solutions, "
                f"{d['steps']:,} steps, {d['ratings']:,} ratings, {d['annotators']:,} labelers"
            )


def _project(name, create):
    if create:
        return Project.objects.get_or_create(name=name)[0]
    try:
        return Project.objects.get(name=name)
    except Project.DoesNotExist:
        raise CommandError(f"no project named {name!r} (add --create-project to create it)") from None
