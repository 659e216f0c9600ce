"""TRL's stepwise-supervision layout as a Parquet file, the way data sets travel on the Hub.

The rows are ``trl.rows`` (one home for which steps and labels go out): ``prompt`` (string),
``completions`` (list of strings), ``labels`` (list of booleans), the columns TRL's
``PRMTrainer`` tokenizes and ``datasets.load_dataset("parquet", data_files=...)`` opens; with
``ExportFilters.provenance`` also ``labeler`` (string) and ``generation`` (int64, null outside one);
with ``ExportFilters.agree`` also ``label_sources`` (list of strings), and the file's metadata
(``stepmark`` in the schema's key-value metadata) records the filter and its sources.

The file is written a row group (``ROW_GROUP`` trajectories) at a time and handed out as it
grows, so neither a download nor a file export holds the whole export in memory.
"""
import json

from .registry import Sink, register
from .trl import rows

ROW_GROUP = 1000
CONTENT_TYPE = "application/vnd.apache.parquet"


@register("trl-parquet", content_type=CONTENT_TYPE, extension=".parquet", binary=True, provenance=True,
          agree=True)
def export(filters, *, neutral_is_positive=True):
    """Yield ``(bytes, records)`` pieces of a Parquet file of the TRL trajectories."""
    import pyarrow  # loaded when a Parquet export runs, not with the exporter registry
    import pyarrow.parquet

    schema = pyarrow.schema([
        ("prompt", pyarrow.string()),
        ("completions", pyarrow.list_(pyarrow.string())),
        ("labels", pyarrow.list_(pyarrow.bool_())),
        *([("labeler", pyarrow.string()), ("generation", pyarrow.int64())] if filters.provenance else []),
        *([("label_sources", pyarrow.list_(pyarrow.string()))] if filters.agree else []),
    ])
    if filters.agree:
        neutral = "positive" if neutral_is_positive else "negative"
        schema = schema.with_metadata({"stepmark": json.dumps(
            {"filter": "agree", "sources": list(filters.agree), "neutral": neutral})})
    sink = Sink()
    writer = pyarrow.parquet.ParquetWriter(sink, schema, compression="zstd")
    group = []
    for row in rows(filters, neutral_is_positive=neutral_is_positive):
        group.append(row)
        if len(group) >= ROW_GROUP:
            writer.write_table(pyarrow.Table.from_pylist(group, schema=schema))
            yield sink.take(), len(group)
            group = []
    if group:
        writer.write_table(pyarrow.Table.from_pylist(group, schema=schema))
    writer.close()  # the footer: a file with no rows still opens, with the three columns
    yield sink.take(), len(group)


@register("trl-parquet-neutral-negative", content_type=CONTENT_TYPE, extension=".parquet", binary=True,
          provenance=True, agree=True)
def export_neutral_negative(filters):
    """As ``trl-parquet``, with 0 ratings labelled false."""
    return export(filters, neutral_is_positive=False)
