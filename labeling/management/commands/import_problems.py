"""``manage.py import_problems FILE [FILE ...] --project NAME [--create-project]``.

MATH-style (``{problem, solution, answer, ...}``) and GSM8K (``{question, answer}``) lines,
detected line by line; see docs/formats.md. Each file is imported whole or not at all;
re-importing adds nothing.
"""
from labeling.management.importing import ImportCommand


class Command(ImportCommand):
    help = "Import MATH-style or GSM8K problems (JSONL, optionally gzip) into a project."
    format_name = "problems"

    def summary(self, d):
        return f"added {d['problems']:,} problems; filled in subject/level/id on {d['filled_in']:,}"
