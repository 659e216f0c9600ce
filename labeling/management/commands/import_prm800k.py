"""``manage.py import_prm800k FILE [FILE ...] --project NAME [--create-project]``.

Each file (``.jsonl`` or ``.jsonl.gz``) is imported whole or not at all; a file already
imported adds nothing. Bad input stops the command with the file, line and field named.
"""
from django.core.management.base import BaseCommand

from .import_candidates import import_files


class Command(BaseCommand):
    help = "Import PRM800K JSONL files (optionally gzip) into a project."

    def add_arguments(self, parser):
        parser.add_argument("files", nargs="+", help="PRM800K .jsonl or .jsonl.gz files")
        parser.add_argument("--project", required=True, help="project name")
        parser.add_argument("--create-project", action="store_true", help="create the project if missing")
        parser.add_argument("--quiet", action="store_true", help="no progress lines")

    def handle(self, *args, files, project, create_project, quiet, **options):
        def summary(result):
            d = result.details
            return (
                f"added {d['problems']:,} problems, {d['solutions']:,} solutions, {d['steps']:,} steps, "
                f"{d['ratings']:,} ratings, {d['annotators']:,} labelers"
            )

        import_files(self, "prm800k", files, project, create_project, quiet, summary)
