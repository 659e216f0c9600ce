"""Registering a PRM from a directory, and making a checkpoint the champion: the web side (no torch).

A researcher names a directory the workers can read and its layout (``auto``: told from the files).
``register`` checks the files the layout needs without loading anything (``scoring.prm.layouts``:
JSON and safetensors headers only), stores a ``Checkpoint`` row ``validating`` with the layout,
and queues ``scoring.tasks.validate_checkpoint``: a worker loads it, finds its step token and
scores a smoke example (``scoring.registration``), then marks it ``registered`` or ``invalid``
with the missing file, tensor or token. From then on it is a checkpoint like any other: it can be
made the champion (``scoring.standing.make_champion``), evaluated against the champion (``scoring.tasks.evaluate_checkpoint``),
and a project without a champion starts from it (``scoring.champions.ensure_champion``).

Used by the researcher API (``scoring.api``) and the ``register_prm`` command.
"""
from django.utils import timezone

from labeling.errors import DomainError
from labeling.outages import queued_or_failed
from scoring.standing import NotAllowed, make_champion, passes_count
from scoring.models import Checkpoint
from scoring.prm.layouts import AUTO, LAYOUTS, LayoutError, inspect

# Statuses a checkpoint may be evaluated against the champion from.
EVALUATE_FROM = (Checkpoint.REGISTERED, Checkpoint.REJECTED, Checkpoint.CHAMPION)


def layout_options(layout, step_separator=None):
    """The options stored with the layout: only ``token-classification`` takes one (its separator)."""
    if step_separator in (None, ""):
        return {}
    if layout != "token-classification":
        raise DomainError("Only the token-classification layout takes a step separator.", field="step_separator")
    if len(step_separator) > 32:
        raise DomainError("A step separator is a single token: 32 characters at most.", field="step_separator")
    return {"step_separator": step_separator}


def register(project, path, *, layout=AUTO, step_separator=None, champion=False, user=None, enqueue=True):
    """Store a ``validating`` checkpoint for the PRM at ``path`` and queue its validation.

    Raises ``DomainError`` (field ``path``, ``layout`` or ``step_separator``) naming what the
    directory lacks. ``champion``: make it the champion once a worker has validated it.
    ``enqueue=False`` leaves the validation to the caller (the command's ``--here``).
    """
    path = str(path).strip()
    try:
        found = inspect(path, layout)
    except LayoutError as exc:
        raise DomainError(str(exc), field="layout" if str(exc).startswith("Unknown layout") else "path") from exc
    options = layout_options(found, step_separator)
    checkpoint = Checkpoint.objects.create(
        project=project, path=path, base_model=path, layout=found, layout_options=options,
        status=Checkpoint.VALIDATING, registered_by=user, passes=passes_count(project),  # a retrain counts from here
        metrics={"registered": {"requested_layout": layout, "champion_when_valid": bool(champion)}},
        reason=f"Registered from {path} as {found}; waiting for a worker to load it.",
    )
    if enqueue:
        from scoring import tasks

        sent = queued_or_failed(lambda: tasks.validate_checkpoint.delay(checkpoint.pk), lambda reason: (
            Checkpoint.objects.filter(pk=checkpoint.pk).update(status=Checkpoint.INVALID, reason=reason,
                                                               finished_at=timezone.now())))
        Checkpoint.objects.filter(pk=checkpoint.pk).update(task_id=sent.id)
        checkpoint.refresh_from_db()
    return checkpoint


def queue_evaluation(checkpoint):
    """Queue the held-out evaluation of ``checkpoint`` against the champion (promoted when better)."""
    if checkpoint.status not in EVALUATE_FROM:
        raise NotAllowed(f"Checkpoint {checkpoint.pk} is {checkpoint.status}; only a registered, rejected or "
                         "champion checkpoint can be evaluated.")
    if checkpoint.is_champion:
        raise NotAllowed(f"Checkpoint {checkpoint.pk} is the champion: there is nothing to evaluate it against.")
    from scoring import tasks

    return tasks.evaluate_checkpoint.delay(checkpoint.pk)


__all__ = ["AUTO", "LAYOUTS", "register", "make_champion", "queue_evaluation", "NotAllowed", "layout_options"]
