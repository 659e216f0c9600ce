"""An annotator's standing in a project: screening, active, failed screening, paused.

The standing is an ``AnnotatorProjectStatus`` row; no row means active in a project without
screening. The queue asks ``work_gate`` before every hand-out (holding the annotator's row
lock): None means no work at all, ``SCREENING`` means screening items only.

Screening. In a project with ``requires_screening``, a newcomer's row starts in
``screening`` at their first hand-out. The screening set is the project's screening items
that have gold ratings, in id order, the first ``project.screening_size`` of them (0: all);
the queue serves them one by one, each once. When the last one is submitted, the mean
``exact_share`` of their screening passes decides: at least ``screening_threshold`` passes
(active), below fails (``failed_screening``: no work until a lead resumes them). Someone who
already worked in the project before it required screening is not screened.

Automatic pausing. After each gold pass is scored (labeling/quality/gold_passes.py, a job on
the beat schedule, within a minute of the submit) the rolling gold score over the
latest ``gold_window`` passes is compared with ``project.gold_threshold``: strictly below
pauses the annotator in that project, with the figures as the reason, once they have
``gold_min_passes`` passes. Only passes after a lead's latest resume count, so that a
resumed annotator is judged on new work.

Hook: ``labeling.work.submission.submit`` calls ``after_submit(assignment)`` for a screening
pass inside its transaction, right after the assignment is marked submitted (holding the
solution's lock; nothing here takes a lock the queue takes first, see labeling/work/queue.py).
"""
from django.db import transaction
from django.db.models import Exists, OuterRef
from django.utils import timezone

from labeling import audit
from labeling.errors import DomainError
from labeling.models import AnnotatorProjectStatus as Status
from labeling.models import Assignment, GoldRating, GoldScore, Solution
from labeling.models.unique import unique_or_none
from labeling.quality import feedback, gold

SCREENING, ACTIVE, FAILED, PAUSED = Status.SCREENING, Status.ACTIVE, Status.FAILED_SCREENING, Status.PAUSED
# Standing that bars an annotator from the project's work and from trusted consensus.
BLOCKED = (FAILED, PAUSED)


def status_of(annotator, project):
    """The annotator's AnnotatorProjectStatus row in ``project``, or None."""
    return unique_or_none(Status.objects.filter(annotator=annotator, project=project))


def work_gate(annotator, project, now=None, *, state=...):
    """``ACTIVE``, ``SCREENING`` (screening items only) or None (no work): for the queue.

    ``state`` is the annotator's stored state when the caller read it already (None: no
    row), which saves a query on every hand-out.
    """
    if state is ...:
        row = status_of(annotator, project)
    elif state in (None, SCREENING):
        row = status_of(annotator, project) if state else None
    else:
        return None if state in BLOCKED else state
    if row is None:
        if not project.requires_screening:
            return ACTIVE
        row = _first_standing(annotator, project, now)
    if row.state == SCREENING:
        row = decide_screening(annotator, project, row=row, now=now)
    if row.state in BLOCKED:
        return None
    return row.state


def _first_standing(annotator, project, now):
    worked = Assignment.objects.filter(annotator=annotator, project=project, is_screening=False).exists()
    if worked:
        state, reason = ACTIVE, "worked in the project before it required screening"
    else:
        state, reason = SCREENING, ""
    return Status.objects.create(
        annotator=annotator, project=project, state=state, reason=reason, decided_at=now or timezone.now()
    )


# Screening ------------------------------------------------------------------------------


def screening_items(project):
    """The screening set: screening solutions with gold ratings, in id order, at most screening_size."""
    rated = GoldRating.objects.filter(step__solution=OuterRef("pk"))
    items = Solution.objects.filter(project=project, is_screening=True).filter(Exists(rated)).order_by("pk")
    return items[: project.screening_size] if project.screening_size else items


def screening_progress(annotator, project):
    """``(done, total)``: screening items submitted, and how many there are to do."""
    items = list(screening_items(project).values_list("pk", flat=True))
    done = Assignment.objects.filter(
        annotator=annotator, project=project, solution_id__in=items, state=Assignment.SUBMITTED
    ).count()
    return done, len(items)


def next_screening_item(annotator, project):
    """The first screening item the annotator has never been handed, or None."""
    seen = Assignment.objects.filter(solution=OuterRef("pk"), annotator=annotator)
    ids = list(screening_items(project).values_list("pk", flat=True))
    return Solution.objects.filter(pk__in=ids).filter(~Exists(seen)).order_by("pk").first()


def decide_screening(annotator, project, *, row=None, now=None):
    """Pass or fail an annotator in screening once every item is submitted; return the row."""
    row = row or status_of(annotator, project)
    if row is None or row.state != SCREENING:
        return row
    done, total = screening_progress(annotator, project)
    if total == 0 or done < total:
        return row
    items = screening_items(project).values("pk")
    shares = list(
        GoldScore.objects.filter(
            annotator=annotator, project=project, assignment__solution__in=items
        ).values_list("exact_share", flat=True)
    )
    score = sum(shares) / total  # a pass that was never scored agrees with nothing
    passed = not _below(score, project.screening_threshold)
    row.state = ACTIVE if passed else FAILED
    row.screening_score = score
    sign = ">=" if passed else "<"
    row.reason = f"screening score {score:.2f} {sign} {project.screening_threshold:.2f} over {total} items"
    row.decided_by, row.decided_at = None, now or timezone.now()
    row.save(update_fields=["state", "screening_score", "reason", "decided_by", "decided_at"])
    return row


def after_submit(assignment, solution=None, now=None):
    """Score a submitted pass over a screening item and decide the screening when it is the last.

    Called from ``labeling.work.submission.submit`` inside its transaction with the solution it
    locked; does nothing for other work. Gold passes are scored by a scheduled job instead
    (labeling/quality/gold_passes.py), so that the response does not show which was gold.
    """
    solution = solution if solution is not None else assignment.solution
    if not solution.is_screening:
        return None  # the assignment is left as it was (its cached problem too)
    assignment.solution = solution
    score = gold.score_gold_pass(assignment)
    if score is not None:
        decide_screening(assignment.annotator, assignment.project, now=now)
    return score


# Pausing --------------------------------------------------------------------------------


def check_gold_threshold(annotator, project, now=None):
    """Pause the annotator when their rolling gold score is below the project's threshold.

    Returns the new row when it paused them, else None. Only an active annotator is paused.
    """
    if project.gold_threshold <= 0:
        return None
    row = status_of(annotator, project)
    if row is not None and row.state != ACTIVE:
        return None
    since = row.resumed_at if row is not None else None
    rolling = gold.gold_record(annotator, project, since=since)
    if rolling.passes < max(1, project.gold_min_passes) or not _below(rolling.score, project.gold_threshold):
        return None
    reason = (
        f"rolling gold score {rolling.score:.2f} < {project.gold_threshold:.2f} "
        f"over last {rolling.passes} gold passes"
    )
    return _set(annotator, project, PAUSED, reason, None, now)


def pause(annotator, project, by=None, reason="", now=None):
    """A lead pauses the annotator in the project: no new work until resumed.

    The reason is required: the annotator is shown it (``my_status``) and the audit log keeps
    it after a resume has replaced the standing's own.
    """
    reason = (reason or "").strip()
    if not reason:
        raise DomainError("Give a reason for the pause: the annotator is shown it.", "reason")
    return _change(annotator, project, PAUSED, reason, by, now, audit.PAUSE)


def resume(annotator, project, by=None, reason="", now=None):
    """A lead lets the annotator work again (after a pause, a failed or an unfinished screening)."""
    now = now or timezone.now()
    return _change(annotator, project, ACTIVE, (reason or "").strip() or "resumed by a lead", by, now, audit.RESUME,
                   resumed_at=now)


def _change(annotator, project, state, reason, by, now, action, **extra):
    """A lead's change of standing, logged with what it replaced (in the same transaction)."""
    with transaction.atomic():
        was = Status.objects.select_for_update().filter(annotator=annotator, project=project).first()
        row = _set(annotator, project, state, reason, by, now, **extra)
        audit.record(project, by, action, target=f"annotator {annotator.pk} ({annotator})",
                     before={"state": was.state if was else None, "reason": was.reason if was else ""},
                     after={"state": row.state, "reason": row.reason}, reason=reason)
    return row


def paused_annotator_ids(project):
    """Ids of the annotators barred from the project (paused or failed screening), sorted."""
    return tuple(
        Status.objects.filter(project=project, state__in=BLOCKED).order_by("annotator_id").values_list(
            "annotator_id", flat=True
        )
    )


def untrusted_annotator_ids(project):
    """Annotators whose work a consensus proposal must not rest on: not active in the project."""
    return tuple(
        Status.objects.filter(project=project).exclude(state=ACTIVE).values_list("annotator_id", flat=True)
    )


def _set(annotator, project, state, reason, by, now, **extra):
    now = now or timezone.now()
    fields = {"state": state, "reason": reason, "decided_by": by, "decided_at": now, **extra}
    # An upsert: the row may not exist yet, and the queue may create it at the same moment.
    Status.objects.bulk_create(
        [Status(annotator=annotator, project=project, **fields)],
        update_conflicts=True,
        unique_fields=["annotator", "project"],
        update_fields=list(fields),
    )
    return Status.objects.get(annotator=annotator, project=project)


def _below(score, threshold):
    # Shares are ratios of small counts: compare at 1e-9 so 3/4 is not below 0.75.
    return round(score, 9) < round(threshold, 9)


# What the annotator sees ----------------------------------------------------------------

MESSAGES = {
    ACTIVE: "active",
    FAILED: "failed — a lead will review",
    PAUSED: "paused — a lead will review",
}


def my_status(annotator, project):
    """What the annotator may know of their standing: state, screening progress, a message.

    Never a score or a threshold, nor the reason of an automatic decision (those derive from
    gold ratings): ``reason`` is a lead's own words when a lead paused them by hand, else "".
    """
    row = status_of(annotator, project) if annotator is not None else None
    if row is None:
        state = SCREENING if project.requires_screening else ACTIVE
    else:
        state = row.state
    screened = row is not None and row.screening_score is not None
    done = total = 0
    if state == SCREENING or screened:
        if annotator is None:
            total = screening_items(project).count()
        else:
            done, total = screening_progress(annotator, project)
    if state == SCREENING:
        message = f"screening: {done} of {total} done"
    elif state == ACTIVE and screened and not _below(row.screening_score, project.screening_threshold):
        message = "passed"
    else:
        message = MESSAGES[state]
    # decided_by is set only by a lead's hand (pause/resume); an automatic pause leaves it null.
    by_lead = row is not None and row.state == PAUSED and row.decided_by_id is not None
    return {"project": project.pk, "state": state, "done": done, "total": total, "message": message,
            "reason": row.reason if by_lead else "", "results": feedback.results_version(annotator, project)}
