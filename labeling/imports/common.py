"""What every importer shares: reading JSONL, errors that say where, progress."""
import dataclasses
import gzip
import io
import json
import sys
import time
from pathlib import Path

from labeling.errors import DomainError


class ImportFailed(DomainError):
    """Bad input. The message names the file, the line and the field (``reason`` is the bare message)."""

    def __init__(self, message, *, path=None, line=None, field=None):
        where = ":".join(str(p) for p in (path, line) if p is not None)
        parts = [where] if where else []
        if field:
            parts.append(f"field '{field}'")
        parts.append(message)
        super().__init__(": ".join(parts), field)
        self.path, self.line, self.reason = path, line, message

    def as_answer(self):
        return {"detail": self.message, "line": self.line, "field": self.field}

    def at(self, path):
        """The same error, with the file named (the reader knows the line, the caller the file)."""
        if self.path is None:
            return ImportFailed(self.reason, path=path, line=self.line, field=self.field)
        return self


@dataclasses.dataclass
class ImportResult:
    records: int = 0  # lines read
    created: int = 0  # records that added something
    skipped: int = 0  # records already present (re-import)
    details: dict = dataclasses.field(default_factory=dict)

    def as_dict(self):
        return dataclasses.asdict(self)


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
        elapsed = max(now - self.start, 1e-9)
        end = "\n" if final else "\r"
        self.stream.write(f"{self.label}: {self.count:,} records, {self.count / elapsed:,.0f}/s, {elapsed:.1f}s{end}")
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
    """An open binary stream for a path or a file object, gunzipped when it is gzip."""
    raw = open(source, "rb") if isinstance(source, (str, Path)) else source
    if hasattr(raw, "peek"):
        head = raw.peek(2)[:2]
    elif raw.seekable():
        start = raw.tell()
        head = raw.read(2)
        raw.seek(start)
    else:
        raw = io.BufferedReader(raw)
        head = raw.peek(2)[:2]
    if head == b"\x1f\x8b":
        return gzip.GzipFile(fileobj=raw, mode="rb")
    return raw


def read_jsonl(source, *, path=None):
    """Yield ``(line_number, object)`` for each non-blank line; memory stays one line.

    A line that is not a JSON object raises ImportFailed naming the line.
    """
    stream = open_binary(source)
    try:
        for number, raw_line in enumerate(stream, start=1):
            if not raw_line.strip():
                continue
            try:
                record = json.loads(raw_line)
            except (UnicodeDecodeError, json.JSONDecodeError) as exc:
                raise ImportFailed(f"not valid JSON ({exc})", path=path, line=number) from None
            if not isinstance(record, dict):
                raise ImportFailed("expected a JSON object", path=path, line=number)
            yield number, record
    finally:
        if isinstance(source, (str, Path)):
            stream.close()


def field(record, dotted, line, *, types=None, required=True, nullable=False):
    """Read ``a.b.c`` from a record, checking presence and type; errors name line and field."""
    value = record
    for part in dotted.split("."):
        if not isinstance(value, dict) or part not in value:
            if required:
                raise ImportFailed("is missing", line=line, field=dotted)
            return None
        value = value[part]
    if value is None:
        if nullable or not required:
            return None
        raise ImportFailed("must not be null", line=line, field=dotted)
    if types is not None and (not isinstance(value, types) or (isinstance(value, bool) and bool not in _as_tuple(types))):
        names = " or ".join(t.__name__ for t in _as_tuple(types))
        raise ImportFailed(f"must be {names}, got {type(value).__name__}", line=line, field=dotted)
    return value


def _as_tuple(types):
    return types if isinstance(types, tuple) else (types,)
