import uuid

from django.conf import settings
from django.db import models
from django.db.models import Q


class Annotator(models.Model):
    """A person who rates steps.

    ``uuid`` is what exports write as ``labeler``: stable, and not the login name. Labelers
    that arrive with imported data have no user account.
    """

    ACTIVE = "active"
    PAUSED = "paused"
    STATUS_CHOICES = [(ACTIVE, "active"), (PAUSED, "paused")]

    uuid = models.UUIDField(default=uuid.uuid4, unique=True, editable=False)
    user = models.OneToOneField(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="annotator"
    )
    status = models.CharField(max_length=20, choices=STATUS_CHOICES, default=ACTIVE)
    status_reason = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    workspace_keys = models.JSONField(
        default=dict, blank=True,
        help_text="The workspace keys this person changed, {action: key} (labeling/workspace_keys.py).",
    )

    def __str__(self):
        return self.user.get_username() if self.user_id else str(self.uuid)


class FinishReason(models.TextChoices):
    FOUND_ERROR = "found_error"
    SOLUTION = "solution"
    BAD_PROBLEM = "bad_problem"
    GIVE_UP = "give_up"


class Assignment(models.Model):
    """One annotator's pass over one solution: a PRM800K record once submitted.

    ``generation``, ``is_quality_control`` and ``is_screening`` record how the solution was
    served, as PRM800K records do. Imported records keep ``source_hash`` (which makes a
    re-import add nothing) and ``source_shape`` (the optional keys the record carried, so that
    export gives back the same object).
    """

    ACTIVE = "active"
    SUBMITTED = "submitted"
    EXPIRED = "expired"
    STATE_CHOICES = [(ACTIVE, "active"), (SUBMITTED, "submitted"), (EXPIRED, "expired")]

    # No single-column indexes for these keys: assignment_state_idx leads with the project,
    # assignment_solution_idx with the solution and assignment_annotator_idx with the
    # annotator. Every hand-out inserts a row and every submit changes its indexed state (so
    # writes every index of the row again); each index more costs both.
    project = models.ForeignKey("labeling.Project", on_delete=models.CASCADE, related_name="assignments",
                                db_index=False)
    solution = models.ForeignKey("labeling.Solution", on_delete=models.CASCADE, related_name="assignments",
                                 db_index=False)
    annotator = models.ForeignKey(
        Annotator, null=True, blank=True, on_delete=models.PROTECT, related_name="assignments", db_index=False
    )
    state = models.CharField(max_length=20, choices=STATE_CHOICES, default=ACTIVE)
    created_at = models.DateTimeField(auto_now_add=True)
    last_activity_at = models.DateTimeField(null=True, blank=True)
    handed_out_at = models.DateTimeField(
        null=True, blank=True, help_text="When the queue handed it out; total_time counts from here."
    )
    lease_expires_at = models.DateTimeField(null=True, blank=True)
    submitted_at = models.DateTimeField(null=True, blank=True)
    total_time = models.BigIntegerField(null=True, blank=True, help_text="Milliseconds spent labelling.")
    finish_reason = models.CharField(max_length=20, choices=FinishReason.choices, null=True, blank=True)
    finish_note = models.TextField(blank=True, help_text="Why the annotator gave up or flagged a bad problem.")
    generation = models.IntegerField(null=True, blank=True)
    is_quality_control = models.BooleanField(default=False)
    is_screening = models.BooleanField(default=False)
    submit_key = models.CharField(max_length=100, null=True, blank=True)
    source_hash = models.CharField(max_length=64, null=True, blank=True)
    source_shape = models.JSONField(null=True, blank=True)
    # The project's pre-label policy when this assignment was handed out (labeling/work/prelabels.py):
    # what it showed, from which source, and whether (a gold pass only) one of them is a trap.
    prelabel_mode = models.CharField(max_length=10, default="hidden", db_default="hidden")
    # The LabelSource's id, not a foreign key: a key would need an index written on every hand-out, and
    # a deleted source takes its labels with it anyway, so a stale id shows nothing.
    prelabel_source_id = models.PositiveIntegerField(null=True, blank=True)
    prelabel_trap = models.BooleanField(default=False, db_default=False)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["solution", "annotator"],
                condition=Q(annotator__isnull=False),
                name="assignment_once_per_annotator",
            ),
            models.UniqueConstraint(
                fields=["project", "source_hash"],
                condition=Q(source_hash__isnull=False),
                name="assignment_unique_source",
            ),
            models.CheckConstraint(
                condition=Q(total_time__isnull=True) | Q(total_time__gte=0), name="assignment_total_time_positive"
            ),
            models.CheckConstraint(
                condition=~Q(state="submitted") | Q(finish_reason__isnull=False) | Q(source_hash__isnull=False),
                name="assignment_submitted_has_reason",
            ),
        ]
        indexes = [
            models.Index(fields=["project", "state", "submitted_at"], name="assignment_state_idx"),
            models.Index(fields=["annotator", "state"], name="assignment_annotator_idx"),
            models.Index(fields=["solution", "state"], name="assignment_solution_idx"),
            # The queue finds lapsed leases without scanning the project's history.
            models.Index(
                fields=["project", "lease_expires_at"], condition=Q(state="active"), name="assignment_lease_idx"
            ),
        ]

    def __str__(self):
        return f"Assignment {self.pk} ({self.state})"


class Rating(models.Model):
    """One annotator's rating of one step (or alternative) within an assignment.

    ``value`` is +1, 0 or -1, or null where a step was shown but left unrated (PRM800K keeps
    those). ``chosen`` marks the completion the trajectory continued with.
    """

    # No single-column indexes of their own: rating_once_per_step leads with the assignment,
    # rating_step_idx is the step's. Every submit writes several ratings, and each index more
    # is written with each of them.
    assignment = models.ForeignKey(Assignment, on_delete=models.CASCADE, related_name="ratings", db_index=False)
    step = models.ForeignKey("labeling.Step", on_delete=models.CASCADE, related_name="ratings", db_index=False)
    value = models.SmallIntegerField(null=True, blank=True)
    flagged = models.BooleanField(null=True, blank=True)
    chosen = models.BooleanField(default=False)
    rated_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["assignment", "step"], name="rating_once_per_step"),
            models.CheckConstraint(
                condition=Q(value__isnull=True) | (Q(value__gte=-1) & Q(value__lte=1)),
                name="rating_value_range",
            ),
        ]
        indexes = [models.Index(fields=["step"], name="rating_step_idx")]

    def __str__(self):
        return f"{self.value} on step {self.step_id}"
