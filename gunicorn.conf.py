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


# Young objects collected after this many allocations net (Python's default is 700).
GC_YOUNG_THRESHOLD = 10_000


def post_worker_init(worker):
    """Keep the garbage collector off what the worker loaded, and run it less often.

    A worker holds about 125,000 objects once Django and DRF are loaded, all of them for
    life, and every full collection walked them all again: with bench/annotator_loop.py
    (6 workers, 20 s) the collector took 0.26 s of a worker's 3.6 s of request CPU, and its
    full passes were where the slowest requests (335-380 ms) stalled. ``gc.freeze()`` moves
    them out of the collector's sight; a larger young generation threshold means fewer,
    larger young collections (a request allocates a few thousand objects, nearly all gone
    when it ends). Measured the same way: 0.11 s, and the slowest requests 200-217 ms.
    """
    gc.freeze()
    _, middle, old = gc.get_threshold()
    gc.set_threshold(GC_YOUNG_THRESHOLD, middle, old)
