"""``manage.py export_prm800k --project NAME --output FILE [--gzip] [filters]``.

Writes the project's submitted assignments as PRM800K JSONL, atomically (a reader never sees a
half-written file). Filters: ``--generation N`` (repeatable), ``--since``/``--until`` (ISO 8601
on the submission time; a time without zone is UTC), ``--no-quality-control``,
``--exclude-paused`` (leave out annotators paused or failed in the project).
"""
import argparse
import datetime
import time

from django.core.management.base import BaseCommand, CommandError

from labeling.errors import DomainError
from labeling.exports import ExportFilters, write_export
from labeling.imports import Progress
from labeling.models import Project
from labeling.quality import sources as label_sources
from labeling.quality.screening import paused_annotator_ids


class Command(BaseCommand):
    help = "Export a project's submitted assignments as PRM800K JSONL."
    format_name = "prm800k"

    def add_arguments(self, parser):
        parser.add_argument("--project", required=True, help="project name")
        parser.add_argument("--output", required=True, help="file to write (.gz is compressed)")
        parser.add_argument("--gzip", action="store_true", help="gzip the output whatever its name")
        parser.add_argument("--generation", type=int, action="append", dest="generations",
                            help="keep only this generation (repeatable)")
        parser.add_argument("--since", type=_when, help="submitted at or after (ISO 8601)")
        parser.add_argument("--until", type=_when, help="submitted before (ISO 8601)")
        parser.add_argument("--no-quality-control", action="store_true", help="leave out gold items")
        parser.add_argument("--exclude-paused", action="store_true",
                            help="leave out the labels of annotators paused or failed in the project")
        parser.add_argument("--quiet", action="store_true", help="no progress lines")

    def format(self, options):
        return self.format_name

    def handle(self, *args, project, output, generations, since, until, quiet, **options):
        try:
            project = Project.objects.get(name=project)
        except Project.DoesNotExist:
            raise CommandError(f"no project named {project!r}") from None
        filters = ExportFilters(
            project_id=project.id,
            generations=tuple(generations) if generations else None,
            since=since,
            until=until,
            include_quality_control=not options["no_quality_control"],
            exclude_annotator_ids=paused_annotator_ids(project) if options["exclude_paused"] else (),
            # export_trl's --provenance (export_prm800k has no such option: its records carry both).
            provenance=options.get("provenance", False),
            agree=options.get("agree", ()),  # export_trl's --agree
        )
        if filters.agree:
            if len(filters.agree) < 2:
                raise CommandError("--agree: name two or more sources, separated by commas")
            try:
                label_sources.resolve_sources(project, filters.agree, field="--agree")
            except DomainError as exc:
                raise CommandError(f"--agree: {exc}") from None
        name = self.format(options)
        start = time.monotonic()
        progress = Progress(f"export {name}", stream=self.stderr._out, enabled=not quiet)
        compress = True if options["gzip"] else None
        count = write_export(name, filters, output, compress=compress, progress=progress)
        self.stdout.write(f"{output}: {count:,} records in {time.monotonic() - start:.1f}s")


def _when(text):
    try:
        value = datetime.datetime.fromisoformat(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an ISO 8601 date/time: {text!r}") from None
    if value.tzinfo is None:
        value = value.replace(tzinfo=datetime.timezone.utc)
    return value
