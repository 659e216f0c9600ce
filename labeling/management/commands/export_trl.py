"""``manage.py export_trl --project NAME --output FILE [--neutral-negative] [--parquet] [--provenance] [--agree A,B] [filters]``.

Writes TRL stepwise-supervision lines (``prompt``, ``completions``, ``labels``); see
``labeling.exports.trl``; with ``--parquet`` the same rows as a Parquet file
(``labeling.exports.parquet``). Takes the same filters as ``export_prm800k``. ``--agree people,judge``
writes the labels those sources agree on instead, a row per solution (``labeling.quality.sources``).
"""
from .export_prm800k import Command as ExportCommand


class Command(ExportCommand):
    help = "Export a project's trajectories in TRL's stepwise-supervision layout (PRM training)."

    def add_arguments(self, parser):
        super().add_arguments(parser)
        parser.add_argument("--neutral-negative", action="store_true", help="label 0 ratings false (default true)")
        parser.add_argument("--parquet", action="store_true", help="write Parquet (datasets, TRL) instead of JSONL")
        parser.add_argument("--provenance", action="store_true",
                            help="add labeler and generation columns to every row")
        parser.add_argument("--agree", type=lambda text: tuple(s.strip() for s in text.split(",") if s.strip()),
                            default=(), help="rows of the labels these sources agree on, comma-separated: people, "
                                             "prm, judge, rollouts, import or source:<id> (two or more)")

    def format(self, options):
        if options["parquet"]:
            return "trl-parquet-neutral-negative" if options["neutral_negative"] else "trl-parquet"
        return "trl_neutral_negative" if options["neutral_negative"] else "trl"
