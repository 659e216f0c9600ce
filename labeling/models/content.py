from django.db import models
from django.db.models import F, Q


class Problem(models.Model):
    """A math problem with its reference solution and answer (MATH style, LaTeX in ``$``).

    ``content_hash`` identifies the problem inside a project (statement, reference solution and
    answer), which makes imports idempotent.
    """

    # problem_unique_content leads with the project: no index of its own.
    project = models.ForeignKey("labeling.Project", on_delete=models.CASCADE, related_name="problems", db_index=False)
    problem = models.TextField()
    ground_truth_solution = models.TextField(null=True, blank=True)
    ground_truth_answer = models.TextField(null=True, blank=True)
    subject = models.CharField(max_length=100, blank=True)
    level = models.SmallIntegerField(null=True, blank=True)
    source_id = models.CharField(
        max_length=200, blank=True, help_text="Identifier in the source data set (MATH unique_id)."
    )
    content_hash = models.CharField(max_length=64)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["project", "content_hash"], name="problem_unique_content"),
        ]

    def __str__(self):
        return self.problem[:80]


class Generation(models.Model):
    """One active-learning round of a project; number -1 holds the screening items."""

    # generation_unique_number leads with the project: no index of its own.
    project = models.ForeignKey("labeling.Project", on_delete=models.CASCADE, related_name="generations",
                                db_index=False)
    number = models.IntegerField()
    strategy = models.CharField(
        max_length=20, blank=True,
        help_text="The selection strategy that chose it (Project.selection_strategy); empty when not recorded "
        "(screening, or chosen before strategies were recorded: convincing_wrong then).",
    )
    selection = models.JSONField(
        default=dict, blank=True,
        help_text="How it was chosen: mix (a mixture's shares), wrong_share, per_problem_cap, seed (random's) "
        "and dropout_passes (uncertainty's MC-dropout passes; 0: not measured).",
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["project", "number"]
        constraints = [
            models.UniqueConstraint(fields=["project", "number"], name="generation_unique_number"),
            models.CheckConstraint(condition=Q(number__gte=-1), name="generation_number_min"),
        ]

    def __str__(self):
        return f"{self.project} generation {self.number}"


# The queue's order among solutions of the same rank (all the unselected ones): the id
# scrambled by a fixed permutation of 0..2**32-1 (multiplying by 2**32 over the golden ratio),
# so that a problem's candidates, imported one after another, are not served back to back and
# a gold item breaks no visible run of one problem. Ids are never shown to annotators.
QUEUE_KEY_MULTIPLIER = 2654435761
QUEUE_KEY_MODULUS = 2**32


def queue_key(column="id"):
    """The queue key of the solution whose id is ``column``, as SQL (solution_open_idx's last part)."""
    return f"(({column} * {QUEUE_KEY_MULTIPLIER}) % {QUEUE_KEY_MODULUS})"


class Solution(models.Model):
    """A model-written solution: ordered steps, a final answer and its grade.

    ``project`` repeats ``problem.project`` so that the queue's indexes cover one table.
    ``has_pre_generated`` marks a phase-2 style solution written in full before anyone rated
    it (exported as ``pre_generated_steps``); phase-1 solutions are built step by step.
    When the PRM chose the solution, ``generation``, ``selection_rank`` and
    ``verifier_score`` say when, in which order and with what score, ``selection_reason`` why.
    """

    # No single-column indexes of their own: solution_unique_content and the queue's indexes
    # lead with the project, solution_problem_idx is the problem's. The queue rewrites a
    # solution's counter on every hand-out, and that update writes every index of the row.
    project = models.ForeignKey("labeling.Project", on_delete=models.CASCADE, related_name="solutions", db_index=False)
    problem = models.ForeignKey(Problem, on_delete=models.CASCADE, related_name="solutions", db_index=False)
    generator = models.CharField(max_length=200, blank=True)
    final_answer = models.TextField(null=True, blank=True)
    is_correct = models.BooleanField(null=True, help_text="Final answer graded against the ground truth.")
    has_pre_generated = models.BooleanField(default=False)
    generation = models.ForeignKey(
        Generation, null=True, blank=True, on_delete=models.PROTECT, related_name="solutions"
    )
    selection_rank = models.PositiveIntegerField(null=True, blank=True)
    verifier_score = models.FloatField(null=True, blank=True)
    selection_reason = models.JSONField(
        null=True, blank=True,
        help_text="Why the PRM chose it: strategy, score, uncertainty (null: not measured) and answer "
        "(right, wrong or ungraded) as they stood then (scoring.prm.strategies.reason).",
    )
    is_gold = models.BooleanField(default=False, help_text="Quality-control item served to everyone.")
    is_screening = models.BooleanField(default=False, help_text="Part of the screening set.")
    num_steps = models.PositiveIntegerField(default=0)
    content_hash = models.CharField(max_length=64)
    created_at = models.DateTimeField(auto_now_add=True)
    # Denormalised count of active + submitted assignments, kept by labeling/work/queue.py under
    # the solution's row lock; the queue recounts before trusting it (see queue.py).
    live_assignments = models.PositiveIntegerField(default=0)
    # live_assignments >= the project's overlap, written with it (queue._set_live) and when the
    # overlap changes (Project.save; projects.full_now): full solutions leave solution_open_idx, so the queue reads
    # open work in order in one index scan. A default in the database too: bulk writers need not name it.
    is_full = models.BooleanField(default=False, db_default=False)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["project", "content_hash"], name="solution_unique_content"),
            models.CheckConstraint(
                condition=Q(selection_rank__isnull=True) | Q(generation__isnull=False),
                name="solution_rank_needs_generation",
            ),
        ]
        indexes = [
            # The queue: newest generation first, then selection rank, gold apart.
            models.Index(fields=["project", "is_gold", "generation", "selection_rank"], name="solution_queue_idx"),
            models.Index(fields=["problem"], name="solution_problem_idx"),
            # The queue's claim: open ordinary solutions of one generation, in queue order (rank,
            # then queue key); full ones are not in it, so the scan never walks past them.
            models.Index(
                F("project"), F("generation"), F("selection_rank"),
                (F("id") * QUEUE_KEY_MULTIPLIER) % QUEUE_KEY_MODULUS,
                condition=Q(is_gold=False, is_screening=False, is_full=False),
                name="solution_open_idx",
            ),
            # A random gold item: the first by queue key from a random point (queue._gold_beside_open).
            models.Index(
                F("project"), (F("id") * QUEUE_KEY_MULTIPLIER) % QUEUE_KEY_MODULUS,
                condition=Q(is_gold=True, is_screening=False),
                name="solution_gold_idx",
            ),
        ]

    def __str__(self):
        return f"Solution {self.pk} of problem {self.problem_id}"


class Step(models.Model):
    """One candidate text at one position of a solution.

    Alternative 0 at each position is the solution's own step. Higher alternatives are other
    candidate completions shown at that position (PRM800K's alternatives), and a step an
    annotator wrote themselves has ``source='human'`` and its ``author`` assignment.
    """

    MODEL = "model"
    HUMAN = "human"

    # step_unique_slot leads with the solution: no index of its own.
    solution = models.ForeignKey(Solution, on_delete=models.CASCADE, related_name="steps", db_index=False)
    position = models.PositiveIntegerField()
    alternative = models.PositiveIntegerField(default=0)
    text = models.TextField()
    source = models.CharField(max_length=50, default=MODEL)
    author = models.ForeignKey(
        "labeling.Assignment", null=True, blank=True, on_delete=models.CASCADE, related_name="written_steps"
    )

    class Meta:
        ordering = ["solution", "position", "alternative"]
        constraints = [
            models.UniqueConstraint(
                fields=["solution", "position", "alternative"], name="step_unique_slot"
            ),
        ]

    def __str__(self):
        return f"{self.solution_id}:{self.position}.{self.alternative}"
