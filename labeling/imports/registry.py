"""The import format registry and the one entry point, ``run_import``."""
from pathlib import Path

from django.db import transaction

from formats.errors import FormatError
from labeling.analyze import analyze
from labeling.diagrams.tasks import queue_after_commit as queue_diagrams
from labeling.models import Annotator, Assignment, Generation, Problem, Rating, Solution, Step, StepLabel

from .common import Progress, read_jsonl

IMPORTERS = {}


def register(name, *, reader=read_jsonl, options=(), required=None, origin=False):
    """Register ``load(records, project, *, progress) -> ImportResult`` under ``name``.

    ``reader(source, path=...)`` yields the ``(line, record)`` pairs (JSONL by default; a
    Parquet format numbers rows). A format that takes ``options`` (their names) is called with
    ``options=<dict>``; ``run_import`` refuses an option the format does not name, and one of
    ``required`` (``{option: why}``, a subset of ``options``) left out or empty. A format with
    ``origin`` is called with ``origin={"file", "format", "import_job_id"}``: the provenance its
    machine labels keep (``LabelSource.details``).
    """

    def decorator(load):
        load.reader, load.options, load.required = reader, tuple(options), dict(required or {})
        load.origin = origin
        IMPORTERS[name] = load
        return load

    return decorator


def get_importer(name):
    _load_builtin_formats()
    try:
        return IMPORTERS[name]
    except KeyError:
        raise FormatError(f"unknown import format {name!r}; known: {', '.join(sorted(IMPORTERS))}") from None


def run_import(format_name, source, project, *, path=None, progress=None, show_progress=False, options=None,
               job_id=None):
    """Import ``source`` (a path or a binary file) into ``project``: all or nothing.

    Raises FormatError (naming file, line and field) and leaves the database untouched on
    bad input. ``options`` are the format's own (a raw-output import's step splitting);
    ``job_id`` the ImportJob that runs it, which machine labels name as their origin.
    """
    load = get_importer(format_name)
    if path is None and isinstance(source, (str, Path)):
        path = str(source)
    extra = format_options(load, options)
    if load.origin:
        extra["origin"] = {"file": Path(path).name if path else None, "format": format_name,
                           "import_job_id": job_id}
    progress = progress or Progress(f"import {format_name}", enabled=show_progress)
    records = load.reader(source, path=path)
    if hasattr(progress, "watch"):  # a job's progress counts the lines read and may stop the import
        records = progress.watch(records)
    try:
        with transaction.atomic():
            result = load(records, project, progress=progress, **extra)
            # A worker draws the [asy] diagrams once the rows are committed, never this process.
            queue_diagrams(project)
    except FormatError as exc:
        raise exc.at(path) from None
    # The planner's statistics for what was just written: without them a fresh project runs the
    # annotator loop at half speed until autovacuum comes by (labeling/analyze.py).
    analyze(Problem, Solution, Step, Annotator, Assignment, Rating, Generation, StepLabel)
    progress.done()
    return result


def format_names():
    """The registered formats' names, sorted."""
    _load_builtin_formats()
    return sorted(IMPORTERS)


def describe_formats():
    """``[{"name", "options", "required", "preview"}]``: what the upload form offers for each format
    (``required``: ``{option: why}``, the options the form must have filled in)."""
    return [{"name": name, "options": list(load.options), "required": dict(load.required),
             "preview": hasattr(load, "parse") or hasattr(load, "preview")}
            for name, load in ((name, IMPORTERS[name]) for name in format_names())]


def check_options(format_name, options):
    """Refuse, before any file is read, options the format would refuse (FormatError naming the field)."""
    load = get_importer(format_name)
    format_options(load, options)
    if hasattr(load, "check"):
        load.check(options or {})


def format_options(load, options):
    """``{"options": ...}`` for a format that takes options, ``{}`` otherwise; an unknown one, or a
    required one missing, is refused naming it (every entry point comes through here)."""
    for key in options or {}:
        if key not in load.options:
            known = ", ".join(load.options) or "none"
            raise FormatError(f"is not an option of this format (its options: {known})", field=key)
    for key, why in load.required.items():
        if (options or {}).get(key) in (None, ""):
            raise FormatError(f"is required: {why}", field=key)
    return {"options": dict(options or {})} if load.options else {}


def _load_builtin_formats():
    # Each format module registers itself; importing them here keeps the registry complete
    # wherever run_import is called from (commands, API, tasks).
    from importlib import import_module

    for module in ("prm800k", "candidates", "problems", "raw_outputs", "step_labels"):
        import_module(f"{__package__}.{module}")
