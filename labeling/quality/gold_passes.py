"""Gold passes are scored after the submit, in a job, so that nothing in an annotator's response
says which of their tasks was gold.

A submit over a gold item looks like any other to the annotator: the same statements, the same
answer. After its transaction commits, ``score_after_commit`` queues ``score_gold_pass`` for it;
the worker scores the pass against the gold (``gold.score_gold_pass``) and may pause the
annotator (``screening.check_gold_threshold``), which their next hand-out then says. Should a job
be lost (a broker down at the wrong moment), ``score_pending_gold_passes``, on the default beat
schedule, scores every pass served as gold that has no score yet. Screening passes are apart:
an annotator in screening knows it, and is scored with the submit (``screening.after_submit``).
"""
from functools import partial

from celery import shared_task
from django.db import transaction
from django.db.models import Exists, OuterRef
from django.utils import timezone

from labeling.models import Annotator, Assignment, GoldScore
from labeling.quality import gold, screening


def score_after_commit(assignment):
    """Queue the scoring of a submitted gold pass for when the submit's transaction commits."""
    transaction.on_commit(partial(score_gold_pass.delay, assignment.pk))


@shared_task(name="labeling.quality.score_gold_pass", acks_late=True)
def score_gold_pass(assignment_id):
    """Score one submitted gold pass and act on the annotator's rolling score; the GoldScore or None."""
    with transaction.atomic():
        assignment = (Assignment.objects.select_related("solution", "project")
                      .filter(pk=assignment_id).first())
        if assignment is None or assignment.annotator_id is None:
            return None
        # The annotator's row first, as the queue takes it: their standing changes under it.
        Annotator.objects.select_for_update().filter(pk=assignment.annotator_id).first()
        score = gold.score_gold_pass(assignment)
        if score is not None and not score.is_screening:
            screening.check_gold_threshold(assignment.annotator, assignment.project, now=timezone.now())
    return score.pk if score is not None else None


@shared_task(name="labeling.quality.score_pending_gold_passes", acks_late=True)
def score_pending_gold_passes():
    """Score the passes served as gold that have no score yet; return how many were scored."""
    scored = GoldScore.objects.filter(assignment=OuterRef("pk"))
    pending = (Assignment.objects.filter(state=Assignment.SUBMITTED, is_quality_control=True, is_screening=False)
               .filter(~Exists(scored)).order_by("submitted_at", "pk").values_list("pk", flat=True))
    return sum(score_gold_pass(pk) is not None for pk in pending)
