"""Each pytest-xdist worker's own Redis databases (``make test`` runs the suite with ``-n``).

A plugin (pyproject.toml's ``addopts`` loads it with ``-p tests.workers``), not a conftest: it
must set the environment before pytest-django reads the settings, which read ``REDIS_URL``,
and the conftests load after that. Servers and Celery workers that tests start as processes
inherit the same environment.

``TEST_REDIS_DBS`` names the Redis databases the run may use, as ``8-15`` or ``2,3,7``: each
process that runs tests takes two of them, in the order given, one for the caches (throttles,
locks, the dashboard: ``REDIS_URL``) and one for the broker the tests publish to
(``E2E_REDIS_DB``: the end-to-end tests' Celery worker, the researcher API's queued tasks),
flushed by the tests that use it. Worker ``gwN`` takes the pair at ``2N``; a run without
``-n`` takes the first. Without ``TEST_REDIS_DBS``, ``REDIS_URL`` and ``E2E_REDIS_DB`` are used
as given, which only one process at a time can do: ``-n`` then is refused. The PostgreSQL
test database is pytest-django's, which names it per worker (``test_<name>_gw0``...).
"""
import os

import pytest


def parse_dbs(spec):
    """``"8-15"`` or ``"2,3,7"`` (or both, comma separated): the database numbers, in order."""
    dbs = []
    for part in (p.strip() for p in spec.split(",")):
        if not part:
            continue
        first, _, last = part.partition("-")
        if not first.isdigit() or (last and not last.isdigit()):
            raise pytest.UsageError(f"TEST_REDIS_DBS: {part!r} is neither a number nor a range such as 8-15")
        dbs.extend(range(int(first), int(last or first) + 1))
    if len(set(dbs)) != len(dbs):
        raise pytest.UsageError(f"TEST_REDIS_DBS names a database twice: {spec!r}")
    return dbs


def worker_index():
    """0 for gw0 (and for a run without xdist), 1 for gw1, ..."""
    worker = os.environ.get("PYTEST_XDIST_WORKER", "gw0")
    return int(worker.removeprefix("gw"))


def workers_wanted(config):
    """The worker count that ``-n`` asks for (0 without it), or None where xdist decides later (``-n auto``)."""
    numprocesses = getattr(config.option, "numprocesses", None) or 0
    if getattr(config.option, "dist", "no") == "no" and not numprocesses:
        return 0
    return numprocesses if isinstance(numprocesses, int) else None


@pytest.hookimpl(tryfirst=True)
def pytest_load_initial_conftests(early_config, parser, args):
    spec = os.environ.get("TEST_REDIS_DBS", "").strip()
    in_worker = "PYTEST_XDIST_WORKER" in os.environ
    if not spec:
        if in_worker:
            raise pytest.UsageError("pytest -n runs one process per worker, each needs Redis databases of its own: "
                                    "set TEST_REDIS_DBS (as make test does), e.g. TEST_REDIS_DBS=8-15 for four workers")
        return
    dbs = parse_dbs(spec)
    index = worker_index()
    if len(dbs) < 2 * (index + 1):
        raise pytest.UsageError(f"TEST_REDIS_DBS={spec!r} holds {len(dbs)} Redis databases: worker {index} "
                                f"needs two of its own, so at least {2 * (index + 1)} for this many workers")
    cache, broker = dbs[2 * index], dbs[2 * index + 1]
    base = os.environ.get("REDIS_URL", "redis://127.0.0.1:6379/0").rsplit("/", 1)[0]
    os.environ["REDIS_URL"] = f"{base}/{cache}"
    os.environ["E2E_REDIS_DB"] = str(broker)


def pytest_configure(config):
    """Refuse up front a worker count the databases cannot serve (not in the workers themselves)."""
    if "PYTEST_XDIST_WORKER" in os.environ:
        return
    wanted = workers_wanted(config)
    spec = os.environ.get("TEST_REDIS_DBS", "").strip()
    if wanted and not spec:
        raise pytest.UsageError(f"pytest -n {wanted}: each worker needs Redis databases of its own: set TEST_REDIS_DBS "
                                f"(as make test does) to {2 * wanted} of them, e.g. TEST_REDIS_DBS=8-{7 + 2 * wanted}")
    if wanted and len(parse_dbs(spec)) < 2 * wanted:
        raise pytest.UsageError(f"pytest -n {wanted} needs {2 * wanted} Redis databases, two per worker; "
                                f"TEST_REDIS_DBS={spec!r} holds {len(parse_dbs(spec))}")

