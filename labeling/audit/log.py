"""Reading the audit log: a project's entries, filtered by action, by who and by date.

The API's list and its CSV download (labeling/api/audit.py) read the same filter here, so that
the CSV holds exactly the entries the page shows (every page of them).
"""
import datetime

from django.utils import timezone
from django.utils.dateparse import parse_date, parse_datetime

from labeling.errors import DomainError
from labeling.models import AuditEntry

from . import ACTIONS, GOLD_EDITED, GOLD_MADE, GOLD_PROPOSED, GOLD_RETIRED

def _moment(raw, field, *, end):
    """A date (``2026-11-27``: the whole day, so ``until`` takes it in) or an ISO datetime."""
    try:
        day = parse_date(raw) if len(raw) == 10 else None
        moment = parse_datetime(raw) if day is None else None
    except ValueError:  # well formed but no such day (2026-13-01)
        day = moment = None
    if day is not None:
        moment = datetime.datetime.combine(day + datetime.timedelta(days=1) if end else day, datetime.time())
    if moment is None:
        raise DomainError(f"{field} must be a date (YYYY-MM-DD) or an ISO date and time, not {raw!r}.", field)
    return timezone.make_aware(moment) if timezone.is_naive(moment) else moment


def entries(project, params):
    """The project's entries newest first, filtered by the query ``params``: ``action`` (one of
    ``ACTIONS``), ``actor`` (a username), ``since`` and ``until`` (dates, both days included, or
    datetimes); a bad filter is a DomainError naming it."""
    rows = AuditEntry.objects.filter(project=project)
    action = (params.get("action") or "").strip()
    if action:
        if action not in ACTIONS:
            raise DomainError(f"action must be one of {', '.join(ACTIONS)}.", "action")
        rows = rows.filter(action=action)
    actor = (params.get("actor") or "").strip()
    if actor:
        rows = rows.filter(actor_name=actor)
    since, until = (params.get("since") or "").strip(), (params.get("until") or "").strip()
    start = _moment(since, "since", end=False) if since else None
    stop = _moment(until, "until", end=True) if until else None
    if start is not None:
        rows = rows.filter(at__gte=start)
    if stop is not None:
        # A date's end is the next midnight, excluded; a datetime is taken in.
        rows = rows.filter(at__lt=stop) if len(until) == 10 else rows.filter(at__lte=stop)
    # A date's end is excluded (the next midnight), a datetime's included.
    if start is not None and stop is not None and (start >= stop if len(until) == 10 else start > stop):
        raise DomainError("since is after until.", "since")
    return rows.order_by("-at", "-pk")


def actors(project):
    """The names of everyone with an entry in the project, sorted (the page's "who" filter)."""
    return sorted(set(AuditEntry.objects.filter(project=project).exclude(actor_name="")
                      .values_list("actor_name", flat=True)))


# Gold ratings are the leads' (the quality endpoints are theirs; the content API never shows
# them to researchers): a researcher reading the log sees that gold changed, not its values.
GOLD_ACTIONS = (GOLD_MADE, GOLD_EDITED, GOLD_RETIRED, GOLD_PROPOSED)
HIDDEN = "hidden: gold ratings are for leads"


def shown(entry, *, sees_gold):
    """``(before, after)`` of ``entry`` as the reader may see them: a gold action's ``ratings``
    replaced by ``HIDDEN`` for a reader who does not lead the project."""
    if sees_gold or entry.action not in GOLD_ACTIONS:
        return entry.before, entry.after

    def hide(side):
        return {k: HIDDEN if k == "ratings" else v for k, v in side.items()} if isinstance(side, dict) else side

    return hide(entry.before), hide(entry.after)
