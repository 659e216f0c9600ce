"""``manage.py import_candidates FILE [FILE ...] --project NAME [--format FORMAT] [--split paragraphs|lines|regex]
[--pattern REGEX] [--generator NAME] [--requests BATCH_INPUT.jsonl] [--tag TAG] [--label-source NAME] [--create-project]``.

Each file is imported whole or not at all; re-importing adds nothing. Formats are described in
docs/formats.md: ``candidates`` and ``gsm8k-examples`` hold steps already; the raw-output
formats (``completions``, ``openai-chat``, ``openai-batch``, ``vllm``, ``hf-parquet``) hold
whole completions, split into steps by ``--split``; the step-label formats (``math-shepherd``,
``mc-rollouts``) hold steps with Monte Carlo labels, stored as machine labels of one source.
"""
from labeling.management.importing import ImportCommand

STEP_FORMATS = ["candidates", "gsm8k-examples"]
RAW_FORMATS = ["completions", "openai-chat", "openai-batch", "vllm", "hf-parquet"]
LABEL_FORMATS = ["math-shepherd", "mc-rollouts"]


class Command(ImportCommand):
    help = "Import candidate solutions (JSONL, optionally gzip; raw model outputs, Parquet) into a project."
    format_name = "candidates"
    files_help = "input files (.jsonl, .jsonl.gz; .json for vllm; .parquet for hf-parquet)"

    def add_arguments(self, parser):
        super().add_arguments(parser)
        parser.add_argument(
            "--format", default="candidates", choices=STEP_FORMATS + RAW_FORMATS + LABEL_FORMATS,
            help="candidates (one solution per line, the default), gsm8k-examples, a raw-output format, "
                 "or a step-label format",
        )
        parser.add_argument("--split", choices=["paragraphs", "lines", "regex"],
                            help="raw outputs: how a completion becomes steps (default paragraphs)")
        parser.add_argument("--pattern", help="raw outputs with --split regex: where to split")
        parser.add_argument("--generator", help="raw outputs: the model's name (over what the file says)")
        parser.add_argument("--requests", help="openai-batch: the Batch input file (its messages hold the problems)")
        parser.add_argument("--tag", help="math-shepherd: the step tag (default ки)")
        parser.add_argument("--label-source", help="step-label formats: the label source's name "
                                                   "(default '<format>: <file name>')")

    def import_options(self, options):
        given = {key: options[key] for key in ("split", "pattern", "generator", "requests", "tag", "label_source")
                 if options.get(key)}
        return given or None  # a step format given one refuses it (run_import names the option)

    def summary(self, d):
        failed = f"; {d['failed_requests']:,} failed requests left out" if d.get("failed_requests") else ""
        labelled = f"; {d['labels']:,} step labels (label source {d['label_source']})" if "labels" in d else ""
        return (
            f"added {d['problems']:,} problems, {d['solutions']:,} solutions, {d['steps']:,} steps; "
            f"graded {d['graded']:,} with math-verify{failed}{labelled}"
        )
