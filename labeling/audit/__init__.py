"""The audit log: every action a lead or researcher takes in a project, who, when, what before and after, why.

The one way in is ``record(...)``, called by the use-case functions themselves (screening's
pause and resume, consensus's rulings, gold, members, settings, promotion, imports, exports,
the reports inbox), not by the views: whichever door an action comes through, it is logged.
``record`` refuses to run outside a transaction, and its callers call it inside the
transaction that makes the change, so that an entry exists exactly when the change does (a
refused or rolled-back action leaves none). Reading the log, filtered and as CSV, is
``labeling/audit/log.py``.
"""
from django.db import connection

from labeling.models import AuditEntry

# The actions, as the log names them (the page's filter lists these).
PAUSE = "annotator.pause"
RESUME = "annotator.resume"
RULING = "ruling.set"
RULING_UNDO = "ruling.undo"
GOLD_MADE = "gold.made"
GOLD_EDITED = "gold.edited"
GOLD_RETIRED = "gold.retired"
GOLD_PROPOSED = "gold.proposed"
PROPOSAL_REJECTED = "gold.proposal_rejected"
SETTINGS = "settings.change"
MEMBER_ADDED = "member.add"
MEMBER_REMOVED = "member.remove"
PROMOTION = "checkpoint.promote"
IMPORT = "import.start"
EXPORT = "export.download"
SNAPSHOT = "export.snapshot"
REPORT_RESOLVED = "report.resolve"

ACTIONS = (PAUSE, RESUME, RULING, RULING_UNDO, GOLD_MADE, GOLD_EDITED, GOLD_RETIRED, GOLD_PROPOSED,
           PROPOSAL_REJECTED, SETTINGS, MEMBER_ADDED, MEMBER_REMOVED, PROMOTION, IMPORT, EXPORT, SNAPSHOT,
           REPORT_RESOLVED)


def record(project, actor, action, *, target="", before=None, after=None, reason=""):
    """Log ``action`` by ``actor`` (a user, or None for the system) in ``project``; returns the entry.

    ``before`` and ``after`` are JSON-able values of what changed; ``reason`` the person's why.
    Must be called inside the transaction of the action (a RuntimeError otherwise: an entry
    written on its own could outlive a change that rolled back).
    """
    if action not in ACTIONS:
        raise ValueError(f"unknown audit action {action!r}")
    if not connection.in_atomic_block:
        raise RuntimeError("audit.record must run inside the transaction of the action it logs")
    named = actor if actor is not None and getattr(actor, "is_authenticated", False) else None
    return AuditEntry.objects.create(
        project_id=getattr(project, "pk", project), actor=named,
        actor_name=named.get_username() if named is not None else "", action=action, target=str(target)[:200],
        before=before, after=after, reason=reason or "",
    )


def changed(before, after):
    """The keys of two dicts whose values differ, as ``(before, after)`` of those keys only."""
    keys = [key for key in after if before.get(key) != after[key]]
    return {key: before.get(key) for key in keys}, {key: after[key] for key in keys}
