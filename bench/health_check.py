"""What the database connection's health check costs each request, and what it saves.

    DJANGO_DEBUG=1 DATABASE_URL=postgres://... .venv/bin/python -m bench.health_check [--n 5000]

``CONN_HEALTH_CHECKS`` (annotator/settings.py) makes Django run ``SELECT 1`` on a kept
connection before a request's first query, so that a connection PostgreSQL dropped (a restart,
``pg_terminate_backend``) is replaced instead of failing that request. That round trip is the
whole cost: this prints its median and 99th percentile as Django runs it (``is_usable()``, the
settings' connection options, server-side binding included), next to the cost of opening a new
connection, which is what a request pays instead when its connection is dead. Reads nothing
and writes nothing; any database of the server will do.
"""
import argparse
import statistics
import time


def _timings(call, n):
    seconds = []
    for _ in range(n):
        started = time.perf_counter()
        call()
        seconds.append(time.perf_counter() - started)
    return seconds


def _line(name, seconds):
    ordered = sorted(seconds)
    p99 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]
    return f"{name:<34} median {statistics.median(ordered) * 1e6:8.0f} µs   p99 {p99 * 1e6:8.0f} µs   ({len(ordered)} times)"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=5000, help="health checks to time")
    args = parser.parse_args(argv)

    import os

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "annotator.settings")
    import django

    django.setup()
    from django.db import connection

    if connection.vendor != "postgresql":
        raise SystemExit("set DATABASE_URL to a PostgreSQL database")
    connection.ensure_connection()
    checks = _timings(connection.is_usable, args.n)

    def reconnect():
        connection.close()
        connection.ensure_connection()

    connects = _timings(reconnect, max(20, args.n // 100))
    print(f"PostgreSQL {connection.pg_version // 10000}, health checks {'on' if connection.health_check_enabled else 'off'}"
          f" in the settings")
    print(_line("health check (SELECT 1)", checks))
    print(_line("a new connection instead", connects))


if __name__ == "__main__":
    main()
