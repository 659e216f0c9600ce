"""A registered PRM in the worker: validating it, and evaluating a checkpoint against the champion.

The web side (``scoring.registry``) stores the row and queues these; the Celery tasks in
``scoring.tasks`` only call them. Every layout is loaded by ``scoring.prm.adapters`` (the worker's
cache, ``scoring.worker.get_prm``) and scored by the one scorer, so nothing here depends on the
layout. Both are safe to run twice: validation acts only on a ``validating`` row, an evaluation
writes its figures and judges once more.
"""
import tempfile
from pathlib import Path

from django.utils import timezone

from labeling.exports import ExportFilters, write_export
from labeling.locks import RETRAIN_LOCK, advisory_lock
from scoring import worker
from scoring.champions import TRAINING_NEUTRAL, champion
from scoring.models import Checkpoint
from scoring.progress import RetrainProgress
from scoring.standing import make_champion


def validate_registration(checkpoint_id):
    """Load the registered checkpoint, find its step token, score the smoke example; store the outcome.

    ``registered`` with ``metrics["validation"]`` (layout, step token, context, smoke scores), or
    ``invalid`` with the error naming what is missing in ``reason``. A registration that asked
    for it becomes the champion when valid. Returns the row (None when there is none).
    """
    checkpoint = Checkpoint.objects.filter(pk=checkpoint_id).first()
    if checkpoint is None or checkpoint.status != Checkpoint.VALIDATING:
        return checkpoint
    from scoring.prm.adapters import smoke_check
    from scoring.prm.layouts import inspect

    try:
        layout = inspect(checkpoint.path, checkpoint.layout)  # the files again, as this worker sees them
        # loaded into the worker's cache: a PRM made the champion next is already warm here
        found = {"layout": layout, "options": checkpoint.layout_options or {},
                 **smoke_check(worker.get_prm(checkpoint), checkpoint.path)}
    except Exception as exc:  # every load error is the researcher's to read: a file, a tensor, a token
        Checkpoint.objects.filter(pk=checkpoint.pk, status=Checkpoint.VALIDATING).update(
            status=Checkpoint.INVALID, reason=f"Not usable: {_message(exc)}"[:10000], finished_at=timezone.now())
        checkpoint.refresh_from_db()
        return checkpoint
    metrics = {**checkpoint.metrics, "validation": found}
    scores = ", ".join(f"{p:.3f}" for p in found["smoke_scores"])
    Checkpoint.objects.filter(pk=checkpoint.pk, status=Checkpoint.VALIDATING).update(
        status=Checkpoint.REGISTERED, metrics=metrics, finished_at=timezone.now(),
        reason=f"Registered: {found['layout']} layout, step token {found['step_token']!r}, context "
               f"{found['max_length']} tokens; smoke example scored {scores}.")
    checkpoint.refresh_from_db()
    if (checkpoint.metrics.get("registered") or {}).get("champion_when_valid"):
        checkpoint = make_champion(checkpoint, reason=f"{checkpoint.reason} Made the champion on registration.")
    return checkpoint


def _message(exc):
    text = " ".join(str(exc).split())
    return text if isinstance(exc, ValueError) else f"{type(exc).__name__}: {text}"


def evaluate_against_champion(checkpoint_id):
    """Score the project's held-out problems with ``checkpoint`` and with the champion; judge it.

    The same evaluation and rule as a retrain's (``scoring.retrain``: ``evaluate``, the stable
    held-out split, ``promote`` and its gate): the figures and the report go on the row, and the
    checkpoint becomes the champion when the gate lets it past the champion, else ``rejected``
    with the reason. Returns the row (None when there is none or it cannot be judged now).
    """
    from scoring.prm.data import read_prm800k
    from scoring.prm.splits import split_by_problem
    from scoring.retrain import HELDOUT_FRACTION, evaluate, heldout_candidates, paired_heldout, promote

    checkpoint = Checkpoint.objects.filter(pk=checkpoint_id).select_related("project").first()
    if checkpoint is None or checkpoint.is_champion or checkpoint.status not in (
            Checkpoint.REGISTERED, Checkpoint.REJECTED, Checkpoint.CHAMPION):
        return checkpoint
    project = checkpoint.project
    with advisory_lock(RETRAIN_LOCK, project.pk, wait=True):  # not beside a retrain of the same project
        progress = RetrainProgress(checkpoint.pk)
        progress.phase("exporting")
        with tempfile.TemporaryDirectory(prefix="stepmark-evaluate-") as tmp:
            export = Path(tmp) / "prm800k.jsonl"
            write_export("prm800k", ExportFilters(project_id=project.pk), export)
            examples = read_prm800k(export, neutral=TRAINING_NEUTRAL)
        _train, heldout = split_by_problem(examples, fraction=HELDOUT_FRACTION)  # the retrain's split
        if not heldout:  # nothing to judge on: it stays as it was, and says why
            Checkpoint.objects.filter(pk=checkpoint.pk, status=Checkpoint.REGISTERED).update(
                reason="Not evaluated: no held-out problem of the project is rated yet.")
            checkpoint.refresh_from_db()
            return checkpoint
        current = champion(project)
        progress.phase("evaluating")
        old = (None, {}, None)
        candidates = heldout_candidates(project, heldout)
        new = evaluate(worker.get_prm(checkpoint), heldout, candidates)
        if current is not None:
            old = evaluate(worker.get_prm(current), heldout, candidates)
        problems = len({e.problem for e in heldout})
        report = {"heldout_problems": problems, "metric": project.retrain_metric,
                  "champion_id": current.pk if current else None, "challenger": new[1], "champion": old[1]}
        metrics = {**checkpoint.metrics, "metric": project.retrain_metric, "heldout_problems": problems,
                   "heldout": new[0], "champion_id": current.pk if current else None, "champion_heldout": old[0],
                   "evaluated_at": timezone.now().isoformat()}
        Checkpoint.objects.filter(pk=checkpoint.pk).update(metrics=metrics, report=report)
        checkpoint.refresh_from_db()
        return promote(checkpoint, current, paired_heldout(heldout, new[2], old[2]))
