"""How far the loop's long jobs are, as the researcher's page shows it: rate and time left.

- A generation run's progress is summed over its shards (``scoring.shards``: every GPU worker
  scores some), and its rate is that of its current scoring pass: solutions scored since
  ``scoring_started_at`` (less what an interrupted pass had already scored) per second; the
  time left is what remains at that rate. Worked out when asked (``run_pace``), from the
  rows the worker writes after each batch.
- A retrain writes its phase (exporting, training, evaluating, saving) on its Checkpoint's
  ``progress``, and while training the step, total steps, loss and the time left. Steps come
  many per second on a small model, so ``RetrainProgress.step`` writes at most once every
  ``every_s`` seconds (and on the last step).

Both go by ``labeling.progress.pace``, as an import job does. No torch here: the web process
imports this module.
"""
import time

from django.db.models import Count, Q, Sum
from django.utils import timezone

from labeling.progress import pace
from scoring.models import Checkpoint, GenerationRun, ScoringShard

# Phases of a retrain, in order (``Checkpoint.progress["phase"]``).
PHASES = ("exporting", "training", "evaluating", "saving")


def run_shards(run):
    """A run's shards summed: ``{"shards", "done", "claimed", "scored", "total"}`` (zeros before planning)."""
    counts = ScoringShard.objects.filter(run_id=run.pk).aggregate(
        shards=Count("pk"), done=Count("pk", filter=Q(state=ScoringShard.DONE)),
        claimed=Count("pk", filter=Q(state=ScoringShard.CLAIMED)), scored=Sum("scored"), total=Sum("size"))
    return {key: value or 0 for key, value in counts.items()}


def run_pace(run, now=None, shards=None):
    """The ``Pace`` (labeling/progress.py) of a generation run: solutions scored of its pool (summed
    over its shards, whichever workers score them), and while it scores the rate of this pass and
    the time left at it (None otherwise). ``shards``: ``run_shards(run)`` when the caller has it."""
    shards = run_shards(run) if shards is None else shards
    scored, total = (shards["scored"], shards["total"]) if shards["shards"] else (run.scored, run.total)
    scoring = run.state == GenerationRun.SCORING and run.scoring_started_at is not None
    elapsed = ((now or timezone.now()) - run.scoring_started_at).total_seconds() if scoring else 0
    return pace(scored, total, elapsed, counted_from=run.scored_at_start)


class RetrainProgress:
    """Writes one retrain's phase and training steps on its Checkpoint row (throttled)."""

    def __init__(self, checkpoint_id, *, every_s=2.0, clock=time.monotonic):
        self.checkpoint_id, self.every_s, self.clock = checkpoint_id, every_s, clock
        self.phase_started = self.last_write = self.first = None
        self.state = {}

    def phase(self, name, **fields):
        """Enter phase ``name`` (one of ``PHASES``); written at once."""
        assert name in PHASES, name
        self.phase_started, self.first = self.clock(), None
        self.state = {"phase": name, "phase_started_at": timezone.now().isoformat(), **fields}
        self._write()

    def step(self, step, total_steps, loss):
        """A training step done: written when ``every_s`` passed since the last write, or on the last step."""
        now = self.clock()
        if self.first is None:
            self.first = (step, now)  # the pace from here on: loading the model and encoding are behind
        if step < total_steps and self.last_write is not None and now - self.last_write < self.every_s:
            return False
        first_step, first_at = self.first
        if step > first_step:
            eta = pace(step, total_steps, now - first_at, counted_from=first_step).eta_s
        else:  # one step so far: the phase's pace, model loading included, is all there is
            eta = pace(step, total_steps, now - self.phase_started).eta_s if self.phase_started is not None else None
        self.state.update(step=step, total_steps=total_steps, loss=loss, eta_s=eta)
        self._write()
        return True

    def _write(self):
        self.last_write = self.clock()
        self.state["updated_at"] = timezone.now().isoformat()
        Checkpoint.objects.filter(pk=self.checkpoint_id).update(progress=dict(self.state))
