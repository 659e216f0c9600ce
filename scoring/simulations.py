"""The replay simulator as a researcher's job: does the selection pay off on the project's own labels?

``start_simulation`` makes a queued ``SimulationRun`` (one open per project); the worker's
``scoring.tasks.simulate_selection`` calls ``run_simulation``: it exports the project's submitted
passes as PRM800K JSONL (``labeling.exports``, as a retrain does), holds out a seeded share of the
problems, and runs ``scoring.prm.simulate.simulate`` from the project's base model with the
project's train settings. The report (curves per strategy, savings against random) goes on the row.
"""
import dataclasses
import tempfile
from pathlib import Path

from django.db import transaction
from django.utils import timezone

from labeling.exports import ExportFilters, write_export
from labeling.models import Project
from scoring.models import SimulationRun
from scoring.prm import strategies
from scoring.runs import JobConflict

# The bounds of a request (the API validates them; the job checks the pool is large enough).
MAX_ROUNDS = 10
MAX_PER_ROUND = 1000
MAX_SEED_SIZE = 1000
DEFAULTS = {"strategies": [strategies.RANDOM, strategies.CONVINCING_WRONG], "rounds": 2, "per_round": 8,
            "seed_size": None, "seed": 0, "heldout_fraction": 0.2}


def start_simulation(project, config, *, user=None):
    """A new queued SimulationRun with ``config`` (validated); JobConflict when one is still open."""
    with transaction.atomic():
        Project.objects.select_for_update().filter(pk=project.pk).first()
        existing = SimulationRun.objects.filter(project=project, state__in=SimulationRun.OPEN_STATES).first()
        if existing is not None:
            raise JobConflict(f"Simulation run {existing.pk} is still {existing.state}.", existing)
        return SimulationRun.objects.create(
            project=project, config={**DEFAULTS, **config},
            requested_by=user if user is not None and user.is_authenticated else None)


def mark_failed(run_id, error):
    """Record why the simulation failed (the research page shows it)."""
    SimulationRun.objects.filter(pk=run_id, state__in=SimulationRun.OPEN_STATES).update(
        state=SimulationRun.FAILED, error=str(error)[:10000], finished_at=timezone.now())


def run_simulation(run_id, *, task_id=""):
    """Run the queued (or interrupted) simulation ``run_id``; returns the row (None if gone or done)."""
    from scoring import worker
    from scoring.champions import TRAINING_NEUTRAL, base_model
    from scoring.prm import simulate
    from scoring.prm.train import TrainConfig

    run = SimulationRun.objects.filter(pk=run_id, state__in=SimulationRun.OPEN_STATES).select_related("project").first()
    if run is None:
        return None
    SimulationRun.objects.filter(pk=run.pk).update(state=SimulationRun.RUNNING, started_at=timezone.now(),
                                                   **({"task_id": task_id} if task_id else {}))
    project, config = run.project, {**DEFAULTS, **run.config}
    seed = config["seed"]
    try:
        train = TrainConfig(**{**(project.train_settings or {}), "seed": seed})
    except TypeError as exc:
        raise ValueError(f"Bad train_settings on the project: {exc}") from None
    with tempfile.TemporaryDirectory(prefix="stepmark-simulate-") as tmp:
        export = Path(tmp) / "prm800k.jsonl"
        write_export("prm800k", ExportFilters(project_id=project.pk), export)
        if not export.stat().st_size:
            raise ValueError("The project has no submitted passes to replay yet.")
        pool = simulate.read_pool(export, neutral=TRAINING_NEUTRAL)
    pool, heldout, _ = simulate.split_pool(pool, fraction=config["heldout_fraction"], seed=seed)
    worker._limit_threads()
    base = base_model(project)
    report = simulate.simulate(
        pool, heldout, names=config["strategies"], rounds=config["rounds"], per_round=config["per_round"],
        seed_size=config["seed_size"] or config["per_round"], seed=seed, base=base, config=train,
        device=worker.device())
    report.update(base=str(base), neutral=TRAINING_NEUTRAL, heldout_fraction=config["heldout_fraction"],
                  train_settings=dataclasses.asdict(train))
    SimulationRun.objects.filter(pk=run.pk).update(state=SimulationRun.DONE, result=report, error="",
                                                   finished_at=timezone.now())
    run.refresh_from_db()
    return run
