"""Step labels that come from somewhere other than a person, kept beside people's ratings.

A ``LabelSource`` says where a set of machine labels came from: one PRM checkpoint, one LLM judge
configuration (model and prompt version), one Monte Carlo rollout run, or one imported file.
A ``StepLabel`` is that source's label of one step. People's ratings (``Rating``) are never
mixed with these: the PRM800K export reads ratings only, and an export includes machine labels
only when asked, each with its source.
"""
from django.db import models
from django.db.models import Q


class LabelSource(models.Model):
    """Where a project's machine labels came from; ``details`` holds the provenance in full.

    - ``prm``: ``{"checkpoint_id": ..., "checkpoint": name}``
    - ``judge``: ``{"base_url": ..., "model": ..., "prompt_version": ...}`` (never the key)
    - ``rollouts``: ``{"rollouts": n per step, "completer": model name}`` where known
    - ``import``: ``{"file": name, "format": ..., "import_job_id": ...}``
    """

    PRM, JUDGE, ROLLOUTS, IMPORT = "prm", "judge", "rollouts", "import"
    KINDS = [(PRM, "PRM checkpoint"), (JUDGE, "LLM judge"), (ROLLOUTS, "Monte Carlo rollouts"),
             (IMPORT, "imported file")]

    project = models.ForeignKey("labeling.Project", on_delete=models.CASCADE, related_name="label_sources",
                                db_index=False)
    kind = models.CharField(max_length=16, choices=KINDS)
    name = models.CharField(max_length=200, help_text="How the source reads in pages and exports.")
    details = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["project", "kind", "name"], name="label_source_once")]

    def __str__(self):
        return f"{self.kind}: {self.name}"


class StepLabel(models.Model):
    """One source's label of one step (or alternative).

    ``value`` is +1, 0 or -1; null when the source gave none that could be used (``status``
    says why: an answer that could not be parsed, a refusal, an error). ``score`` is the
    source's number where it has one (the PRM's P(correct), the rollouts' success rate);
    ``rollouts`` and ``successes`` are the Monte Carlo counts behind it.
    """

    OK, UNPARSEABLE, REFUSED, ERROR = "ok", "unparseable", "refused", "error"
    STATUSES = [(OK, "labelled"), (UNPARSEABLE, "answer not parseable"), (REFUSED, "refused"), (ERROR, "error")]

    source = models.ForeignKey(LabelSource, on_delete=models.CASCADE, related_name="labels", db_index=False)
    step = models.ForeignKey("labeling.Step", on_delete=models.CASCADE, related_name="machine_labels",
                             db_index=False)
    value = models.SmallIntegerField(null=True, blank=True)
    score = models.FloatField(null=True, blank=True)
    rollouts = models.PositiveIntegerField(null=True, blank=True)
    successes = models.PositiveIntegerField(null=True, blank=True)
    reason = models.TextField(blank=True)
    status = models.CharField(max_length=16, choices=STATUSES, default=OK)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["source", "step"], name="step_label_once"),
            models.CheckConstraint(condition=Q(value__isnull=True) | (Q(value__gte=-1) & Q(value__lte=1)),
                                   name="step_label_value_range"),
        ]
        indexes = [models.Index(fields=["step"], name="step_label_step_idx")]

    def __str__(self):
        return f"{self.value} on step {self.step_id} from source {self.source_id}"
