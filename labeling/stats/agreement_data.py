"""Load submitted step ratings from the database for the agreement statistics.

The statistics (``labeling/stats/agreement.py``) take four columns: annotator, solution, position,
value. Agreement is about the solution's own steps, so only ratings of alternative 0 count,
and only from submitted assignments (a draft may still change). Ratings left null (shown but
unrated) and passes without an annotator (imported records with no labeler) are not ratings
anyone can agree with, and are left out.

Rows stream from a server-side cursor straight into numpy arrays, so memory stays at the
arrays (32 bytes a rating), never a list of a million tuples.
"""
from itertools import chain

import numpy as np

from labeling.models import Assignment, Rating
from labeling.stats.agreement import rating_table

COLUMNS = ("assignment__annotator_id", "step__solution_id", "step__position", "value")


def submitted_ratings(project, *, generation=None, since=None, until=None, annotator=None):
    """QuerySet of ``(annotator id, solution id, position, value)`` rows for the statistics.

    ``project`` is a Project or its id. ``generation`` (a number, as assignments record it)
    and the window ``since <= submitted_at < until`` filter the passes. ``annotator`` (an
    Annotator or id) keeps the solutions that annotator submitted under the same filters,
    with everyone's ratings of them: what their agreement with the others is computed on.
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
    if annotator is not None:
        theirs = Assignment.objects.filter(annotator=annotator, **passes).values("solution")
        ratings = ratings.filter(assignment__solution__in=theirs)
    return ratings.order_by().values_list(*COLUMNS)


def load_ratings(project, *, chunk_size=10_000, **filters):
    """The filtered ratings as four int64 arrays: annotator, solution, position, value.

    Takes the filters of ``submitted_ratings``.
    """
    rows = submitted_ratings(project, **filters).iterator(chunk_size=chunk_size)
    flat = np.fromiter(chain.from_iterable(rows), dtype=np.int64).reshape(-1, len(COLUMNS))
    return tuple(flat[:, k] for k in range(len(COLUMNS)))


def load_table(project, *, chunk_size=10_000, **filters):
    """The filtered ratings as a ``RatingTable`` on the domain -1, 0, +1."""
    return rating_table(*load_ratings(project, chunk_size=chunk_size, **filters), domain=(-1, 0, 1))
