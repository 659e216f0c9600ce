"""Which step ratings the agreement statistics count, as one QuerySet.

The statistics (``labeling/stats/agreement.py``) take four columns: annotator, solution, position,
value. Agreement is about the solution's own steps, so only ratings of alternative 0 count,
and only from submitted assignments (a draft may still change). Ratings left null (shown but
unrated) and passes without an annotator (imported records with no labeler) are not ratings
anyone can agree with, and are left out.

The dashboard reads these rows (``labeling.stats.dashboard.load_columns``): through this
QuerySet, or on PostgreSQL through one SQL aggregate that is much faster at a million ratings
and that tests/labeling/stats/test_dashboard.py holds to this QuerySet.
"""
from labeling.models import Assignment, Rating

COLUMNS = ("assignment__annotator_id", "step__solution_id", "step__position", "value")


def submitted_ratings(project, *extra, generation=None, since=None, until=None):
    """QuerySet of ``(annotator id, solution id, position, value, *extra)`` rows for the statistics.

    ``project`` is a Project or its id. ``generation`` (a number, as assignments record it)
    and the window ``since <= submitted_at < until`` filter the passes. ``extra`` names more
    columns to read (``"assignment__submitted_at"``).
    """
    passes = {"project": project, "state": Assignment.SUBMITTED, "annotator__isnull": False}
    if generation is not None:
        passes["generation"] = generation
    if since is not None:
        passes["submitted_at__gte"] = since
    if until is not None:
        passes["submitted_at__lt"] = until
    # Filtering on the joined assignment keeps it one join, with no IN over every pass.
    ratings = Rating.objects.filter(
        step__alternative=0, value__isnull=False, **{f"assignment__{k}": v for k, v in passes.items()}
    )
    return ratings.order_by().values_list(*COLUMNS, *extra)
