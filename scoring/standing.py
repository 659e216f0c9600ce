"""Making a checkpoint the champion by hand, on the web side (no torch, no model).

``make_champion`` is the one way a checkpoint becomes the champion outside a retrain's judgement
(``scoring.retrain.promote``): the researcher's "Make champion" (``scoring.api``), a registration
that asked for it once valid (``scoring.registration``), and a project's first champion taken
from a registered PRM (``scoring.champions.ensure_champion``).
"""
from django.db import transaction
from django.utils import timezone

from labeling import audit
from labeling.errors import DomainError
from labeling.models import Assignment, Project
from scoring.models import Checkpoint

# How a rating of 0 (neutral) trains the project's PRMs (formats.prm800k.NEUTRAL_POLICIES): as
# correct, the PRM800K paper's default. The retrain, a registered PRM's evaluation and the
# people-vs-PRM list (scoring.people) all read people's ratings this way.
TRAINING_NEUTRAL = "positive"


def champion(project):
    """The project's current champion Checkpoint, or None."""
    return Checkpoint.objects.filter(project=project, is_champion=True).first()


def passes_count(project):
    """Submitted passes of the project (screening passes do not train): a checkpoint's ``passes``
    when it is trained or registered, from which the next retrain counts (``retrain.retrain_due``)."""
    return Assignment.objects.filter(project=project, state=Assignment.SUBMITTED, is_screening=False).count()


# Statuses a checkpoint may be made the champion from by hand: built to the end and loadable.
CHAMPION_FROM = (Checkpoint.REGISTERED, Checkpoint.REJECTED, Checkpoint.CHAMPION)
class NotAllowed(DomainError):
    """The checkpoint is not in a state for what was asked (a 409)."""

    def __init__(self, message):
        super().__init__(message, status=409)


def make_champion(checkpoint, *, reason=None, by=None):
    """Make ``checkpoint`` the project's champion (the current one keeps its row, no longer current).

    Only a loadable checkpoint may be: registered, rejected, or a former champion. Logged as a
    promotion by ``by`` (None: the system, as on registration).
    """
    with transaction.atomic():
        checkpoint = Checkpoint.objects.select_for_update().get(pk=checkpoint.pk)
        if checkpoint.is_champion:
            return checkpoint
        if checkpoint.status not in CHAMPION_FROM:
            raise NotAllowed(f"Checkpoint {checkpoint.pk} is {checkpoint.status}; only a registered, rejected or "
                             "former champion checkpoint can be made the champion.")
        Project.objects.select_for_update().filter(pk=checkpoint.project_id).first()  # one champion change at a time
        former = Checkpoint.objects.filter(project=checkpoint.project_id, is_champion=True).values_list(
            "pk", flat=True).first()
        Checkpoint.objects.filter(project=checkpoint.project_id, is_champion=True).update(is_champion=False)
        was = checkpoint.status
        checkpoint.status, checkpoint.is_champion = Checkpoint.CHAMPION, True
        checkpoint.reason = reason or f"Made the champion by hand ({checkpoint.layout} layout)."
        checkpoint.finished_at = checkpoint.finished_at or timezone.now()
        checkpoint.save(update_fields=["status", "is_champion", "reason", "finished_at"])
        audit.record(checkpoint.project_id, by, audit.PROMOTION, target=f"checkpoint {checkpoint.pk}",
                     before={"champion": former, "status": was}, after={"champion": checkpoint.pk},
                     reason=checkpoint.reason)
    return checkpoint
