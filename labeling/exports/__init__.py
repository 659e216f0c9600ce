"""Exporters: a small registry of output formats (as doccano keeps one).

An exporter is a function ``export(filters) -> iterator of str`` that yields one JSON line at
a time (without the newline), reading the database in bounded batches. ``write_export``
writes a file atomically (optionally gzip); ``stream_export`` yields bytes for a streaming
HTTP response. Nothing builds a whole file in memory.
"""
from .registry import EXPORTERS, ExportFilters, get_exporter, register, stream_export, write_export

__all__ = ["EXPORTERS", "ExportFilters", "get_exporter", "register", "stream_export", "write_export"]
