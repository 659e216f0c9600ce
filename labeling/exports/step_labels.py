"""Export the machine labels themselves, each with its source: format ``step-labels``.

One JSON line per machine label (``labeling.models.StepLabel``) of the project, in the order of
its solutions and steps::

    {"solution": 12, "problem": "...", "position": 0, "alternative": 0, "step": "...",
     "source": {"id": 3, "kind": "judge", "name": "...", "details": {...}},
     "value": 1, "score": null, "rollouts": null, "successes": null, "status": "ok", "reason": "..."}

``source.details`` is the provenance (the PRM checkpoint, the judge's model and prompt version,
the rollouts' file and counts). People's ratings never appear here and machine labels never
appear in the PRM800K export: the two stay apart. Filters: ``generations`` (of the solution),
``since``/``until`` (when the label was written) and ``include_quality_control`` (False leaves gold
items out); the rest apply to passes and are refused by the API.
"""
import json

from labeling.models import LabelSource, StepLabel

from .registry import register

BATCH = 5000


@register("step-labels")
def export(filters):
    """Yield one JSON line per machine label of the project."""
    dumps = json.JSONEncoder(ensure_ascii=False).encode
    sources = {s.pk: {"id": s.pk, "kind": s.kind, "name": s.name, "details": s.details}
               for s in LabelSource.objects.filter(project_id=filters.project_id)}
    labels = StepLabel.objects.filter(source_id__in=list(sources))
    if filters.generations:
        labels = labels.filter(step__solution__generation__number__in=list(filters.generations))
    if filters.since:
        labels = labels.filter(created_at__gte=filters.since)
    if filters.until:
        labels = labels.filter(created_at__lt=filters.until)
    if not filters.include_quality_control:
        labels = labels.filter(step__solution__is_gold=False)
    rows = labels.order_by("step__solution_id", "step__position", "step__alternative", "source_id").values_list(
        "step__solution_id", "step__solution__problem__problem", "step__position", "step__alternative", "step__text",
        "source_id", "value", "score", "rollouts", "successes", "status", "reason")
    for (solution, problem, position, alternative, text, source, value, score, rollouts, successes, status,
         reason) in rows.iterator(chunk_size=BATCH):
        yield dumps({"solution": solution, "problem": problem, "position": position, "alternative": alternative,
                     "step": text, "source": sources[source], "value": value, "score": score, "rollouts": rollouts,
                     "successes": successes, "status": status, "reason": reason})
