"""The restart test's two web-process symptoms, replayed without restarting anything.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/stepmark DJANGO_DEBUG=1 \\
        .venv/bin/python -m bench.outages [--workers 4] [--requests 24] [--redis-requests 200]

The symptoms (issue #26): after PostgreSQL came back each gunicorn worker's dead persistent
connection answered one more 500, and while Redis was down the API answered HTML 500s and logged
a traceback per request (what the restart test saw and what this measured, before and after:
docs/performance.md#outages-benchoutagespy). Here gunicorn runs with production settings and
``--workers`` sync workers on the bench's own database:

1. PostgreSQL: ``--requests`` requests (``GET /api/me/`` with an unknown session cookie, which
   reads the session table: 403) give every worker a persistent connection; every connection of the
   database is then ended with ``pg_terminate_backend`` (what a restart does to them), and the
   same requests are sent again one by one. Printed: the answers before and after.
2. Redis: a second gunicorn whose ``REDIS_URL`` names a port nobody listens on gets
   ``--redis-requests`` token requests (``POST /api/auth/token/``: its throttle is in Redis).
   Printed: the answers, and the lines and tracebacks the web process logged.
"""
import argparse
import collections
import http.client
import tempfile
from pathlib import Path

from bench._database import bench_database_url, create_database, migrate, use_database
from bench._server import free_port, gunicorn


def _status(port, method, path, headers):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    conn.request(method, path, body=b"username=x&password=y" if method == "POST" else None, headers=headers)
    response = conn.getresponse()
    response.read()
    conn.close()
    return response.status


def _count(statuses):
    return ", ".join(f"{n} × {status}" for status, n in sorted(collections.Counter(statuses).items()))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, default=4)
    parser.add_argument("--requests", type=int, default=24)
    parser.add_argument("--redis-requests", type=int, default=200)
    args = parser.parse_args(argv)

    url = bench_database_url("postgres://postgres@127.0.0.1:5432/stepmark", "outagebench",
                             "bench.outages needs PostgreSQL: set DATABASE_URL")
    create_database(url)
    use_database(url)
    migrate()
    import psycopg

    session = {"Cookie": "sessionid=" + "x" * 32}  # looked up in the session table
    with gunicorn(url, workers=args.workers, threads=0, ready_path="/accounts/login/") as (port, _):
        before = [_status(port, "GET", "/api/me/", session) for _ in range(args.requests)]
        with psycopg.connect(url.replace("postgres://", "postgresql://", 1), autocommit=True) as admin:
            ended = admin.execute("SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity"
                                  " WHERE datname = current_database() AND pid <> pg_backend_pid()").fetchone()[0]
        after = [_status(port, "GET", "/api/me/", session) for _ in range(args.requests)]
    print(f"PostgreSQL, {args.workers} sync workers: before {_count(before)}; {ended} connections ended;"
          f" the next {args.requests} requests: {_count(after)}")

    form = {"Content-Type": "application/x-www-form-urlencoded"}
    with tempfile.TemporaryDirectory() as folder:
        log = Path(folder) / "gunicorn.log"
        with gunicorn(url, workers=args.workers, threads=0, ready_path="/accounts/login/", log_path=log,
                      env={"REDIS_URL": f"redis://127.0.0.1:{free_port()}/0"}) as (port, _):
            answers = [_status(port, "POST", "/api/auth/token/", form) for _ in range(args.redis_requests)]
        lines = log.read_text(errors="replace").splitlines()
    print(f"Redis refusing, {args.workers} sync workers: {args.redis_requests} token requests: {_count(answers)};"
          f" the web process logged {len(lines)} lines, {sum('Traceback' in line for line in lines)} tracebacks")
    for line, n in collections.Counter(line[:150] for line in lines).items():
        print(f"  {n} × {line}")


if __name__ == "__main__":
    main()
