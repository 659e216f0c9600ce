"""tests/workers.py, the plugin that sets up each pytest-xdist worker of make test."""
import os
import subprocess
import sys

import pytest

from tests import workers
from tests.conftest import ROOT


@pytest.fixture
def environment(monkeypatch):
    """The hook's variables, put back as they were after the test (the hook writes some of them)."""
    for name in ("REDIS_URL", "E2E_REDIS_DB", "OMP_NUM_THREADS", "PYTEST_XDIST_WORKER", "TEST_REDIS_DBS"):
        if name in os.environ:
            monkeypatch.setenv(name, os.environ[name])
        else:
            monkeypatch.delenv(name, raising=False)
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    return monkeypatch


def test_a_worker_among_several_gets_one_thread_for_torch_and_what_it_starts(environment):
    # Two processes' threads on two cores only take turns (docs/performance.md, the test suite).
    environment.setenv("PYTEST_XDIST_WORKER", "gw1")
    environment.setenv("TEST_REDIS_DBS", "8-11")
    workers.pytest_load_initial_conftests(None, None, [])
    assert os.environ["OMP_NUM_THREADS"] == "1"
    assert os.environ["REDIS_URL"].endswith("/10") and os.environ["E2E_REDIS_DB"] == "11"


def test_a_run_in_one_process_leaves_the_threads_alone(environment):
    environment.delenv("PYTEST_XDIST_WORKER", raising=False)
    environment.delenv("TEST_REDIS_DBS", raising=False)
    workers.pytest_load_initial_conftests(None, None, [])
    assert "OMP_NUM_THREADS" not in os.environ


def test_a_thread_count_set_by_hand_is_kept(environment):
    environment.setenv("PYTEST_XDIST_WORKER", "gw0")
    environment.setenv("TEST_REDIS_DBS", "8-9")
    environment.setenv("OMP_NUM_THREADS", "3")
    workers.pytest_load_initial_conftests(None, None, [])
    assert os.environ["OMP_NUM_THREADS"] == "3"


def test_torch_imported_after_the_plugin_in_a_worker_has_one_thread(tmp_path):
    # A pytest process that takes itself for worker gw0 (as xdist starts it), with a test that
    # imports torch as the PRM tests do: the plugin must have set the variable before that.
    (tmp_path / "test_probe.py").write_text(
        "import torch\n\ndef test_threads():\n    assert torch.get_num_threads() == 1, torch.get_num_threads()\n")
    env = {name: value for name, value in os.environ.items() if name not in ("OMP_NUM_THREADS", "DJANGO_SETTINGS_MODULE")}
    env.update(PYTEST_XDIST_WORKER="gw0", TEST_REDIS_DBS="8-9", PYTHONPATH=str(ROOT))
    run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "tests.workers", "-p", "no:django",
                          "-p", "no:cacheprovider", "test_probe.py"], cwd=tmp_path, env=env, capture_output=True, text=True)
    assert run.returncode == 0, run.stdout + run.stderr
