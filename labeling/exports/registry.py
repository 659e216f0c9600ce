"""The export format registry and the two ways out: a file, or a byte stream."""
import dataclasses
import datetime
import gzip
import os
import tempfile
from pathlib import Path

EXPORTERS = {}


@dataclasses.dataclass(frozen=True)
class ExportFilters:
    """Which submitted assignments an export covers."""

    project_id: int
    generations: tuple | None = None  # generation numbers to keep (None keeps all)
    since: datetime.datetime | None = None  # submitted at or after
    until: datetime.datetime | None = None  # submitted before
    include_quality_control: bool = True
    exclude_annotator_ids: tuple = ()
    # Not a filter but an option of the rows, carried here so that every way out (stream, file,
    # snapshot, command) passes it: the TRL rows also carry ``labeler`` and ``generation``.
    provenance: bool = False
    # The TRL formats' rows from the labels these sources agree on, one row per solution, instead
    # of people's passes (``labeling.quality.sources`` selectors: "people", "judge", "source:7").
    agree: tuple = ()


def register(name, *, content_type="application/x-ndjson", extension=".jsonl", binary=False, provenance=False,
             agree=False):
    """A line exporter yields JSON lines; a ``binary`` one yields ``(bytes, records)`` pieces (Parquet).

    ``provenance``: the format can add the labeler and generation columns (``ExportFilters.provenance``);
    ``agree``: it can be made of the labels chosen sources agree on (``ExportFilters.agree``).
    """

    def decorator(export):
        export.content_type, export.extension, export.binary = content_type, extension, binary
        export.provenance, export.agree = provenance, agree
        EXPORTERS[name] = export
        return export

    return decorator


def get_exporter(name):
    from importlib import import_module

    for module in ("prm800k", "trl", "consensus", "parquet", "step_labels"):  # each registers its formats when imported
        import_module(f"{__package__}.{module}")
    try:
        return EXPORTERS[name]
    except KeyError:
        raise ValueError(f"unknown export format {name!r}; known: {', '.join(sorted(EXPORTERS))}") from None


def stream_export(name, filters, *, compress=False, chunk_size=1 << 16):
    """Yield the export as bytes in chunks of about ``chunk_size``."""
    buffer, size = [], 0
    sink = Sink()
    compressor = gzip.GzipFile(fileobj=sink, mode="wb") if compress else None
    for data, _ in _pieces(name, filters):
        buffer.append(data)
        size += len(data)
        if size >= chunk_size:
            yield _flush(buffer, compressor, sink)
            buffer, size = [], 0
    tail = _flush(buffer, compressor, sink) if buffer else b""
    if compressor is not None:
        compressor.close()
        tail += sink.take()
    if tail:
        yield tail


def write_export(name, filters, path, *, compress=None, progress=None):
    """Write the export to ``path`` atomically (temporary file, then rename); return record count.

    ``compress`` defaults to whether the path ends in ``.gz``.
    """
    path = Path(path)
    if compress is None:
        compress = path.suffix == ".gz"
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    count = 0
    try:
        with os.fdopen(fd, "wb") as raw:
            out = gzip.GzipFile(fileobj=raw, mode="wb", compresslevel=6) if compress else raw
            for data, records in _pieces(name, filters):
                out.write(data)
                count += records
                if progress is not None and records:
                    progress.advance(records)
            if compress:
                out.close()
            raw.flush()
            os.fsync(raw.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    if progress is not None:
        progress.done()
    return count


def _pieces(name, filters):
    """``(bytes, records)`` pieces of the export, whichever kind its exporter is."""
    export = get_exporter(name)
    if export.binary:
        return export(filters)
    return (((line + "\n").encode(), 1) for line in export(filters))


class Sink:
    """A write-only buffer gzip (or Arrow's Parquet writer) writes into, drained after each chunk."""

    closed = False

    def __init__(self):
        self.parts, self.position = [], 0

    def write(self, data):
        self.parts.append(bytes(data))
        self.position += len(data)
        return len(data)

    def tell(self):
        return self.position

    def writable(self):
        return True

    def flush(self):
        pass

    def close(self):
        self.closed = True

    def take(self):
        data, self.parts = b"".join(self.parts), []
        return data


def _flush(buffer, compressor, sink):
    data = b"".join(buffer)
    if compressor is None:
        return data
    compressor.write(data)
    return sink.take()
