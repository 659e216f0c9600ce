"""A project's champion PRM, the base model its PRMs are built on, and where their checkpoints live.

Used by the generation jobs (``scoring.jobs``: a run scores with the champion) and by the
retrain (``scoring.retrain``: a new checkpoint is judged against it). Torch is imported only
inside ``ensure_champion``'s first build, so the web process may import this module.
"""
from pathlib import Path

from django.conf import settings
from django.db import IntegrityError, transaction
from django.utils import timezone

from scoring import worker
from labeling.locks import CHAMPION_LOCK, advisory_lock
from scoring.models import Checkpoint
from scoring.standing import TRAINING_NEUTRAL, champion, make_champion

__all__ = ["TRAINING_NEUTRAL", "base_model", "champion", "checkpoint_root", "ensure_champion"]


def base_model(project):
    """The directory the project's PRMs are built on."""
    if project.base_model_path:
        return Path(project.base_model_path)
    from scoring.prm.model import default_base_model

    return default_base_model()


def checkpoint_root(project):
    """The directory that holds the project's checkpoints."""
    return Path(settings.STEPMARK_CHECKPOINT_DIR) / f"project-{project.pk}"


def ensure_champion(project):
    """The champion, building the initial one when the project has none.

    The initial PRM is the newest PRM registered for the project and validated by a worker
    (``scoring.registry``, any layout) when there is one; else the project's base model: used as
    is when the base is already a Stepmark checkpoint, else the backbone with a fresh (seeded)
    head, saved under the checkpoint directory. The directory is written before the row, so no
    row ever points at a missing checkpoint.
    """
    found = champion(project)
    if found is not None:
        return found
    with advisory_lock(CHAMPION_LOCK, project.pk, wait=True):
        found = champion(project)
        if found is not None:
            return found
        registered = Checkpoint.objects.filter(project=project, status=Checkpoint.REGISTERED).order_by("-pk").first()
        if registered is not None:
            return make_champion(registered, reason=f"Initial PRM: the registered {registered.layout} checkpoint.")
        from scoring.prm.checkpoint import read_meta

        base = base_model(project)
        try:
            read_meta(base)
            path, how = base, "the project's base checkpoint, used as is"
        except (FileNotFoundError, ValueError):
            path, how = _build_initial(project, base), "the base model with an untrained head"
        try:
            with transaction.atomic():
                return Checkpoint.objects.create(
                    project=project, path=str(path), base_model=str(base), status=Checkpoint.CHAMPION,
                    is_champion=True, reason=f"Initial PRM: {how}.", finished_at=timezone.now(),
                )
        except IntegrityError:  # another process (without advisory locks) was first
            return champion(project)


def _build_initial(project, base):
    from scoring.prm.checkpoint import save_checkpoint
    from scoring.prm.model import new_prm

    worker._limit_threads()
    prm = new_prm(base, device=worker.device(), seed=0)
    meta = {"base_model": str(base), "initial": True, "neutral": TRAINING_NEUTRAL, "aggregation": "prod"}
    return save_checkpoint(prm, checkpoint_root(project) / "initial", meta=meta)

