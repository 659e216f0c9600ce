"""``manage.py import_prm800k FILE [FILE ...] --project NAME [--create-project]``.

Each file (``.jsonl`` or ``.jsonl.gz``) is imported whole or not at all; a file already
imported adds nothing. Bad input stops the command with the file, line and field named.
"""
from labeling.management.importing import ImportCommand


class Command(ImportCommand):
    help = "Import PRM800K JSONL files (optionally gzip) into a project."
    format_name = "prm800k"
    files_help = "PRM800K .jsonl or .jsonl.gz files"

    def summary(self, d):
        return (
            f"added {d['problems']:,} problems, {d['solutions']:,} solutions, {d['steps']:,} steps, "
            f"{d['ratings']:,} ratings, {d['annotators']:,} labelers"
        )
