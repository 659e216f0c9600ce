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
    if in_worker:
        # One thread for torch (OpenMP) in each test process and in the servers and workers it
        # starts, set before anything imports torch: with several processes on the cores, each
        # one's second thread only waits its turn. The tests without Django took 88 s in one
        # process and 57 s in two of one thread; the Django tests of tests/scoring 75 s on 3
        # workers of two threads and 44 s of one (docs/performance.md).
        os.environ.setdefault("OMP_NUM_THREADS", "1")
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


# Scheduling ---------------------------------------------------------------------------------
# ``--dist loadfile`` (make test's) hands each worker whole files, so that a file's
# module-scoped fixtures (a browser, gunicorn and nginx, the loaded demo) start once. Here it is
# refined for this suite, whose time sits in a few long files and tests: those start first, and
# the files below whose tests share nothing costly are handed out test by test, so that their
# long tests run side by side. An entry missing from these lists costs time, never a result.

# Started first, in this order (a file, or a test of one): the longest, measured with
# --durations=0 under xdist (2026-11-27).
LONGEST_FIRST = (
    "tests/browser/test_rendering.py",
    "tests/test_demo.py::test_make_demo_runner_serves_then_stops_everything_it_started",
    "tests/test_demo.py",
    "tests/security/test_login_lockout.py",
    "tests/e2e/test_fault_tolerance.py::test_killed_while_training",
    "tests/labeling/api/test_schema_fuzz.py",
    "tests/browser/test_demo_pages.py",
    "tests/security/test_malformed_input.py",
    "tests/e2e/",
    "tests/labeling/work/test_queue_concurrency.py",
    "tests/labeling/exports/test_prm800k_roundtrip.py",
    "tests/scoring/test_jobs.py",
    "tests/labeling/test_outages.py",
    "tests/test_proxy.py",
    "tests/security/test_headers.py",
)
# Files without module-scoped fixtures whose tests are handed out one by one (a parametrized
# test's cases one by one too).
ONE_BY_ONE = (
    "tests/e2e/test_fault_tolerance.py",
    "tests/labeling/access/test_membership_scoping.py",
    "tests/labeling/work/test_queue_concurrency.py",
    "tests/labeling/exports/test_prm800k_roundtrip.py",
    "tests/scoring/test_jobs.py",
    "tests/labeling/test_outages.py",
    "tests/test_proxy.py",
    "tests/security/test_headers.py",
    "tests/security/test_accounts.py",
    "tests/labeling/work/test_queue.py",
)
# Tests (all their cases together) that form a unit of their own, apart from their file's:
# the demo runner's three runs share one demo folder, and nothing with the rest of test_demo.py.
ON_THEIR_OWN = ("tests/test_demo.py::test_make_demo_runner_serves_then_stops_everything_it_started",)


def unit_of(nodeid):
    """The unit of work (handed to one worker whole) that the test ``nodeid`` belongs to."""
    file, _, test = nodeid.partition("::")
    function = f"{file}::{test.split('[', 1)[0]}"
    if file in ONE_BY_ONE:
        return nodeid
    if function in ON_THEIR_OWN:
        return function
    return file


def rank(unit):
    """Where ``unit`` comes in LONGEST_FIRST (after all of them when it is not named there)."""
    return next((i for i, prefix in enumerate(LONGEST_FIRST) if unit.startswith(prefix)), len(LONGEST_FIRST))


@pytest.hookimpl(optionalhook=True, tryfirst=True)
def pytest_xdist_make_scheduler(config, log):
    if config.getvalue("dist") != "loadfile":
        return None
    from xdist.scheduler import LoadScopeScheduling

    class LongestFirst(LoadScopeScheduling):
        def _split_scope(self, nodeid):
            return unit_of(nodeid)

        ordered = False

        def _assign_work_unit(self, node):
            if not self.ordered:  # the queue is made: the longest known first, then xdist's order (largest first)
                units = sorted(self.workqueue.items(), key=lambda item: rank(item[0]))  # a stable sort
                self.workqueue.clear()
                self.workqueue.update(units)
                self.ordered = True
            super()._assign_work_unit(node)

    return LongestFirst(config, log)
