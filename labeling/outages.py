"""A backing service that cannot be reached: what counts as one, its one log line, its 503.

PostgreSQL, Redis (the caches) and the job queue (Celery's broker, Redis in production) can be
away for a while: restarted, crashed, or silent behind a dropped network (the clients' connect
and socket timeouts in annotator/settings.py turn silence into an error). While one is away:

- a request that meets it is answered 503 with ``Retry-After`` (``answer``): JSON
  ``{"detail", "field": null}`` under /api/ (the browser's queues ask again), a plain page
  elsewhere. ``OutageMiddleware`` answers for every view: DRF's exception handler
  (labeling/api/errors.py) leaves these errors alone, so DRF raises them on to it;
- each process logs one line when an outage starts and one when the service answers again
  (``note``, ``note_back``), not a traceback per request: Django's own log line of the 503 is
  skipped. A service counts as back when it answers: a new database connection
  (``connection_created``), a new Redis connection of the caches (``WatchedRedisPool``), a job
  published (``after_task_publish``); labeling/apps.py connects them;
- a one-shot job (``RetriedOnOutage``) runs again after 2, 4, 8 ... 120 s, 8 times at most
  (6 minutes in all), instead of failing for good on a blip.

Only errors that say the service is unreachable count. A database error with an SQL state
(a deadlock, a constraint) is the statement's own, except the connection class (08...) and a
server shutting down or starting (57P01-57P03: ``pg_terminate_backend``, a restart).
"""
import logging
import threading
import time

import redis
from celery import Task
from django.db import InterfaceError, OperationalError, connections
from django.http import HttpResponse, JsonResponse
from kombu.exceptions import OperationalError as BrokerError

from labeling.errors import DomainError

logger = logging.getLogger(__name__)

DATABASE, REDIS, BROKER = "the database", "Redis", "the job queue"
RETRY_AFTER = 5  # seconds a 503 asks the client to wait
OUTAGE_ERRORS = (OperationalError, InterfaceError, redis.exceptions.ConnectionError, redis.exceptions.TimeoutError,
                 BrokerError)
_SERVER_GOING = {"57P01", "57P02", "57P03"}  # admin shutdown (pg_terminate_backend), crash shutdown, starting up


def service_of(exc):
    """The service ``exc`` says cannot be reached (DATABASE, REDIS, BROKER), or None."""
    if isinstance(exc, (redis.exceptions.ConnectionError, redis.exceptions.TimeoutError)):
        return REDIS
    if isinstance(exc, BrokerError):
        return BROKER
    if isinstance(exc, InterfaceError):
        return DATABASE
    if isinstance(exc, OperationalError):
        cause = exc.__cause__
        if not hasattr(cause, "sqlstate"):
            return None  # not psycopg's (SQLite's "database is locked", "no such table")
        state = cause.sqlstate
        return DATABASE if state is None or state.startswith("08") or state in _SERVER_GOING else None
    return None


# One log line per outage, per process ------------------------------------------------------------

_down = {}  # service -> [monotonic start, times met]
_lock = threading.Lock()  # gthread workers share a process


def note(exc):
    """Record that ``exc`` met an outage; logs once when it starts. Returns the service, or None."""
    service = service_of(exc)
    if service is None:
        return None
    with _lock:
        state = _down.get(service)
        if state is not None:
            state[1] += 1
            return service
        _down[service] = [time.monotonic(), 1]
    logger.error("%s is unavailable (%s: %s); answering 503 until it is back", sentence_case(service),
                 type(exc).__name__, " ".join(str(exc).split()))
    return service


def note_back(service):
    """The service answered again: logs the end of its outage, if there was one."""
    if service not in _down:
        return  # the common case, without the lock
    with _lock:
        state = _down.pop(service, None)
    if state is not None:
        logger.warning("%s is back after %.1f s (met %d times meanwhile)", sentence_case(service),
                       time.monotonic() - state[0], state[1])


def database_connected(sender=None, **kwargs):
    """``connection_created`` receiver."""
    note_back(DATABASE)


def job_published(sender=None, **kwargs):
    """``after_task_publish`` receiver."""
    note_back(BROKER)


class WatchedRedisPool(redis.ConnectionPool):
    """The caches' Redis pool (``OPTIONS["pool_class"]``): a connection that opens ends a Redis outage."""

    def make_connection(self):
        connection = super().make_connection()
        connection.register_connect_callback(self.connected)  # kept as a weak method
        return connection

    def connected(self, connection):
        note_back(REDIS)


# The answer -----------------------------------------------------------------------------------------


class Unavailable(DomainError):
    """A request met an outage: 503, ask again after ``retry_after`` seconds."""

    status = 503
    retry_after = RETRY_AFTER


def unavailable(exc):
    """``Unavailable`` when ``exc`` met an outage (noted in the log), else None."""
    service = note(exc)
    if service is None:
        return None
    return Unavailable(f"{sentence_case(service)} is not answering; try again in a few seconds.")


def queued_or_failed(send, failed):
    """``send()`` (queue a job for a row just made); when the job queue cannot be reached,
    ``failed(reason)`` marks the row so that it does not wait "queued" for ever, and the error goes
    on to ``OutageMiddleware``'s 503. Returns what ``send`` returned."""
    try:
        return send()
    except OUTAGE_ERRORS as exc:
        if service_of(exc) is not None:
            failed(f"could not queue the job: {' '.join(str(exc).split())}")
        raise


def sentence_case(service):
    return service[0].upper() + service[1:]


def answer(request, refusal):
    """The 503 for ``refusal``: JSON under /api/, a plain page elsewhere; logged once per outage, not here."""
    if request.path.startswith("/api/"):
        response = JsonResponse(refusal.as_answer(), status=refusal.status)
    else:
        response = HttpResponse(
            "<!doctype html><html lang=en><meta charset=utf-8><title>Stepmark is unavailable</title>"
            f"<h1>Stepmark is unavailable for a moment</h1><p>{refusal.message} This page has not been lost:"
            " reload it shortly.</p></html>", status=refusal.status)
    response["Retry-After"] = str(refusal.retry_after)
    response["Cache-Control"] = "no-store"
    response._has_been_logged = True  # Django's flag: no "Service Unavailable" line per request
    return response


class OutageMiddleware:
    """Answers a view's outage error with ``answer`` (the API's views and the pages alike)."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        return self.get_response(request)

    def process_exception(self, request, exception):
        refusal = unavailable(exception)
        return None if refusal is None else answer(request, refusal)


# Jobs ---------------------------------------------------------------------------------------------


class RetriedOnOutage(Task):
    """A one-shot job that runs again on an outage: after 2, 4, 8, 16, 32, 64, 120 and 120 s (then fails).

    ``autoretry_for`` takes types, so a database error of the statement's own kind (a deadlock)
    is retried too: harmless, every such job is safe to run twice.

    Acknowledged late: a job whose worker dies is delivered again after the broker's visibility
    timeout. The countdowns stay under that timeout (annotator/settings.py), or Redis would hand
    a waiting retry to a second worker too.
    """

    acks_late = True
    autoretry_for = OUTAGE_ERRORS
    retry_backoff = 2
    retry_backoff_max = 120
    retry_jitter = False  # the documented schedule; a job is queued once, so no herd to spread
    max_retries = 8

    def before_start(self, task_id, args, kwargs):
        # A worker drops a broken database connection before each task (Celery's Django fixup);
        # a retry run inline (eager) needs the same, or it would meet the dead connection again.
        for connection in connections.all(initialized_only=True):
            if connection.errors_occurred and not connection.in_atomic_block and not connection.is_usable():
                connection.close()


def will_retry(task, exc):
    """Whether ``task`` (a bound ``RetriedOnOutage``) runs again after ``exc``: a job records a
    failure for its page only when it will not."""
    return (isinstance(exc, task.autoretry_for) and task.request.retries < task.max_retries
            and not task.request.called_directly)
