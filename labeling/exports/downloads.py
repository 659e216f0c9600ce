"""A person's export, logged: the download streamed by the API and the snapshot asked for by hand.

The file itself is written by ``stream_export`` or the snapshot job; these are the use cases a
lead or researcher triggers, each leaving an audit entry (labeling/audit) of what was taken.
"""
from django.db import transaction

from labeling import audit

from .registry import stream_export


def download(project, by, name, filters, *, compress=False):
    """The export's byte stream (``stream_export``), logged as taken by ``by`` with its filters."""
    with transaction.atomic():
        audit.record(project, by, audit.EXPORT, target=f"{name} export", after={
            "format": name, "gzip": compress,
            "generations": list(filters.generations) if filters.generations else None,
            "since": filters.since.isoformat() if filters.since else None,
            "until": filters.until.isoformat() if filters.until else None,
            "quality_control": filters.include_quality_control,
            "excluded_annotators": list(filters.exclude_annotator_ids),
            "provenance": filters.provenance,
            "agree": list(filters.agree),
        })
    return stream_export(name, filters, compress=compress)


def snapshot_queued(project, by):
    """Log that ``by`` asked for a snapshot now (called once the job is queued: one that could not be is not logged)."""
    with transaction.atomic():
        audit.record(project, by, audit.SNAPSHOT, target="snapshot", after={"state": "queued"})
