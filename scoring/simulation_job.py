"""The worker's side of a replay simulation (``scoring.simulations``): export, split, simulate, store."""
import dataclasses
import tempfile
from pathlib import Path

from django.utils import timezone

from labeling.exports import ExportFilters, write_export
from scoring.models import SimulationRun
from scoring.simulations import DEFAULTS


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
