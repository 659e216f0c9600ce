"""Readers for raw-output files that are not JSONL: a JSON array (vLLM outputs dumped with
``json.dump``) and Parquet (a Hugging Face dataset's ``to_parquet``).

Both yield ``(number, record)`` like ``common.read_jsonl``: for a JSON array the number is the
element's (1 = the first), for Parquet the row's, so an error names the record either way.
"""
import json

from django.conf import settings
from django.core.files import File

from formats.errors import FormatError

from .common import check_record, open_binary, read_jsonl

PARQUET_BATCH = 500  # rows decoded at a time: memory stays one batch


def read_json_or_jsonl(source, *, path=None):
    """A JSON array of objects (read whole, so held to the line limit) or JSONL."""
    stream = open_binary(source)
    try:
        if stream.peek(64).lstrip()[:1] != b"[":
            yield from read_jsonl(stream, path=path)
            return
        limit = settings.STEPMARK_IMPORT_MAX_LINE_BYTES
        data = stream.read(limit + 1)
        if len(data) > limit:
            raise FormatError(f"a JSON array is read whole and this one is longer than {limit:,} bytes "
                               "(STEPMARK_IMPORT_MAX_LINE_BYTES): write one object per line instead", path=path)
        try:
            records = json.loads(data)
        except (UnicodeDecodeError, ValueError, RecursionError) as exc:
            raise FormatError(f"not valid JSON ({exc})", path=path) from None
        for number, record in enumerate(records, start=1):
            check_record(record, path, number)
            yield number, record
    finally:
        if isinstance(source, str) or hasattr(source, "__fspath__"):
            stream.close()


def read_parquet(source, *, path=None):
    """The rows of a Parquet file as dicts, a batch at a time."""
    import pyarrow  # only an import of this format pays for loading Arrow
    import pyarrow.parquet

    if isinstance(source, File):  # an upload: Arrow reads the file it wraps
        source = source.file
    try:
        parquet = pyarrow.parquet.ParquetFile(source)
    except (pyarrow.ArrowException, OSError) as exc:
        raise FormatError(f"is not a Parquet file ({exc})", path=path) from None
    number = 0
    for batch in parquet.iter_batches(batch_size=PARQUET_BATCH):
        for row in batch.to_pylist():
            number += 1
            yield number, row
