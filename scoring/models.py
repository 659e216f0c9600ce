"""What the model side records in the database: checkpoints, generation runs, solution scores.

The weights live on disk (``Checkpoint.path``, written atomically by ``scoring.prm.checkpoint``);
these rows hold their lineage, metrics and standing. Importing this module imports no torch.
"""
from django.conf import settings
from django.db import models
from django.db.models import Q


class Checkpoint(models.Model):
    """One PRM of a project: the initial one built on the base model, one retrain, or one registered.

    ``status`` tells the outcome: ``training`` while it is built, then ``champion`` when it was
    promoted (``is_champion`` marks the current one, at most one per project), ``rejected`` when
    it did not beat the champion (``reason`` says why), ``failed`` when training broke
    (``reason`` holds the error). ``passes`` counts the submitted passes the project had when
    its training data was exported, which is how the next retrain knows what is new.

    A checkpoint registered from a directory (``scoring.registry``) is ``validating`` until a
    worker has loaded it and scored a smoke example, then ``registered`` (``metrics["validation"]``
    holds what it found) or ``invalid`` (``reason`` names what is missing). ``layout`` says how it
    is loaded (``scoring.prm.layouts``), ``layout_options`` the layout's own options.
    """

    TRAINING = "training"
    CHAMPION = "champion"
    REJECTED = "rejected"
    FAILED = "failed"
    VALIDATING = "validating"
    REGISTERED = "registered"
    INVALID = "invalid"
    STATUS_CHOICES = [(TRAINING, "training"), (CHAMPION, "champion"), (REJECTED, "rejected"), (FAILED, "failed"),
                      (VALIDATING, "validating"), (REGISTERED, "registered"), (INVALID, "invalid")]
    # scoring.prm.layouts.LAYOUTS, written out: this module imports nothing of the PRM core
    LAYOUT_CHOICES = [("stepmark", "Stepmark checkpoint"), ("qwen-prm", "Qwen2.5-Math-PRM layout"),
                      ("math-shepherd", "Math-Shepherd layout"),
                      ("token-classification", "token classification (TRL PRMTrainer output)")]

    project = models.ForeignKey("labeling.Project", on_delete=models.CASCADE, related_name="checkpoints")
    path = models.CharField(max_length=1000, blank=True, help_text="The checkpoint directory.")
    parent = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.SET_NULL, related_name="children",
        help_text="The champion when this one was trained.",
    )
    generation = models.IntegerField(
        null=True, blank=True, help_text="Newest generation whose ratings it was trained on (null: none)."
    )
    base_model = models.CharField(max_length=1000, blank=True)
    data_hash = models.CharField(max_length=64, blank=True, help_text="SHA-256 of the PRM800K export trained on.")
    passes = models.PositiveIntegerField(default=0, help_text="Submitted passes in the project at export time.")
    metrics = models.JSONField(default=dict, blank=True)
    status = models.CharField(max_length=20, choices=STATUS_CHOICES, default=TRAINING)
    reason = models.TextField(blank=True)
    is_champion = models.BooleanField(default=False)
    task_id = models.CharField(max_length=255, blank=True)
    progress = models.JSONField(
        default=dict, blank=True,
        help_text="While training: phase (exporting, training, evaluating, saving), step, total_steps, loss, "
                  "eta_s, updated_at (scoring.progress).",
    )
    report = models.JSONField(
        default=dict, blank=True,
        help_text="Its evaluation beside the champion's on the same held-out problems: plot data (ROC, "
                  "calibration, best-of-N) per scorer (scoring.retrain.evaluation_report).",
    )
    layout = models.CharField(max_length=30, choices=LAYOUT_CHOICES, default="stepmark",
                              help_text="How the directory is loaded (scoring.prm.adapters).")
    layout_options = models.JSONField(default=dict, blank=True,
                                      help_text="The layout's options, e.g. {\"step_separator\": \"\\n\"} for token-classification.")
    registered_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
                                      related_name="+", help_text="Who registered it (null: trained here).")
    created_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["project", "-pk"]
        constraints = [
            models.UniqueConstraint(fields=["project"], condition=Q(is_champion=True), name="checkpoint_one_champion"),
            models.CheckConstraint(condition=~Q(is_champion=True) | Q(status="champion"),
                                   name="checkpoint_champion_status"),
        ]

    def __str__(self):
        return f"Checkpoint {self.pk} of {self.project} ({self.status})"


class GenerationRun(models.Model):
    """One request to run a generation: score the pool, then select into a new Generation.

    ``scored``/``total`` show progress while ``state`` is ``scoring``; ``scoring_started_at`` and
    ``scored_at_start`` (what an earlier, interrupted attempt had already scored) give the rate
    of this attempt, and so the time left. ``generation`` is set in the same transaction that selects,
    so a redelivered job sees the work is done.
    """

    QUEUED = "queued"
    SCORING = "scoring"
    SELECTING = "selecting"
    DONE = "done"
    CANCELLED = "cancelled"
    FAILED = "failed"
    STATE_CHOICES = [(s, s) for s in (QUEUED, SCORING, SELECTING, DONE, CANCELLED, FAILED)]
    OPEN_STATES = (QUEUED, SCORING, SELECTING)

    project = models.ForeignKey("labeling.Project", on_delete=models.CASCADE, related_name="generation_runs")
    generation = models.OneToOneField(
        "labeling.Generation", null=True, blank=True, on_delete=models.SET_NULL, related_name="run"
    )
    checkpoint = models.ForeignKey(
        Checkpoint, null=True, blank=True, on_delete=models.PROTECT, related_name="runs",
        help_text="The PRM that scores and selects (the champion when the run started).",
    )
    state = models.CharField(max_length=20, choices=STATE_CHOICES, default=QUEUED)
    size = models.PositiveIntegerField(help_text="Solutions to select.")
    strategy = models.CharField(
        max_length=20, blank=True,
        help_text="The project's selection_strategy when the run was started (empty: the project's when it selects).",
    )
    selection_mix = models.JSONField(default=dict, blank=True,
                                     help_text="The project's selection_mix with it (a mixture's shares).")
    scored = models.PositiveIntegerField(default=0)
    total = models.PositiveIntegerField(default=0)
    selected = models.PositiveIntegerField(default=0)
    scoring_started_at = models.DateTimeField(null=True, blank=True, help_text="When this scoring pass began.")
    scored_at_start = models.PositiveIntegerField(default=0, help_text="Solutions already scored when it began.")
    error = models.TextField(blank=True)
    task_id = models.CharField(max_length=255, blank=True)
    requested_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["project", "-pk"]
        indexes = [models.Index(fields=["project", "state"], name="generation_run_state_idx")]

    def __str__(self):
        return f"Generation run {self.pk} of {self.project} ({self.state})"


class SolutionScore(models.Model):
    """The score one checkpoint gave one solution (written in bulk, once per pair)."""

    solution = models.ForeignKey("labeling.Solution", on_delete=models.CASCADE, related_name="scores")
    # No index on the checkpoint alone: ``solution_score_once`` (checkpoint, solution) serves every
    # lookup by checkpoint, and the planner, which rarely has statistics on the checkpoint being
    # scored, took the lone index to read all its scores where a range of them was asked for
    # (scoring.shards.scored_among).
    checkpoint = models.ForeignKey(Checkpoint, on_delete=models.CASCADE, related_name="scores", db_index=False)
    score = models.FloatField(null=True, help_text="Aggregated over the scored steps; null when none was scored.")
    step_scores = models.JSONField(default=list, help_text="P(correct) per step; null for a step the model could not read "
                                   "(past the context, or too long for its sliding window).")
    step_uncertainty = models.JSONField(
        null=True, blank=True,
        help_text="Per step, the std of P(correct) over the MC-dropout passes (null: not measured).")
    uncertainty = models.FloatField(null=True, blank=True,
                                    help_text="The largest step uncertainty (null: not measured, or no step scored).")
    dropout_passes = models.PositiveSmallIntegerField(
        default=0, help_text="MC-dropout passes behind the uncertainty (0: not measured).")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["checkpoint", "solution"], name="solution_score_once"),
        ]

    def __str__(self):
        return f"{self.score} for solution {self.solution_id} by checkpoint {self.checkpoint_id}"


class ScoringShard(models.Model):
    """One slice of a generation run's candidate pool, scored by whichever GPU worker claims it.

    A run's pool is cut, in solution id order, into shards of ``STEPMARK_SHARD_SIZE`` pool
    solutions (``first_id``..``last_id``, ``size`` of them when planned); every worker that takes
    a ``scoring.tasks.score_shards`` task claims shards until none is left (``scoring.shards``).
    ``scored`` counts the shard's pool solutions the run's checkpoint has scored; the run's
    progress is the sum over its shards (``scoring.progress``). A worker holds a PostgreSQL
    advisory lock on the shard it scores, so the shard of a worker that died (its lock went with
    its database session) is claimed again by the next worker that asks; ``heartbeat_at`` (written
    after each batch) decides where there are no advisory locks (SQLite).
    """

    PENDING = "pending"
    CLAIMED = "claimed"
    DONE = "done"
    STATE_CHOICES = [(s, s) for s in (PENDING, CLAIMED, DONE)]

    run = models.ForeignKey(GenerationRun, on_delete=models.CASCADE, related_name="shards")
    index = models.PositiveIntegerField(help_text="0, 1, ... in solution id order.")
    first_id = models.BigIntegerField(help_text="The first pool solution's id.")
    last_id = models.BigIntegerField(help_text="The last pool solution's id (inclusive).")
    size = models.PositiveIntegerField(help_text="Pool solutions in the range when the run was planned.")
    scored = models.PositiveIntegerField(default=0)
    state = models.CharField(max_length=10, choices=STATE_CHOICES, default=PENDING)
    claimed_by = models.CharField(max_length=255, blank=True, help_text="The worker (host and process) scoring it.")
    claims = models.PositiveIntegerField(default=0, help_text="How many times it was claimed (more than 1: a worker died).")
    heartbeat_at = models.DateTimeField(null=True, blank=True, help_text="Its worker's last batch.")
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["run", "index"]
        constraints = [models.UniqueConstraint(fields=["run", "index"], name="scoring_shard_once")]

    def __str__(self):
        return f"Shard {self.index} of run {self.run_id} ({self.state})"


class SimulationRun(models.Model):
    """One replay simulation on the project's own labels (``scoring.simulations``): does selection pay off?

    ``config`` holds what was asked (strategies, rounds, per_round, seed_size, seed, heldout_fraction);
    ``result`` the simulator's report (``scoring.prm.simulate.simulate``: curves per strategy, savings
    against random) once ``done``; ``error`` why it failed.
    """

    QUEUED = "queued"
    RUNNING = "running"
    DONE = "done"
    FAILED = "failed"
    STATE_CHOICES = [(s, s) for s in (QUEUED, RUNNING, DONE, FAILED)]
    OPEN_STATES = (QUEUED, RUNNING)

    project = models.ForeignKey("labeling.Project", on_delete=models.CASCADE, related_name="simulation_runs")
    state = models.CharField(max_length=20, choices=STATE_CHOICES, default=QUEUED)
    config = models.JSONField(default=dict, blank=True, help_text="What was asked: strategies, rounds, per_round, "
                                "seed_size, seed, heldout_fraction.")
    result = models.JSONField(null=True, blank=True, help_text="The simulator's report once done: curves per "
                              "strategy (one point per round) and savings against random.")
    error = models.TextField(blank=True)
    task_id = models.CharField(max_length=255, blank=True)
    requested_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["project", "-pk"]
        indexes = [models.Index(fields=["project", "state"], name="simulation_run_state_idx")]

    def __str__(self):
        return f"Simulation run {self.pk} of {self.project} ({self.state})"


class JudgeSettings(models.Model):
    """A project's LLM judge: an OpenAI-compatible chat-completions endpoint that pre-labels steps.

    Set by a researcher (``scoring.judge_settings``); read by the worker's ``scoring.judge_job``.
    The API key is never stored: ``api_key_env`` names the environment variable of the workers
    that holds it, one of ``STEPMARK_JUDGE_KEY_VARS``.
    """

    project = models.OneToOneField("labeling.Project", on_delete=models.CASCADE, related_name="judge_settings")
    base_url = models.CharField(max_length=500, blank=True,
                                help_text="The endpoint's base URL, e.g. http://gpu-host:8000/v1 (vLLM) or "
                                          "https://api.openai.com/v1.")
    model = models.CharField(max_length=200, blank=True, help_text="The model name the endpoint serves.")
    prompt_template = models.TextField(blank=True, help_text="With {problem}, {steps} and {num_steps}; empty: the "
                                                             "PRM800K-style default (scoring.judge.DEFAULT_PROMPT).")
    prompt_version = models.CharField(max_length=50, default="prm800k-v1",
                                      help_text="A short name for the template, recorded in each label's source.")
    api_key_env = models.CharField(max_length=100, blank=True,
                                   help_text="The NAME of the workers' environment variable holding the API key "
                                             "(empty: no key, as for a local vLLM server).")
    concurrency = models.PositiveSmallIntegerField(default=4, help_text="Requests in flight at once.")
    rate_limit = models.PositiveIntegerField(default=60, help_text="Requests per minute at most (0: no limit).")
    budget = models.PositiveIntegerField(default=1000, help_text="Requests one job may send at most, retries "
                                                                 "included.")
    max_attempts = models.PositiveSmallIntegerField(default=3, help_text="Requests per solution at most: an answer "
                                                    "that cannot be parsed, a refusal, a 429 or a timeout is asked again.")
    timeout_s = models.FloatField(default=60.0, help_text="Seconds one request may take.")
    max_tokens = models.PositiveIntegerField(default=1024, help_text="The answer's length limit in tokens.")
    temperature = models.FloatField(default=0.0)
    updated_at = models.DateTimeField(auto_now=True)

    def __str__(self):
        return f"Judge of {self.project}: {self.model or 'not set'}"


class JudgeRun(models.Model):
    """One judge job (``scoring.judge_job``): pre-labels for a generation or a list of solutions.

    ``progress`` holds solutions done of total and requests used while it runs; ``result`` the
    outcome (steps labelled, unparseable, refused, errors; requests used; solutions skipped as
    already labelled or left over the budget); ``source`` the LabelSource its labels went to.
    """

    QUEUED = "queued"
    RUNNING = "running"
    DONE = "done"
    FAILED = "failed"
    STATE_CHOICES = [(s, s) for s in (QUEUED, RUNNING, DONE, FAILED)]
    OPEN_STATES = (QUEUED, RUNNING)

    project = models.ForeignKey("labeling.Project", on_delete=models.CASCADE, related_name="judge_runs")
    state = models.CharField(max_length=20, choices=STATE_CHOICES, default=QUEUED)
    generation = models.IntegerField(null=True, blank=True, help_text="The generation's number it judges (or null).")
    solution_ids = models.JSONField(default=list, blank=True, help_text="The solutions it judges, when no generation.")
    source = models.ForeignKey("labeling.LabelSource", null=True, blank=True, on_delete=models.SET_NULL,
                               related_name="+")
    progress = models.JSONField(default=dict, blank=True)
    result = models.JSONField(null=True, blank=True)
    error = models.TextField(blank=True)
    task_id = models.CharField(max_length=255, blank=True)
    requested_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["project", "-pk"]
        indexes = [models.Index(fields=["project", "state"], name="judge_run_state_idx")]

    def __str__(self):
        return f"Judge run {self.pk} of {self.project} ({self.state})"
