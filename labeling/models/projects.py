from django.conf import settings
from django.core.validators import MinValueValidator
from django.db import models
from django.db.models import Exists, OuterRef, Q

# The shortest lease a project may set. At 0 every lease lapsed at once (issue #26): whoever
# asked next took a pass being rated. The page renews a lease every third of it while in use,
# so a minute leaves two renewals to miss before the work is lost.
MIN_LEASE_SECONDS = 60


def full_now(live=None):
    """``Solution.is_full``'s value in an update of solutions: their live count (``live``, or the
    stored one) against their project's overlap as committed when the statement runs, so that an
    overlap change and a hand-out racing each other still leave it right."""
    reached = OuterRef("live_assignments") if live is None else live
    return Exists(Project.objects.filter(pk=OuterRef("project_id"), overlap__lte=reached))


class Project(models.Model):
    """A labelling project: the problems and solutions people rate, and the rules they follow.

    The phase rules mirror PRM800K: phase 2 stops a pass at the first -1
    (``stop_at_first_error``); phase 1 rates every step and goes on past a -1 through an
    alternative rated 0 or +1 there (the chosen completion, with ``allow_alternatives``) or,
    when every candidate is wrong, through the annotator's own step (``allow_human_steps``).
    """

    name = models.CharField(max_length=200, unique=True)
    instructions = models.TextField(blank=True, help_text="Markdown shown to annotators.")
    overlap = models.PositiveSmallIntegerField(
        default=1, help_text="How many different annotators rate each solution."
    )
    quality_control_rate = models.FloatField(
        default=0.0, help_text="Share of hand-outs that are gold items (0 to 1)."
    )
    stop_at_first_error = models.BooleanField(
        default=True, help_text="Phase 2 rule: a -1 ends the pass with found_error."
    )
    allow_alternatives = models.BooleanField(
        default=True, help_text="Show alternative completions at a step to be rated too."
    )
    allow_human_steps = models.BooleanField(
        default=False, help_text="Phase 1 rule: an annotator may write their own step."
    )
    lease_seconds = models.PositiveIntegerField(
        default=1800, validators=[MinValueValidator(MIN_LEASE_SECONDS)],
        help_text=f"An assignment without activity for this long returns to the queue (at least {MIN_LEASE_SECONDS})."
    )
    requires_screening = models.BooleanField(
        default=False, help_text="New annotators pass the screening items before real work."
    )
    screening_size = models.PositiveSmallIntegerField(
        default=0, help_text="How many screening items a newcomer does, in id order (0: all of them)."
    )
    screening_threshold = models.FloatField(
        default=0.8, help_text="Mean exact agreement with gold over the screening items needed to pass."
    )
    gold_threshold = models.FloatField(
        default=0.0, help_text="Pause an annotator whose rolling gold score falls below this (0: never)."
    )
    gold_window = models.PositiveSmallIntegerField(
        default=10, help_text="The rolling gold score is the mean over this many latest gold passes."
    )
    gold_min_passes = models.PositiveSmallIntegerField(
        default=3, help_text="Gold passes needed before the rolling score can pause anyone."
    )
    # Outlier flags on the lead dashboard (labeling/stats/outliers.py): each figure against the
    # median of the rest of the team; 0 turns a flag off. The lead sets them on the dashboard
    # (GET/PATCH /api/projects/{id}/flag-settings/).
    flag_fast_share = models.FloatField(
        default=0.33, help_text="Flag an annotator whose median time per step is under this share of the team's "
        "median, 0 to 1 (0: never)."
    )
    flag_gold_margin = models.FloatField(
        default=0.15, help_text="Flag an annotator whose rolling gold score is more than this under the team's "
        "median, 0 to 1 (0: never)."
    )
    flag_agreement_margin = models.FloatField(
        default=0.2, help_text="Flag an annotator whose kappa against the others' majority is more than this under "
        "the team's median, with the top of its interval under that median too, 0 to 2 (0: never)."
    )
    flag_distribution_margin = models.FloatField(
        default=0.25, help_text="Flag an annotator whose share of one rating (+1, 0 or -1) is more than this away "
        "from the team's median share, 0 to 1 (0: never)."
    )
    # Machine pre-labels (labeling/work/prelabels.py): whether annotators see one source's labels
    # of the steps (issue #31), and how often a gold pass carries a planted wrong one (a trap).
    # The lead sets them on the quality page (GET/PATCH /api/projects/{id}/prelabel-settings/).
    PRELABELS_HIDDEN, PRELABELS_SUGGEST, PRELABELS_VERIFY = "hidden", "suggest", "verify"
    PRELABEL_MODES = [(PRELABELS_HIDDEN, "hidden (PRM800K's practice)"), (PRELABELS_SUGGEST, "shown as suggestions"),
                      (PRELABELS_VERIFY, "verify: confirm or correct each")]
    prelabel_mode = models.CharField(max_length=10, choices=PRELABEL_MODES, default=PRELABELS_HIDDEN,
                                     help_text="What annotators see of the pre-labels.")
    prelabel_source = models.ForeignKey(
        "labeling.LabelSource", null=True, blank=True, on_delete=models.SET_NULL, related_name="+",
        help_text="Whose labels annotators see (a PRM checkpoint, a judge, rollouts); none: no pre-labels.")
    trap_rate = models.FloatField(
        default=0.0, help_text="Share of gold passes, where pre-labels are shown, whose pre-label on one step with a "
        "known gold value is made wrong, 0 to 1 (0: none).")
    # Active learning (scoring/jobs.py): how a generation is selected and when the PRM retrains.
    # Researchers edit these on the research page (GET/PATCH /api/projects/{id}/loop-settings/,
    # scoring/loop_settings.py, which validates them).
    pool_limit = models.PositiveIntegerField(
        default=0, help_text="Candidate-pool solutions a generation scores, lowest ids first (0: the whole pool)."
    )
    generation_size = models.PositiveIntegerField(
        default=100, help_text="Solutions a generation selects for the queue."
    )
    selection_wrong_share = models.FloatField(
        default=0.8, help_text="Share of a generation taken from convincing wrong-answer solutions (0 to 1)."
    )
    selection_per_problem_cap = models.PositiveSmallIntegerField(
        default=0, help_text="Most solutions of one problem in a generation (0: no cap)."
    )
    # scoring.prm.strategies.STRATEGIES, written out: the human side imports nothing of the PRM
    # core (tests/scoring/test_loop_settings.py keeps the two in step).
    SELECTION_STRATEGIES = [("convincing_wrong", "convincing wrong answers"), ("uncertainty", "uncertainty (MC dropout)"),
                            ("random", "random (seeded)"), ("mixture", "mixture")]
    selection_strategy = models.CharField(
        max_length=20, choices=SELECTION_STRATEGIES, default="convincing_wrong",
        help_text="How a generation is chosen: convincing_wrong (highest-scored wrong answers, PRM800K's rule), "
        "uncertainty (where the PRM disagrees with itself under MC dropout), random (seeded baseline), "
        "or mixture (selection_mix's shares).",
    )
    selection_mix = models.JSONField(
        default=dict, blank=True,
        help_text='The mixture\'s shares, e.g. {"convincing_wrong": 0.5, "uncertainty": 0.3, "random": 0.2}: '
        "known strategies, non-negative, summing to 1 (read when selection_strategy is mixture).",
    )
    retrain_threshold = models.PositiveIntegerField(
        default=100, help_text="New submitted passes since the last checkpoint that make a retrain due (0: never)."
    )
    retrain_metric = models.CharField(
        max_length=40, default="step_auroc",
        help_text="Held-out figure a new checkpoint must beat the champion on "
        "(one of scoring.prm.metrics.PROMOTION_METRICS: step_auroc, step_f1, accuracy, log_loss).",
    )
    # The promotion gate (scoring.prm.gate): a new checkpoint replaces the champion only when it
    # is better beyond the noise of a small held-out set.
    promotion_min_problems = models.PositiveIntegerField(
        default=50, help_text="Held-out problems needed to judge a new checkpoint at all; with fewer, the champion stays.",
    )
    promotion_confidence = models.FloatField(
        default=0.95, help_text="One-sided confidence at which the gain on retrain_metric must be above 0 "
        "(paired bootstrap over held-out problems).",
    )
    promotion_guard_tolerance = models.FloatField(
        default=0.02, help_text="How much worse than the champion's the log loss and the expected calibration error "
        "of a new checkpoint may be (absolute).",
    )
    base_model_path = models.CharField(
        max_length=500, blank=True,
        help_text="Local Hugging Face directory the PRM is built on (empty: the bundled all-MiniLM-L6-v2).",
    )
    train_settings = models.JSONField(
        default=dict, blank=True, help_text="Overrides of the PRM core's TrainConfig (lr, epochs, max_steps, ...)."
    )
    # How problem and step text is shown (frontend/src/math.js; docs/formats.md, "How text is
    # rendered"). A GSM8K-style import into an empty project turns dollar_math off.
    dollar_math = models.BooleanField(
        default=True,
        help_text="Read $...$ and $$...$$ as LaTeX math (Pandoc's rule, so '$2 per egg ... $112' stays text). "
        "Off for plain-text data sets such as GSM8K, where $ is a currency sign; \\(...\\) and \\[...\\] stay math.",
    )
    show_calculator_markup = models.BooleanField(
        default=False, help_text="Show GSM8K's calculator annotations <<16*7=112>> in problems and steps (hidden when off)."
    )
    is_active = models.BooleanField(default=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name"]
        constraints = [
            models.CheckConstraint(condition=Q(overlap__gte=1), name="project_overlap_positive"),
            models.CheckConstraint(
                condition=Q(quality_control_rate__gte=0) & Q(quality_control_rate__lte=1),
                name="project_qc_rate_range",
            ),
            models.CheckConstraint(
                condition=Q(screening_threshold__gte=0) & Q(screening_threshold__lte=1),
                name="project_screening_threshold_range",
            ),
            models.CheckConstraint(
                condition=Q(gold_threshold__gte=0) & Q(gold_threshold__lte=1), name="project_gold_threshold_range"
            ),
            models.CheckConstraint(condition=Q(gold_window__gte=1), name="project_gold_window_positive"),
            models.CheckConstraint(
                condition=Q(flag_fast_share__gte=0) & Q(flag_fast_share__lte=1)
                & Q(flag_gold_margin__gte=0) & Q(flag_gold_margin__lte=1)
                & Q(flag_agreement_margin__gte=0) & Q(flag_agreement_margin__lte=2)
                & Q(flag_distribution_margin__gte=0) & Q(flag_distribution_margin__lte=1),
                name="project_flag_thresholds_range",
            ),
            models.CheckConstraint(
                condition=Q(trap_rate__gte=0) & Q(trap_rate__lte=1),
                name="project_trap_rate_range",
            ),
            models.CheckConstraint(condition=Q(lease_seconds__gte=MIN_LEASE_SECONDS), name="project_lease_seconds_min"),
            models.CheckConstraint(
                condition=Q(selection_wrong_share__gte=0) & Q(selection_wrong_share__lte=1),
                name="project_wrong_share_range",
            ),
        ]

    def __str__(self):
        return self.name

    @classmethod
    def from_db(cls, db, field_names, values):
        project = super().from_db(db, field_names, values)
        project._stored_overlap = project.__dict__.get("overlap")
        return project

    def save(self, *args, **kwargs):
        """Save, and when the overlap changed, which solutions are full with it (``Solution.is_full``)."""
        changed = getattr(self, "_stored_overlap", self.overlap) != self.overlap
        super().save(*args, **kwargs)
        if changed:
            self.solutions.update(is_full=full_now())
        self._stored_overlap = self.overlap


class Membership(models.Model):
    """A person's role in one project (labeling/access/roles.py says what each role may do).

    A person may hold several roles in a project, one row each. Only superusers act in every
    project without a membership; creating projects is the site-wide permission
    ``labeling.add_project``.
    """

    ANNOTATOR, LEAD, RESEARCHER = "annotator", "lead", "researcher"
    ROLE_CHOICES = [(ANNOTATOR, "annotator"), (LEAD, "lead"), (RESEARCHER, "researcher")]

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="memberships")
    # No index of its own: the unique (user, project, role) leads with it.
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="memberships", db_index=False
    )
    role = models.CharField(max_length=16, choices=ROLE_CHOICES)
    added_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    added_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["project", "user", "role"]
        constraints = [
            models.UniqueConstraint(fields=["user", "project", "role"], name="membership_unique_role"),
            models.CheckConstraint(condition=Q(role__in=["annotator", "lead", "researcher"]), name="membership_role_known"),
        ]

    def __str__(self):
        return f"{self.user_id} {self.role} in {self.project_id}"
