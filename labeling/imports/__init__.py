"""Importers: a small registry of input formats behind one entry point.

Each format registers a function ``load(records, project, *, progress) -> ImportResult`` that
receives an iterator of ``(line_number, record)`` pairs. ``run_import`` opens the file
(``.jsonl`` or ``.jsonl.gz``, or an open binary file), runs the format inside one database
transaction (a file is imported whole or not at all) and reports progress.

Formats live in their own modules and register themselves here on import. Bad input raises
``formats.errors.FormatError`` naming the file, the line and the field.
"""
from .common import ImportResult, Progress, read_jsonl
from .registry import IMPORTERS, get_importer, register, run_import

__all__ = [
    "IMPORTERS",
    "ImportResult",
    "Progress",
    "get_importer",
    "read_jsonl",
    "register",
    "run_import",
]
