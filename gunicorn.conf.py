"""gunicorn settings of the web process, read by the Docker image, the demo and the benchmarks.

gunicorn loads ``./gunicorn.conf.py`` by itself when started in the repository root (the
image's working directory); flags on the command line (``--workers``, ``--threads``, ...)
still win.
"""
from gunicorn.config import WorkerConnections

# Threads serve long requests (a streamed export, an uploaded import) without holding a
# whole process, and keep-alive spares each annotator a new connection per request.
worker_class = "gthread"
keepalive = 2

CONNECTIONS_PER_THREAD = 2


def on_starting(server):
    """Cap each worker's connections at ``CONNECTIONS_PER_THREAD`` x its threads.

    A gthread worker keeps every keep-alive connection it accepts, and when many clients
    connect at once one worker can take most of them. Under bench/annotator_loop.py (32
    annotators, 2 workers of 8 threads) a few annotators' median request took 15-50 ms while
    most took 130-190 ms: those sat on a worker holding most of the connections. With the cap
    a worker stops accepting while it has that many clients, the rest wait in the listen
    queue for a worker with room, and the load stays even (every annotator's median 87-93 ms,
    p95 151 ms, 166 loops/s). Left alone when set explicitly (``--worker-connections``).
    """
    if server.cfg.worker_connections == WorkerConnections.default:
        server.cfg.set("worker_connections", CONNECTIONS_PER_THREAD * server.cfg.threads)
