"""Celery tasks of the PRM worker (queue ``gpu`` by the ``scoring.tasks.*`` route in settings).

Thin wrappers over ``scoring.jobs`` and ``scoring.retrain``. Tasks are acknowledged late
(settings), so a task whose worker dies is redelivered; the jobs are idempotent, so running
one twice is safe. A generation run also runs again after an outage (``RetriedOnOutage``); a
retrain that failed is queued again by the hourly ``retrain_all_due`` while the project is due.
A task that fails for good writes the error on its run or checkpoint row, where the
researcher's page shows it, and then raises so that the worker logs it too.

Names other modules rely on (the beat schedule, the researcher API):
``scoring.tasks.run_generation(run_id, pool_limit=None)`` (which queues ``scoring.tasks.score_shards(run_id)``
for the other workers), ``scoring.tasks.retrain_if_due(project_id, force=False)``,
``scoring.tasks.retrain_all_due()``, and for registered PRMs (``scoring.registry``)
``scoring.tasks.validate_checkpoint(checkpoint_id)`` and ``scoring.tasks.evaluate_checkpoint(checkpoint_id)``;
``scoring.tasks.simulate_selection(run_id)`` for the replay simulator (``scoring.simulations``);
``scoring.judge_tasks.run_judge(run_id)``, the LLM judge's pre-labels, registered here but on ``default``.
"""
from celery import group, shared_task

from labeling.outages import RetriedOnOutage, will_retry
from scoring import jobs, retrain
# The judge's job runs on the default queue (its name is outside scoring.tasks.*): imported here
# so that workers register it.
from scoring.judge_tasks import run_judge  # noqa: F401


@shared_task(bind=True, name="scoring.tasks.run_generation", base=RetriedOnOutage)
def run_generation(self, run_id, pool_limit=None):
    """Plan the pool's shards (its first ``pool_limit`` solutions if given), queue ``score_shards``
    for the other GPU workers, score shards here too, and select when all are in (GenerationRun ``run_id``).

    Queued once per run, so an outage runs it again (the scores written so far are kept).
    """
    try:
        run = jobs.run_generation(run_id, task_id=self.request.id or "", pool_limit=pool_limit, fan_out=_fan_out)
    except Exception as exc:
        if not will_retry(self, exc):
            jobs.mark_run_failed(run_id, f"{type(exc).__name__}: {exc}")
        raise
    return None if run is None else {"run": run.pk, "state": run.state, "selected": run.selected}


def _fan_out(run, shards):
    """One ``score_shards`` task per shard beyond the one this worker starts on: as many workers as
    there are shards may join; a task that finds no shard left ends at once."""
    group(score_shards.s(run.pk) for _ in range(shards - 1)).apply_async()


@shared_task(bind=True, name="scoring.tasks.score_shards", base=RetriedOnOutage)
def score_shards(self, run_id):
    """Score the shards of GenerationRun ``run_id`` this worker can claim; select if they are all in.

    Acknowledged late like every task here: a worker that dies is redelivered its task, and its
    shard (free as soon as its database session is gone) is claimed by whichever worker asks first.
    """
    try:
        run = jobs.score_shards(run_id)
    except Exception as exc:
        if not will_retry(self, exc):
            jobs.mark_run_failed(run_id, f"{type(exc).__name__}: {exc}")
        raise
    return None if run is None else {"run": run.pk, "state": run.state, "selected": run.selected}


@shared_task(bind=True, name="scoring.tasks.retrain_if_due")
def retrain_if_due(self, project_id, force=False):
    """Retrain the project's PRM when enough new passes arrived (or ``force``); promote if better.

    A failure is recorded on the checkpoint row by ``retrain.retrain_if_due`` itself.
    """
    checkpoint = retrain.retrain_if_due(project_id, force=force, task_id=self.request.id or "")
    return None if checkpoint is None else {"checkpoint": checkpoint.pk, "status": checkpoint.status}


@shared_task(name="scoring.tasks.retrain_all_due")
def retrain_all_due():
    """For beat: queue ``retrain_if_due`` for every active project that is due or was cut off."""
    from labeling.models import Project
    from scoring.models import Checkpoint

    queued = []
    for project in Project.objects.filter(is_active=True).order_by("pk"):
        interrupted = Checkpoint.objects.filter(project=project, status=Checkpoint.TRAINING).exists()
        if interrupted or retrain.retrain_due(project):
            retrain_if_due.delay(project.pk)
            queued.append(project.pk)
    return queued


@shared_task(bind=True, name="scoring.tasks.validate_checkpoint")
def validate_checkpoint(self, checkpoint_id):
    """Load a registered checkpoint, find its step token and score a smoke example (``scoring.registration``).

    A load error is the outcome (``invalid``, the reason naming what is missing), not a failure of the task.
    """
    from scoring import registration

    checkpoint = registration.validate_registration(checkpoint_id)
    return None if checkpoint is None else {"checkpoint": checkpoint.pk, "status": checkpoint.status}


@shared_task(bind=True, name="scoring.tasks.evaluate_checkpoint")
def evaluate_checkpoint(self, checkpoint_id):
    """Evaluate a checkpoint against the champion on the held-out problems; promote it when better."""
    from scoring import registration

    checkpoint = registration.evaluate_against_champion(checkpoint_id)
    return None if checkpoint is None else {"checkpoint": checkpoint.pk, "status": checkpoint.status}


@shared_task(bind=True, name="scoring.tasks.simulate_selection")
def simulate_selection(self, run_id):
    """Replay the selection strategies on the project's own labels (SimulationRun ``run_id``,
    ``scoring.simulations``); a failure is written on the row, then raised."""
    from scoring import simulation_job, simulations

    try:
        run = simulation_job.run_simulation(run_id, task_id=self.request.id or "")
    except Exception as exc:
        simulations.mark_failed(run_id, f"{type(exc).__name__}: {exc}")
        raise
    return None if run is None else {"simulation": run.pk, "state": run.state}
