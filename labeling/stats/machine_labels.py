"""A project's machine-label sources with what each holds: how many labels of each value, on how many solutions.

Read by the API's list (``GET /api/projects/{id}/label-sources/``); people's ratings are not
counted here (they are no source's).
"""
from django.db.models import Count, Q

from labeling.models import LabelSource


def label_sources(project):
    """The project's LabelSources, newest first, each with ``labels`` (all its StepLabels),
    ``positive`` / ``neutral`` / ``negative`` (value +1 / 0 / -1), ``without_value`` (null:
    the source gave none that could be used) and ``solutions`` (distinct solutions labelled)."""
    return (
        LabelSource.objects.filter(project=project)
        .annotate(
            labels_count=Count("labels"),
            positive=Count("labels", filter=Q(labels__value=1)),
            neutral=Count("labels", filter=Q(labels__value=0)),
            negative=Count("labels", filter=Q(labels__value=-1)),
            without_value=Count("labels", filter=Q(labels__value__isnull=True)),
            solutions=Count("labels__step__solution", distinct=True),
        )
        .order_by("-created_at", "-pk")
    )
