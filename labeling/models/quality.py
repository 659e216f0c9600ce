"""Quality control: gold answers, gold scores, annotator standing, proposals, adjudications.

The rules that fill these tables live in ``labeling/quality/gold.py`` (gold items and scoring),
``labeling/quality/screening.py`` (standing per project: screening, pausing) and
``labeling/quality/consensus.py`` (majority ratings and adjudication).
"""
from django.conf import settings
from django.db import models
from django.db.models import Q


class GoldRating(models.Model):
    """The lead-approved rating of one step of a gold solution."""

    step = models.OneToOneField("labeling.Step", on_delete=models.CASCADE, related_name="gold")
    value = models.SmallIntegerField()
    approved_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    approved_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.CheckConstraint(condition=Q(value__gte=-1) & Q(value__lte=1), name="gold_value_range"),
        ]

    def __str__(self):
        return f"gold {self.value:+d} for step {self.step_id}"


class GoldScore(models.Model):
    """How one submitted pass over a gold (or screening) solution compares with the gold.

    ``steps_compared`` counts the gold-rated steps the annotator rated too; the shares are over
    those (0 when none: a pass that rates no gold step agrees with none).
    ``first_error_same``: the first -1 among the solution's own steps sits at the same
    position in both (or neither has one). ``annotator``, ``project``, ``is_screening`` and
    ``submitted_at`` repeat the assignment's so that rolling scores read one index.
    """

    assignment = models.OneToOneField("labeling.Assignment", on_delete=models.CASCADE, related_name="gold_score")
    # gold_score_rolling_idx leads with the annotator: no index of its own.
    annotator = models.ForeignKey("labeling.Annotator", on_delete=models.CASCADE, related_name="gold_scores",
                                  db_index=False)
    project = models.ForeignKey("labeling.Project", on_delete=models.CASCADE, related_name="gold_scores")
    is_screening = models.BooleanField(default=False)
    submitted_at = models.DateTimeField()
    exact_share = models.FloatField()
    within_one_share = models.FloatField()
    first_error_same = models.BooleanField()
    steps_compared = models.PositiveIntegerField()

    class Meta:
        indexes = [
            models.Index(fields=["annotator", "project", "is_screening", "-submitted_at"], name="gold_score_rolling_idx"),
        ]

    def __str__(self):
        return f"gold score {self.exact_share:.2f} of assignment {self.assignment_id}"


class AnnotatorProjectStatus(models.Model):
    """An annotator's standing in one project: may they get work there, and why not.

    No row means ``active`` in a project without screening. The row is created at the
    annotator's first hand-out in the project, in ``screening`` when the project requires it.
    ``decided_by`` is the lead who set the state (null when the system did); ``resumed_at``
    is when a lead last resumed them: automatic pausing looks only at gold passes after it.
    """

    SCREENING = "screening"
    ACTIVE = "active"
    FAILED_SCREENING = "failed_screening"
    PAUSED = "paused"
    STATE_CHOICES = [
        (SCREENING, "screening"),
        (ACTIVE, "active"),
        (FAILED_SCREENING, "failed screening"),
        (PAUSED, "paused"),
    ]

    # annotator_status_once_per_project and annotator_status_state_idx lead with these.
    annotator = models.ForeignKey("labeling.Annotator", on_delete=models.CASCADE, related_name="project_statuses",
                                  db_index=False)
    project = models.ForeignKey("labeling.Project", on_delete=models.CASCADE, related_name="project_statuses",
                                db_index=False)
    state = models.CharField(max_length=20, choices=STATE_CHOICES, default=ACTIVE)
    reason = models.TextField(blank=True)
    screening_score = models.FloatField(null=True, blank=True)
    decided_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    decided_at = models.DateTimeField(null=True, blank=True)
    resumed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["annotator", "project"], name="annotator_status_once_per_project"),
        ]
        indexes = [models.Index(fields=["project", "state"], name="annotator_status_state_idx")]

    def __str__(self):
        return f"{self.annotator} in {self.project}: {self.state}"


class GoldProposal(models.Model):
    """Gold ratings proposed from the consensus of trusted annotators, waiting for a lead.

    ``ratings`` is a list of ``[position, alternative, value]``; ``votes`` how many passes
    the consensus was taken over.
    """

    PENDING = "pending"
    APPROVED = "approved"
    REJECTED = "rejected"
    STATE_CHOICES = [(PENDING, "pending"), (APPROVED, "approved"), (REJECTED, "rejected")]

    solution = models.ForeignKey("labeling.Solution", on_delete=models.CASCADE, related_name="gold_proposals")
    ratings = models.JSONField()
    votes = models.PositiveIntegerField()
    state = models.CharField(max_length=20, choices=STATE_CHOICES, default=PENDING)
    created_at = models.DateTimeField(auto_now_add=True)
    decided_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    decided_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["solution"], condition=Q(state="pending"), name="gold_proposal_one_pending"
            ),
        ]

    def __str__(self):
        return f"gold proposal for solution {self.solution_id} ({self.state})"


class Adjudication(models.Model):
    """A lead's ruling on one step where annotators disagree: it overrides the majority."""

    step = models.OneToOneField("labeling.Step", on_delete=models.CASCADE, related_name="adjudication")
    value = models.SmallIntegerField()
    note = models.TextField(blank=True)
    decided_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    decided_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.CheckConstraint(condition=Q(value__gte=-1) & Q(value__lte=1), name="adjudication_value_range"),
        ]

    def __str__(self):
        return f"adjudicated {self.value:+d} for step {self.step_id}"
