"""gunicorn settings of the web process, read by the Docker image, the demo and the benchmarks.

gunicorn loads ``./gunicorn.conf.py`` by itself when started in the repository root (the
image's working directory); flags on the command line (``--workers``, ``--threads``, ...)
still win.

Sync workers, one request at a time per process, 2 per CPU + 2. Measured with
bench/annotator_loop.py (32 annotators doing next -> submit on 2 cores shared with
PostgreSQL, nginx and the load generator; --servers conf,2x8,conf,2x8, 20 s each), 6 sync
workers answered with a worst-endpoint p95 of 155 and 130 ms where 2 gthread workers of 8
threads gave 179 and 166 ms, on the same code minutes apart (this machine's speed moves by a
third from minute to minute; sync had the lower p95 in 5 of the 6 pairs we ran). The gthread
workers do more loops per CPU second, but the threads of one process take turns on the GIL,
a request holding a solution's row lock waits its turn between statements, and those waits
pile up in the tail. A sync worker must not wait on a slow client, so production puts a
buffering proxy in front (nginx in docker-compose.yml, deploy/nginx.conf;
tests/test_proxy.py).

Started with ``--threads N`` (the demo: one process, SQLite) gunicorn runs gthread workers
instead; for those, keep-alive and the connection cap in ``on_starting`` apply.
"""
import gc
import os

from gunicorn.config import WorkerConnections

worker_class = "sync"


def _workers():
    configured = os.environ.get("STEPMARK_WEB_WORKERS") or os.environ.get("WEB_CONCURRENCY")
    if configured:
        return int(configured)
    # The CPUs this process may run on (a container's cpuset), where the OS tells (not macOS).
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    return 2 * cpus + 2


workers = _workers()
# An import runs inside its request (labeling/api/import_export.py): a large upload may
# take minutes. Files bigger than that belong to the CLI (``manage.py import_prm800k``).
timeout = 300

# gthread only: keep-alive spares each annotator a new connection per request.
keepalive = 2

CONNECTIONS_PER_THREAD = 2


def on_starting(server):
    """Cap each gthread worker's connections at ``CONNECTIONS_PER_THREAD`` x its threads.

    A gthread worker keeps every keep-alive connection it accepts, and when many clients
    connect at once one worker can take most of them. Under bench/annotator_loop.py (32
    annotators, 2 workers of 8 threads) a few annotators' median request took 15-50 ms while
    most took 130-190 ms: those sat on a worker holding most of the connections. With the cap
    a worker stops accepting while it has that many clients, the rest wait in the listen
    queue for a worker with room, and the load stays even. Left alone when set explicitly
    (``--worker-connections``).
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
    collection walked them all again: with bench/annotator_loop.py (6 workers, 20 s) the
    collector took 0.26 s of a worker's 3.6 s of request CPU, and its full passes were where
    the slowest requests (335-380 ms) stalled. ``gc.freeze()`` moves them out of the
    collector's sight. Collections then run between requests (``post_request``).
    """
    from django.urls import get_resolver

    get_resolver().url_patterns  # imports the URLconf and every view
    gc.freeze()
    _, middle, old = gc.get_threshold()
    gc.set_threshold(GC_AUTOMATIC_THRESHOLD, middle, old)


def post_request(worker, req, environ, resp):
    """Collect garbage after a response has gone out, not while a request waits for it.

    A request of the annotator loop leaves about 230 objects in reference cycles (Django's
    and DRF's request, view and response objects point at each other), which only the
    collector frees: under bench/annotator_loop.py a young collection every ~40 requests
    freed about 10,600 objects and took 8-21 ms of CPU, 15-80 ms of a request's wall time on
    the shared cores. Run here, the pause falls between requests: 3 pairs of 20 s runs
    against collecting inside requests, the slowest request went from 253-314 ms to
    155-174 ms, and p99 down by 7-13 ms at equal throughput.
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
