"""tests/workers.py, the plugin that sets up each pytest-xdist worker of make test."""
import json
import os
import subprocess
import sys

from tests.conftest import ROOT

PROBE = '''
import json, os, pathlib, torch

def test_threads():
    found = {"omp": os.environ.get("OMP_NUM_THREADS"), "torch": torch.get_num_threads()}
    pathlib.Path(os.environ["PROBE_OUT"], os.environ.get("PYTEST_XDIST_WORKER", "main")).write_text(json.dumps(found))
'''


def _threads(tmp_path, *options):
    (tmp_path / "test_probe.py").write_text(PROBE)
    out = tmp_path / "out"
    out.mkdir()
    env = {k: v for k, v in os.environ.items() if k not in ("OMP_NUM_THREADS", "PYTEST_XDIST_WORKER")}
    env.update(PROBE_OUT=str(out), PYTHONPATH=str(ROOT), TEST_REDIS_DBS="8-11")
    env.pop("DJANGO_SETTINGS_MODULE", None)
    subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "tests.workers", "-p", "no:django", "-p", "no:cacheprovider",
                    *options, str(tmp_path / "test_probe.py")], cwd=tmp_path, env=env, check=True, capture_output=True)
    return {path.name: json.loads(path.read_text()) for path in out.iterdir()}


def test_each_of_several_test_processes_gives_torch_one_thread(tmp_path):
    # Two processes' threads on two cores only take turns (docs/performance.md, the test suite).
    assert _threads(tmp_path, "-n", "2") in (
        {"gw0": {"omp": "1", "torch": 1}}, {"gw1": {"omp": "1", "torch": 1}})


def test_a_run_in_one_process_leaves_torch_its_threads(tmp_path):
    default = subprocess.run([sys.executable, "-c", "import torch; print(torch.get_num_threads())"],
                             env={k: v for k, v in os.environ.items() if k != "OMP_NUM_THREADS"},
                             capture_output=True, text=True, check=True).stdout
    assert _threads(tmp_path) == {"main": {"omp": None, "torch": int(default)}}
