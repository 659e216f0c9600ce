"""The replay simulator as a researcher's job: does the selection pay off on the project's own labels?

The web side (no torch): ``start_simulation`` makes a queued ``SimulationRun`` (one open per
project) with its settings' defaults and bounds. The worker's ``scoring.tasks.simulate_selection``
calls ``scoring.simulation_job.run_simulation``: it exports the project's submitted
passes as PRM800K JSONL (``labeling.exports``, as a retrain does), holds out a seeded share of the
problems, and runs ``scoring.prm.simulate.simulate`` from the project's base model with the
project's train settings. The report (curves per strategy, savings against random) goes on the row.
"""
from django.db import transaction
from django.utils import timezone

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
