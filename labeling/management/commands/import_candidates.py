"""``manage.py import_candidates FILE [FILE ...] --project NAME [--format candidates|gsm8k-examples]
[--create-project]``.

Each file (``.jsonl`` or ``.jsonl.gz``) is imported whole or not at all; re-importing adds
nothing. Formats are described in docs/formats.md.
"""
from labeling.management.importing import ImportCommand


class Command(ImportCommand):
    help = "Import candidate solutions (JSONL, optionally gzip) into a project."
    format_name = "candidates"

    def add_arguments(self, parser):
        super().add_arguments(parser)
        parser.add_argument(
            "--format", default="candidates", choices=["candidates", "gsm8k-examples"],
            help="candidates (one solution per line, the default) or gsm8k-examples (GSM8K example_model_solutions.jsonl)",
        )

    def summary(self, d):
        return (
            f"added {d['problems']:,} problems, {d['solutions']:,} solutions, {d['steps']:,} steps; "
            f"graded {d['graded']:,} with math-verify"
        )
