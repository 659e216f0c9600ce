"""What every importer shares: reading JSONL, progress.

Bad input raises ``formats.errors.FormatError`` naming the file, the line and the field.
"""
import dataclasses
import gzip
import io
import itertools
import json
import re
import sys
import time
import zlib
from pathlib import Path

from django.conf import settings
from django.core.files import File

from formats.errors import FormatError
from labeling import nesting
from labeling.progress import pace


@dataclasses.dataclass
class ImportResult:
    records: int = 0  # lines read
    created: int = 0  # units added
    skipped: int = 0  # units already present (a re-import, or a repeat within the file)
    unit: str = "records"  # what created and skipped count: "solutions", "problems" or "records"
    details: dict = dataclasses.field(default_factory=dict)

    def as_dict(self):
        return dataclasses.asdict(self)

    def counted(self):
        """``"40 solutions new, 0 already there"`` (the unit left out when it is the records)."""
        unit = "" if self.unit == "records" else f" {self.unit}"
        return f"{self.created:,}{unit} new, {self.skipped:,} already there"


class Progress:
    """Counts and rate on a stream (stderr by default), at most every ``every`` seconds."""

    def __init__(self, label, stream=None, every=1.0, enabled=True):
        self.label, self.stream, self.every, self.enabled = label, stream or sys.stderr, every, enabled
        self.count = 0
        self.start = self.last = time.monotonic()

    def advance(self, n=1):
        self.count += n
        now = time.monotonic()
        if self.enabled and now - self.last >= self.every:
            self.last = now
            self._print(now)

    def done(self):
        if self.enabled:
            self._print(time.monotonic(), final=True)

    def _print(self, now, final=False):
        elapsed = now - self.start
        rate = pace(self.count, None, elapsed).rate or 0
        end = "\n" if final else "\r"
        self.stream.write(f"{self.label}: {self.count:,} records, {rate:,.0f}/s, {elapsed:.1f}s{end}")
        self.stream.flush()


def chunks(items, size):
    """Lists of up to ``size`` consecutive items: importers check and write a chunk at a time."""
    chunk = []
    for item in items:
        chunk.append(item)
        if len(chunk) >= size:
            yield chunk
            chunk = []
    if chunk:
        yield chunk


def open_binary(source):
    """An open binary stream for a path or a file object, gunzipped when it is gzip.

    An upload (Django's ``File``) is read through the file it wraps: iterating a ``File``
    joins a long line's 64 KB chunks one by one, quadratic in the line's length (bench/long_line.py,
    docs/performance.md#imports); ``readline`` on the file itself is linear.
    """
    if isinstance(source, File):
        source = source.file
    raw = open(source, "rb") if isinstance(source, (str, Path)) else source
    if not hasattr(raw, "peek"):  # the gzip check and the JSON-array reader look ahead
        raw = io.BufferedReader(raw)
    if raw.peek(2)[:2] == b"\x1f\x8b":
        return gzip.GzipFile(fileobj=raw, mode="rb")
    return raw


def read_jsonl(source, *, path=None):
    """Yield ``(line_number, object)`` for each non-blank line; memory stays one line.

    Whatever makes a line unusable raises FormatError naming the line (``run_import`` adds
    the file): gzip data that is corrupt or ends early, a line longer than
    ``STEPMARK_IMPORT_MAX_LINE_BYTES`` (read no further than the limit), bytes that are not
    UTF-8, text that is not JSON or not an object, an integer of more digits than Python
    converts (4,300), nesting deeper than ``STEPMARK_MAX_JSON_DEPTH``, and a
    string holding half of a surrogate pair (``"\\ud800"``), which no database can store.
    """
    limit = settings.STEPMARK_IMPORT_MAX_LINE_BYTES
    stream = open_binary(source)
    try:
        for number in itertools.count(1):
            try:
                raw_line = stream.readline(limit + 1)
            except (EOFError, OSError, zlib.error) as exc:
                raise FormatError(f"cannot be read: {_unreadable(exc)}", path=path, line=number) from None
            if not raw_line:
                return
            if len(raw_line) > limit and not raw_line.endswith(b"\n"):
                raise FormatError(f"the line is longer than {limit:,} bytes (STEPMARK_IMPORT_MAX_LINE_BYTES)",
                                   path=path, line=number)
            if not raw_line.strip():
                continue
            record = _parse(raw_line, path, number)
            # Only an escape makes a surrogate (raw bytes of one are not UTF-8): most lines skip the walk.
            check_record(record, path, number, surrogates=_SURROGATE_ESCAPE.search(raw_line) is not None)
            yield number, record
    finally:
        if isinstance(source, (str, Path)):
            stream.close()


def check_record(record, path, number, *, surrogates=True):
    """Refuse a parsed record that is not an object, nests too deep or (``surrogates``) holds a lone surrogate."""
    if not isinstance(record, dict):
        raise FormatError("expected a JSON object", path=path, line=number)
    depth = nesting.max_depth()
    if nesting.deeper_than(record, depth):
        raise FormatError(f"nested deeper than {depth} levels", path=path, line=number)
    where = _lone_surrogate(record) if surrogates else None
    if where is not None:
        raise FormatError("holds half of a surrogate pair (\\ud800-\\udfff alone), which is not text",
                           path=path, line=number, field=where)


def _parse(raw_line, path, number):
    try:
        return json.loads(raw_line)
    except UnicodeDecodeError as exc:
        raise FormatError(f"not UTF-8 text ({exc.reason} at byte {exc.start})", path=path, line=number) from None
    except json.JSONDecodeError as exc:
        raise FormatError(f"not valid JSON ({exc})", path=path, line=number) from None
    except RecursionError:
        raise FormatError("nested too deeply to read", path=path, line=number) from None
    except ValueError as exc:  # Python's limit on the digits of an integer it converts
        reason = "an integer has more than 4,300 digits" if "digits" in str(exc) else str(exc)
        raise FormatError(f"not valid JSON ({reason})", path=path, line=number) from None


def _unreadable(exc):
    if isinstance(exc, EOFError):
        return "the gzip data ends early (a truncated file?)"
    if isinstance(exc, (zlib.error, gzip.BadGzipFile)):
        return f"the gzip data is corrupt ({exc})"
    return str(exc)


# An escape of a surrogate code point; a pair of them makes one character, either alone none.
_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F]")
_SURROGATE = re.compile("[\ud800-\udfff]")


def _lone_surrogate(record):
    """The path (``steps[2]``, ``label.finish_reason``) of the first string holding a lone surrogate, or None."""
    pending = [("", record)]
    while pending:
        where, value = pending.pop()
        if isinstance(value, dict):
            for key, child in value.items():
                if _SURROGATE.search(key):
                    return f"{where}.{key}" if where else key
                pending.append((f"{where}.{key}" if where else key, child))
        elif isinstance(value, list):
            pending.extend((f"{where}[{i}]", child) for i, child in enumerate(value))
        elif isinstance(value, str) and _SURROGATE.search(value):
            return where or None
    return None


def field(record, dotted, line, *, types=None, required=True, nullable=False):
    """Read ``a.b.c`` from a record, checking presence and type; errors name line and field."""
    value = record
    for part in dotted.split("."):
        if not isinstance(value, dict) or part not in value:
            if required:
                raise FormatError("is missing", line=line, field=dotted)
            return None
        value = value[part]
    if value is None:
        if nullable or not required:
            return None
        raise FormatError("must not be null", line=line, field=dotted)
    if types is not None and (not isinstance(value, types) or (isinstance(value, bool) and bool not in _as_tuple(types))):
        names = " or ".join(t.__name__ for t in _as_tuple(types))
        raise FormatError(f"must be {names}, got {type(value).__name__}", line=line, field=dotted)
    return value


def _as_tuple(types):
    return types if isinstance(types, tuple) else (types,)
