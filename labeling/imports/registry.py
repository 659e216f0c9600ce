"""The import format registry and the one entry point, ``run_import``."""
from pathlib import Path

from django.db import transaction

from labeling.analyze import analyze
from labeling.diagrams.tasks import queue_after_commit as queue_diagrams
from labeling.models import Annotator, Assignment, Generation, Problem, Rating, Solution, Step

from .common import ImportFailed, Progress, read_jsonl

IMPORTERS = {}


def register(name):
    """Register ``load(records, project, *, progress) -> ImportResult`` under ``name``."""

    def decorator(load):
        IMPORTERS[name] = load
        return load

    return decorator


def get_importer(name):
    _load_builtin_formats()
    try:
        return IMPORTERS[name]
    except KeyError:
        raise ImportFailed(f"unknown import format {name!r}; known: {', '.join(sorted(IMPORTERS))}") from None


def run_import(format_name, source, project, *, path=None, progress=None, show_progress=False):
    """Import ``source`` (a path or a binary file) into ``project``: all or nothing.

    Raises ImportFailed (naming file, line and field) and leaves the database untouched on
    bad input.
    """
    load = get_importer(format_name)
    if path is None and isinstance(source, (str, Path)):
        path = str(source)
    progress = progress or Progress(f"import {format_name}", enabled=show_progress)
    try:
        with transaction.atomic():
            result = load(read_jsonl(source, path=path), project, progress=progress)
            # A worker draws the [asy] diagrams once the rows are committed, never this process.
            queue_diagrams(project)
    except ImportFailed as exc:
        raise exc.at(path) from None
    # The planner's statistics for what was just written: without them a fresh project runs the
    # annotator loop at half speed until autovacuum comes by (labeling/analyze.py).
    analyze(Problem, Solution, Step, Annotator, Assignment, Rating, Generation)
    progress.done()
    return result


def _load_builtin_formats():
    # Each format module registers itself; importing them here keeps the registry complete
    # wherever run_import is called from (commands, API, tasks).
    from importlib import import_module

    for module in ("prm800k", "candidates", "problems"):
        import_module(f"{__package__}.{module}")
