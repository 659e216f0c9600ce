"""gunicorn.conf.py: the web process's settings, as gunicorn loads them."""
import runpy
import subprocess
import sys
from pathlib import Path

import pytest
from gunicorn.config import Config

ROOT = Path(__file__).resolve().parent.parent


def printed_config(*argv):
    """``gunicorn --print-config`` run in the repository root, as the image and the demo start it."""
    check = subprocess.run([sys.executable, "-m", "gunicorn", "--check-config", "--print-config", *argv,
                            "annotator.wsgi"], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert check.returncode == 0, check.stderr
    return dict(line.split(" = ", 1) for line in check.stdout.splitlines() if " = " in line)


def after_start(threads, connections=None):
    """``worker_connections`` once the file's ``on_starting`` hook ran, as the workers get it."""
    cfg = Config()
    cfg.set("threads", threads)
    if connections is not None:
        cfg.set("worker_connections", connections)
    hook = runpy.run_path(str(ROOT / "gunicorn.conf.py"))["on_starting"]
    hook(type("Server", (), {"cfg": cfg}))
    return cfg.worker_connections


def test_gunicorn_loads_the_file_from_the_repository_root():
    config = {k.strip(): v.strip() for k, v in printed_config("--threads", "8").items()}
    assert config["config"] == "./gunicorn.conf.py"
    assert config["worker_class"] == "gthread" and config["keepalive"] == "2" and config["threads"] == "8"
    assert config["on_starting"] == "<on_starting()>"  # the file's hook, not gunicorn's no-op


@pytest.mark.parametrize("threads", [1, 4, 8])
def test_a_worker_holds_two_connections_a_thread(threads):
    assert after_start(threads) == 2 * threads


def test_an_explicit_connection_limit_is_kept():
    assert after_start(8, connections=64) == 64
