"""``manage.py export_trl --project NAME --output FILE [--neutral-negative] [filters]``.

Writes TRL stepwise-supervision lines (``prompt``, ``completions``, ``labels``); see
``labeling.exports.trl``. Takes the same filters as ``export_prm800k``.
"""
from .export_prm800k import Command as ExportCommand


class Command(ExportCommand):
    help = "Export a project's trajectories in TRL's stepwise-supervision layout (PRM training)."

    def add_arguments(self, parser):
        super().add_arguments(parser)
        parser.add_argument("--neutral-negative", action="store_true", help="label 0 ratings false (default true)")

    def format(self, options):
        return "trl_neutral_negative" if options["neutral_negative"] else "trl"
