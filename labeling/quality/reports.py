"""The lead's inbox of annotators' reports: passes given up, and problems flagged as bad.

A report is a submitted pass whose ``finish_reason`` is ``give_up`` or ``bad_problem`` (its
``finish_note`` says why). Until now a lead met them only in each annotator's drill-down;
``reports`` lists them across the project, and ``resolve`` closes one with the lead's note
(a ``ReportResolution``), logged in the audit log in the same transaction.
"""
from django.db import IntegrityError, transaction
from rest_framework import status

from labeling import audit
from labeling.errors import DomainError
from labeling.models import Assignment, FinishReason, ReportResolution

REPORT_REASONS = (FinishReason.GIVE_UP, FinishReason.BAD_PROBLEM)
OPEN, RESOLVED, ALL = "open", "resolved", "all"
STATES = (OPEN, RESOLVED, ALL)


def reports(project, state=OPEN):
    """The project's reports in ``state`` (open, resolved or all), newest first."""
    if state not in STATES:
        raise DomainError(f"state must be one of {', '.join(STATES)}.", "state")
    rows = Assignment.objects.filter(project=project, state=Assignment.SUBMITTED, finish_reason__in=REPORT_REASONS)
    if state != ALL:
        rows = rows.filter(resolution__isnull=state == OPEN)
    return (rows.select_related("annotator__user", "solution__problem", "resolution__resolved_by")
            .order_by("-submitted_at", "-pk"))


def resolve(assignment, by, note=""):
    """Close the report ``assignment`` with ``note``; a pass that is no report is a 400, a second resolve a 409."""
    if assignment.state != Assignment.SUBMITTED or assignment.finish_reason not in REPORT_REASONS:
        raise DomainError("That pass is no give-up or bad-problem report.", "assignment")
    note = (note or "").strip()
    try:
        with transaction.atomic():
            resolution = ReportResolution.objects.create(assignment=assignment, resolved_by=by, note=note)
            who = (f"annotator {assignment.annotator_id} ({assignment.annotator})" if assignment.annotator_id
                   else "an imported labeler")
            audit.record(assignment.project_id, by, audit.REPORT_RESOLVED,
                         target=f"{assignment.finish_reason} report of {who} (pass {assignment.pk})",
                         before={"resolved": False}, after={"resolved": True}, reason=note)
    except IntegrityError:  # resolved a moment ago, by this lead in another tab or by another
        raise DomainError("This report is already resolved.", "assignment", status=status.HTTP_409_CONFLICT) from None
    return resolution
