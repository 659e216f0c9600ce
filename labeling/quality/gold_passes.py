"""Gold passes are scored by a scheduled job, not in the submit, so that nothing in an annotator's
responses says which of their passes was gold.

A submit over a gold item is the same request as any other: the same statements, the same answer,
nothing queued. ``score_pending_gold_passes``, on the default beat schedule every minute
(labeling/schedules.py; the demo's worker runs beat too), scores each pass served as gold that has
no score yet against the gold (``gold.score_gold_pass``) and may then pause the annotator
(``screening.check_gold_threshold``), which their next hand-out says. A job queued by each gold
submit was tried first and made those submits measurably slower, enough for a latency threshold
to pick them out (docs/performance.md#gold-nobody-can-spot-benchgold_tellpy).
The sweep leaves a pass alone until its undo window (``submission.UNDO_SECONDS``) is past, with
a margin: inside the window an undo must answer alike for gold and ordinary passes, and a scored
pass can no longer be reopened.
Screening passes are apart: an annotator in screening knows it, and is scored with the submit
(``screening.after_submit``).
"""
from datetime import timedelta

from celery import shared_task
from django.db import transaction
from django.db.models import Exists, OuterRef
from django.utils import timezone

from labeling.models import Annotator, Assignment, GoldScore
from labeling.quality import gold, screening
from labeling.work.submission import UNDO_SECONDS

# Seconds past the undo window before the sweep takes a pass: an undo sent at the window's end
# may still be on its way.
UNDO_MARGIN = 5


def score_gold_pass(assignment_id):
    """Score one submitted gold pass and act on the annotator's rolling score; the GoldScore or None."""
    with transaction.atomic():
        assignment = Assignment.objects.select_related("solution", "project").filter(pk=assignment_id).first()
        if assignment is None or assignment.annotator_id is None:
            return None
        # The annotator's row first, as the queue takes it: their standing changes under it.
        Annotator.objects.select_for_update().filter(pk=assignment.annotator_id).first()
        # Read again under that lock: an undo (submission.unsubmit, which takes the same row first)
        # may have reopened it since it was read.
        assignment.refresh_from_db(fields=["state", "submitted_at"])
        score = gold.score_gold_pass(assignment)
        if score is not None and not score.is_screening:
            screening.check_gold_threshold(assignment.annotator, assignment.project, now=timezone.now())
    return score


@shared_task(name="labeling.quality.score_pending_gold_passes", acks_late=True)
def score_pending_gold_passes(now=None):
    """Score the passes served as gold that have no score yet and are past their undo window, oldest
    first; return how many were scored. ``now``: the sweep's time (tests pass a later one)."""
    scored = GoldScore.objects.filter(assignment=OuterRef("pk"))
    settled = (now or timezone.now()) - timedelta(seconds=UNDO_SECONDS + UNDO_MARGIN)
    pending = (Assignment.objects.filter(state=Assignment.SUBMITTED, is_quality_control=True, is_screening=False,
                                         submitted_at__lt=settled)
               .filter(~Exists(scored)).order_by("submitted_at", "pk").values_list("pk", flat=True))
    return sum(score_gold_pass(pk) is not None for pk in pending)
