"""``manage.py import_problems FILE [FILE ...] --project NAME [--create-project]``.

MATH-style (``{problem, solution, answer, ...}``) and GSM8K (``{question, answer}``) lines,
detected line by line; see docs/formats.md. Each file is imported whole or not at all;
re-importing adds nothing.
"""
from django.core.management.base import BaseCommand

from .import_candidates import import_files


class Command(BaseCommand):
    help = "Import MATH-style or GSM8K problems (JSONL, optionally gzip) into a project."

    def add_arguments(self, parser):
        parser.add_argument("files", nargs="+", help=".jsonl or .jsonl.gz files")
        parser.add_argument("--project", required=True, help="project name")
        parser.add_argument("--create-project", action="store_true", help="create the project if missing")
        parser.add_argument("--quiet", action="store_true", help="no progress lines")

    def handle(self, *args, files, project, create_project, quiet, **options):
        def summary(result):
            d = result.details
            return f"added {d['problems']:,} problems; filled in subject/level/id on {d['filled_in']:,}"

        import_files(self, "problems", files, project, create_project, quiet, summary)
