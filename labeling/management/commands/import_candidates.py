"""``manage.py import_candidates FILE [FILE ...] --project NAME [--format candidates|gsm8k-examples]
[--create-project]``.

Each file (``.jsonl`` or ``.jsonl.gz``) is imported whole or not at all; re-importing adds
nothing. Formats are described in docs/formats.md.
"""
import time

from django.core.management.base import BaseCommand, CommandError

from labeling.imports import ImportFailed, Progress, run_import
from labeling.models import Project


class Command(BaseCommand):
    help = "Import candidate solutions (JSONL, optionally gzip) into a project."

    def add_arguments(self, parser):
        parser.add_argument("files", nargs="+", help=".jsonl or .jsonl.gz files")
        parser.add_argument("--project", required=True, help="project name")
        parser.add_argument(
            "--format", default="candidates", choices=["candidates", "gsm8k-examples"],
            help="candidates (one solution per line, the default) or gsm8k-examples (GSM8K example_model_solutions.jsonl)",
        )
        parser.add_argument("--create-project", action="store_true", help="create the project if missing")
        parser.add_argument("--quiet", action="store_true", help="no progress lines")

    def handle(self, *args, files, project, format, create_project, quiet, **options):
        def summary(result):
            d = result.details
            return (
                f"added {d['problems']:,} problems, {d['solutions']:,} solutions, {d['steps']:,} steps; "
                f"graded {d['graded']:,} with math-verify"
            )

        import_files(self, format, files, project, create_project, quiet, summary)


def import_files(command, format_name, files, project_name, create_project, quiet, summary):
    """Import each file whole or not at all, printing one summary line per file."""
    project = get_project(project_name, create_project)
    for path in files:
        start = time.monotonic()
        progress = Progress(f"import {path}", stream=command.stderr._out, enabled=not quiet)
        try:
            result = run_import(format_name, path, project, progress=progress)
        except ImportFailed as exc:
            raise CommandError(f"import failed, nothing from {path} was imported: {exc}") from None
        except OSError as exc:
            raise CommandError(f"cannot read {path}: {exc}") from None
        command.stdout.write(
            f"{path}: {result.records:,} records ({result.created:,} new, {result.skipped:,} already there) "
            f"in {time.monotonic() - start:.1f}s; {summary(result)}"
        )


def get_project(name, create):
    if create:
        return Project.objects.get_or_create(name=name)[0]
    try:
        return Project.objects.get(name=name)
    except Project.DoesNotExist:
        raise CommandError(f"no project named {name!r} (add --create-project to create it)") from None
