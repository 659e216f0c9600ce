"""An annotator's own submitted passes, newest first, with the ratings as sent: read-only.

One query for the API's history (labeling/api/work.py ``HistoryView``) and the page "Your recent
passes" (labeling/web/pages.py ``my_passes``). Only the caller's own passes: the ratings are the
ones they sent, the same for every kind of item, so nothing here tells gold from ordinary work.
"""
from django.db.models import Count, Prefetch, Q

from labeling.models import Assignment, Rating


def submitted_passes(annotator, projects, project=None):
    """``annotator``'s submitted passes in ``projects`` (or only ``project``), newest first, each with
    ``steps_rated`` and its ``ratings`` (steps in order, the step prefetched)."""
    rows = Assignment.objects.filter(state=Assignment.SUBMITTED, annotator=annotator, project__in=projects)
    if project is not None:
        rows = rows.filter(project_id=project)
    sent = Rating.objects.select_related("step").order_by("step__position", "step__alternative")
    rated = Count("ratings", filter=Q(ratings__value__isnull=False))
    return (rows.select_related("project", "solution__problem").annotate(steps_rated=rated)
            .prefetch_related(Prefetch("ratings", queryset=sent, to_attr="sent"))
            .order_by("-submitted_at", "-pk"))
