"""The dashboard cache: figures computed once, served in milliseconds, kept up to date by submits.

Design. ``build_dashboard`` (labeling/stats/dashboard.py) takes seconds on a million ratings; a page
load must take well under 200 ms. So the rendered JSON is kept in Django's ``stats`` cache
(Redis in production, shared by every web process; a file cache in the demo; see
``CACHES`` in annotator/settings.py) under a key per project and filter, next to the
*version* of the project it was computed at.

- Versions. Each project has a counter in the same cache. A post-save signal on Assignment
  bumps it whenever a saved assignment is submitted or its submit undone (``on_submit`` below, connected in
  ``LabelingConfig.ready``), and a post-delete signal when one is removed. The bump runs on
  commit, so nobody can compute at the new version without seeing the new rows. A reader
  takes the version *before* it loads any rating, so a submit that lands during a compute
  leaves that entry one version behind, never wrongly current.
- Reads. The entry at the current version is served as is. A stale entry is recomputed
  lazily by the next read, with one exception that keeps a busy project from paying the
  full compute on every load: when the last compute took longer than ``FAST_COMPUTE``
  seconds, a stale entry younger than ``min(max_stale, STALE_FACTOR x compute time)`` is
  served marked stale (with how many submits it is behind). Small projects therefore always
  read exact figures; a project whose dashboard takes 3 s is at most 60 s behind and spends
  at most 1/20 of the time recomputing.
- What a compute may cost. A million ratings take seconds of a web process's CPU, so:
  one compute per project at a time, across processes (``compute_lock``: redis-py's ``Lock``
  through django-redis, which takes it with SET NX and lets it go only while it is still its
  holder's, atomically; it expires after ``LOCK_TIMEOUT`` should its holder die): while it
  runs, others serve the entry they have, however stale, or wait for it (``WAIT_SECONDS``)
  when they have none; each person may start ``STEPMARK_DASHBOARD_COMPUTES_PER_MINUTE``
  computes a minute (``refresh=1`` and new filters alike; cached reads are free: the API
  passes its DRF throttle as ``budget``, asked only before a compute), then gets the cached
  entry or a 429; and the entries of filtered figures (each ``since=`` is a new key) are kept
  an hour, at most 16 per project (the oldest goes) and 1 MB each. The unfiltered figures
  stay ``ENTRY_TIMEOUT``.
- Counters start from the clock (``time_ns``), not from 1: a counter lost to eviction comes
  back above every version an old entry could carry. Keys carry the project's creation time
  too, so a recreated database never meets entries of a project that had the same id.
- Work that arrives without a model save (bulk imports) does not bump; entries expire after
  ``ENTRY_TIMEOUT`` and ``refresh=True`` recomputes at once.

Annotator standing (paused, resumed) changes without a submit; it is never cached: the API
reads it live (``dashboard.statuses``).
"""
import hashlib
import json
import math
import threading
import time

from django.conf import settings
from django.core.cache import caches
from django.core.serializers.json import DjangoJSONEncoder
from django.db import transaction
from django_redis import get_redis_connection
from django_redis.cache import RedisCache
from redis.exceptions import LockError

from labeling import outages
from labeling.errors import DomainError
from labeling.models import Project

FAST_COMPUTE = 0.2  # seconds: a compute this quick is simply redone on every stale read
STALE_FACTOR = 20  # a slow dashboard may be served stale for this many times its compute time
ENTRY_TIMEOUT = 24 * 3600
LOCK_TIMEOUT = 120  # seconds a project's compute lock lasts (longer than any compute)
WAIT_SECONDS, WAIT_POLL = 10, 0.1  # with nothing to serve, how long a read waits for another's compute
FILTERED_ENTRIES, FILTERED_BYTES, FILTERED_TIMEOUT = 16, 1024 ** 2, 3600  # per project, each, seconds
# The shape of the cached figures, in every entry's key: raise it when build_dashboard's answer
# changes shape, so a release never serves the entries an older one cached (2: issue #30's
# kappa against the others' majority replaced alpha per annotator; 3: issue #31's pre-label figures).
SHAPE = 3


def _alias():
    return "stats" if "stats" in settings.CACHES else "default"


def _cache():
    return caches[_alias()]


def max_stale():
    """Seconds a slow dashboard may lag behind the submits (``STEPMARK_DASHBOARD_MAX_STALE``, 60)."""
    return float(getattr(settings, "STEPMARK_DASHBOARD_MAX_STALE", 60))


def _project_key(project):
    created = int(project.created_at.timestamp() * 1_000_000)
    return f"dashboard:{project.pk}:{created}"


def version(project):
    """The project's current version (created on first use)."""
    key = f"{_project_key(project)}:version"
    value = _cache().get(key)
    if value is None:
        _cache().add(key, time.time_ns(), timeout=None)
        value = _cache().get(key)
    return value


def bump(project):
    """Mark every cached dashboard of ``project`` stale; returns the new version."""
    key = f"{_project_key(project)}:version"
    cache = _cache()
    if isinstance(cache, RedisCache):
        return _bump_redis(cache, key)
    try:
        return cache.incr(key)
    except ValueError:  # no counter yet (or evicted): start above any earlier one
        cache.add(key, time.time_ns(), timeout=None)
        return cache.get(key)


def _bump_redis(cache, key):
    """``bump`` on Redis in one round trip: start a missing counter from the clock, then increment.

    Every submit bumps. django-redis' ``incr`` runs INCRBY in a Lua script, whose numbers are
    doubles: a counter started from the clock (about 2^61) comes back rounded. The client's own
    INCR answers exactly. The counter is stored as the cache stores integers (as is), so
    ``version`` reads it as usual.
    """
    full = cache.make_and_validate_key(key)
    pipe = get_redis_connection(_alias()).pipeline(transaction=False)
    pipe.set(full, time.time_ns(), nx=True)
    pipe.incr(full)
    return pipe.execute()[1]


def on_submit(sender, instance, created=False, **kwargs):
    """Signal receiver: bump the project's version once a submitted (or undone) assignment is committed."""
    from labeling.models import Assignment

    # An undo (labeling/work/submission.py ``unsubmit``) saves an active assignment, writing
    # ``submitted_at``: the pass leaves the figures, so that bumps too.
    undone = "submitted_at" in (kwargs.get("update_fields") or ())
    if kwargs.get("signal_name") != "delete" and instance.state != Assignment.SUBMITTED and not undone:
        return
    project = Project(pk=instance.project_id, created_at=_created_at(instance))
    # robust: the work is committed by now; a cache that cannot be reached (Redis down) must
    # not turn a stored submit into an error. The dashboard then catches up at the next submit.
    transaction.on_commit(lambda: _bump_after_commit(project), robust=True)


def _bump_after_commit(project):
    try:
        bump(project)
    except outages.OUTAGE_ERRORS as exc:
        # One log line per Redis outage (not on_commit's traceback per submit); anything else
        # is still logged with its traceback.
        if outages.note(exc) is None:
            raise


def on_delete(sender, instance, **kwargs):
    on_submit(sender, instance, signal_name="delete")


def _created_at(assignment):
    cached = assignment._state.fields_cache.get("project")
    if cached is not None:
        return cached.created_at
    return Project.objects.values_list("created_at", flat=True).get(pk=assignment.project_id)


def _entry_key(project, params):
    digest = hashlib.sha1(json.dumps(params, sort_keys=True, default=str).encode()).hexdigest()[:16]
    return f"{_project_key(project)}:entry:{SHAPE}:{digest}"


def get_dashboard(project, params, compute, *, refresh=False, now=None, budget=None):
    """The dashboard JSON (bytes) of ``project`` for ``params``, and how fresh it is.

    ``compute()`` builds the dashboard dict when the cache cannot serve it. Returns
    ``(body, meta)`` with ``meta = {"version", "behind" (submits since it was computed),
    "stale", "computed_seconds", "from_cache"}``. ``budget()``, asked once before each compute,
    counts it against the caller's computes (the API's DRF throttle, labeling/api/dashboard.py):
    None to go ahead, else the seconds until they may compute again. Over their budget, or while
    the project is computed for too long by someone else, with nothing cached to serve, it
    raises ``Refused`` (429 or 503).
    """
    cache = _cache()
    now = time.time() if now is None else now
    key = _entry_key(project, params)
    deadline = time.monotonic() + WAIT_SECONDS
    while True:
        current = version(project)
        entry = cache.get(key)
        if entry is not None and not refresh and _servable(entry, current, now):
            return entry["body"], _meta(entry, current, from_cache=True)
        lock = compute_lock(project)
        if lock.acquire(blocking=False):
            break
        if entry is not None:  # someone computes the project's figures now: serve what there is
            return entry["body"], _meta(entry, current, from_cache=True)
        if time.monotonic() > deadline:
            raise Refused("The dashboard is being computed; try again shortly.", 503,
                          retry_after=math.ceil(WAIT_SECONDS))
        time.sleep(WAIT_POLL)  # for the same figures, most often (a page asks twice at once)
    try:
        entry = cache.get(key)  # what the lock's last holder stored
        if entry is not None and not refresh and entry["version"] == current:
            return entry["body"], _meta(entry, current, from_cache=True)
        wait = budget() if budget is not None else None
        if wait is not None:
            if entry is not None:
                return entry["body"], _meta(entry, current, from_cache=True)
            raise Refused(f"You started {settings.STEPMARK_DASHBOARD_COMPUTES_PER_MINUTE} dashboard computes this"
                          f" minute, the most allowed; try again in {wait} s.", 429, retry_after=wait)
        started = time.perf_counter()
        body = json.dumps(compute(), cls=DjangoJSONEncoder, separators=(",", ":")).encode()
        entry = {"version": current, "at": now, "seconds": time.perf_counter() - started, "body": body}
        _store(cache, project, params, key, entry)
    finally:
        _release(lock)
    return body, _meta(entry, current, from_cache=False)


class Refused(DomainError):
    """No figures now: the person's compute budget is spent (429) or the project is busy (503)."""

    def __init__(self, message, status, *, retry_after):
        super().__init__(message, status=status)
        self.retry_after = retry_after


def _servable(entry, current, now):
    """The entry is current, or stale but young enough for a slow dashboard (see the module's docstring)."""
    if entry["version"] == current:
        return True
    young = now - entry["at"] < min(max_stale(), STALE_FACTOR * entry["seconds"])
    return entry["seconds"] > FAST_COMPUTE and young


_local_locks = {}  # the file cache's compute locks (the demo), by key


def compute_lock(project):
    """The lock of ``project``'s compute (one at a time, across processes), not yet taken.

    On Redis it is redis-py's ``Lock`` (django-redis' ``cache.lock``, under the cache's key
    prefix), held at most ``LOCK_TIMEOUT`` seconds: longer than any compute, so a holder that
    died frees it in time. The file cache has no atomic lock; it serves the demo, whose one web
    process computes, so a lock in memory is enough there.
    """
    key = f"{_project_key(project)}:computing"
    cache = _cache()
    if isinstance(cache, RedisCache):
        return cache.lock(key, timeout=LOCK_TIMEOUT, blocking=False)
    return _local_locks.setdefault(key, threading.Lock())


def _release(lock):
    try:
        lock.release()
    except LockError:
        # It expired during the compute (and may be another's now): redis-py's release
        # compares the token and deletes in one step, so it leaves another's lock alone.
        pass


def _store(cache, project, params, key, entry):
    """Keep the entry: the project's unfiltered figures for ``ENTRY_TIMEOUT``; any other filter's
    for ``FILTERED_TIMEOUT``, at most ``FILTERED_BYTES`` each and ``FILTERED_ENTRIES`` per project
    (the oldest goes), since each ``since=`` is a new key. Runs under the project's lock."""
    if not params:
        cache.set(key, entry, timeout=ENTRY_TIMEOUT)
        return
    if len(entry["body"]) > FILTERED_BYTES:
        return
    index_key = f"{_project_key(project)}:filtered"
    keys = [k for k in cache.get(index_key) or [] if k != key] + [key]
    for old in keys[:-FILTERED_ENTRIES]:
        cache.delete(old)
    cache.set(index_key, keys[-FILTERED_ENTRIES:], timeout=FILTERED_TIMEOUT)
    cache.set(key, entry, timeout=FILTERED_TIMEOUT)


def _meta(entry, current, *, from_cache):
    behind = max(0, current - entry["version"])
    return {"version": entry["version"], "behind": behind, "stale": behind > 0,
            "computed_seconds": round(entry["seconds"], 3), "from_cache": from_cache}
