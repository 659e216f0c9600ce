"""gunicorn settings of the web process, read by the Docker image, the demo and the benchmarks.

gunicorn loads ``./gunicorn.conf.py`` by itself when started in the repository root (the
image's working directory); flags on the command line (``--workers``, ``--threads``, ...)
still win.

Sync workers, one request at a time per process, 2 per CPU + 2: the threads of one gthread
process take turns on the GIL, a request holding a solution's row lock waits its turn between
statements, and those waits pile up in the tail (docs/performance.md, "The web server", has the
measurements). A sync worker must not wait on a slow client, so production puts a buffering
proxy in front (nginx in docker-compose.yml, deploy/nginx.conf; tests/test_proxy.py).

Started with ``--threads N`` (the demo: one process, SQLite) gunicorn runs gthread workers
instead; for those, keep-alive and the connection cap in ``on_starting`` apply.
"""
import gc
import os

from gunicorn.config import WorkerConnections

from annotator.environment import read

worker_class = "sync"


def _workers():
    # STEPMARK_WEB_WORKERS is in the table of annotator/environment.py; WEB_CONCURRENCY is gunicorn's own.
    configured = read()["STEPMARK_WEB_WORKERS"] or os.environ.get("WEB_CONCURRENCY")
    if configured:
        return int(configured)
    # The CPUs this process may run on (a container's cpuset), where the OS tells (not macOS).
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    return 2 * cpus + 2


workers = _workers()
# An upload's body is streamed to disk inside its request, then a worker imports it
# (labeling/imports/jobs.py); a slow client sending a large file may still take minutes.
timeout = 300

# gthread only: keep-alive spares each annotator a new connection per request.
keepalive = 2

CONNECTIONS_PER_THREAD = 2


def on_starting(server):
    """Cap each gthread worker's connections at ``CONNECTIONS_PER_THREAD`` x its threads.

    A gthread worker keeps every keep-alive connection it accepts, and when many clients
    connect at once one worker can take most of them, and its clients wait behind each other
    (docs/performance.md). With the cap a worker stops accepting while it has that many
    clients, the rest wait in the listen queue for a worker with room, and the load stays
    even. Left alone when set explicitly (``--worker-connections``).
    """
    if server.cfg.worker_connections == WorkerConnections.default:
        server.cfg.set("worker_connections", CONNECTIONS_PER_THREAD * server.cfg.threads)


# Young objects are collected once this many allocations net have piled up (Python's
# default is 700), between requests; past four times as many, in the middle of one too.
GC_YOUNG_THRESHOLD = 10_000
GC_AUTOMATIC_THRESHOLD = 4 * GC_YOUNG_THRESHOLD


def post_worker_init(worker):
    """Load the views, keep the garbage collector off what the worker loaded, and run it less often.

    A worker holds about 110,000 objects once Django, DRF and the views are loaded (the
    views are imported here, not by the first request), all of them for life, and every full
    collection walked them all again, stalling the slowest requests (docs/performance.md).
    ``gc.freeze()`` moves them out of the collector's sight. Collections then run between
    requests (``post_request``).
    """
    from django.urls import get_resolver

    get_resolver().url_patterns  # imports the URLconf and every view
    gc.freeze()
    _, middle, old = gc.get_threshold()
    gc.set_threshold(GC_AUTOMATIC_THRESHOLD, middle, old)


def post_request(worker, req, environ, resp):
    """Collect garbage after a response has gone out, not while a request waits for it.

    A request of the annotator loop leaves a few hundred objects in reference cycles
    (Django's and DRF's request, view and response objects point at each other), which only
    the collector frees, and a young collection inside a request lengthens that request.
    Run here, the pause falls between requests: the slowest requests and p99 come down at
    equal throughput (docs/performance.md has the runs).
    """
    collect_between_requests()


def collect_between_requests():
    """The collection Python would make by now, if the young objects reach ``GC_YOUNG_THRESHOLD``.

    The generation follows Python's rule: the oldest one whose count is past its threshold.
    Returns it, or None when there was nothing to do.
    """
    young, middle, old = gc.get_count()
    if young < GC_YOUNG_THRESHOLD:
        return None
    _, middle_threshold, old_threshold = gc.get_threshold()
    generation = 2 if old > old_threshold else 1 if middle > middle_threshold else 0
    gc.collect(generation)
    return generation
