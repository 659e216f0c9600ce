"""gunicorn.conf.py: the web process's settings, as gunicorn loads them."""
import os
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


def clean(config):
    return {k.strip(): v.strip() for k, v in config.items()}


def test_gunicorn_loads_the_file_from_the_repository_root(monkeypatch):
    monkeypatch.delenv("STEPMARK_WEB_WORKERS", raising=False)
    monkeypatch.delenv("WEB_CONCURRENCY", raising=False)
    config = clean(printed_config())
    assert config["config"] == "./gunicorn.conf.py"
    # Sync workers, 2 per CPU + 2, and time for an import inside its request.
    assert config["worker_class"] == "sync" and config["threads"] == "1"
    assert config["workers"] == str(2 * len(os.sched_getaffinity(0)) + 2)
    assert config["timeout"] == "300"
    assert config["on_starting"] == "<on_starting()>"  # the file's hook, not gunicorn's no-op


@pytest.mark.parametrize("variable", ["STEPMARK_WEB_WORKERS", "WEB_CONCURRENCY"])
def test_the_worker_count_comes_from_the_environment(monkeypatch, variable):
    monkeypatch.delenv("STEPMARK_WEB_WORKERS", raising=False)
    monkeypatch.delenv("WEB_CONCURRENCY", raising=False)
    monkeypatch.setenv(variable, "3")
    assert clean(printed_config())["workers"] == "3"


def test_threads_on_the_command_line_give_gthread_with_keep_alive():
    config = clean(printed_config("--threads", "8"))
    assert config["threads"] == "8" and config["keepalive"] == "2"
    cfg = Config()
    cfg.set("worker_class", "sync")
    cfg.set("threads", 8)
    assert cfg.worker_class_str == "gthread"  # gunicorn's own switch for sync with threads


@pytest.mark.parametrize("threads", [1, 4, 8])
def test_a_worker_holds_two_connections_a_thread(threads):
    assert after_start(threads) == 2 * threads


def test_an_explicit_connection_limit_is_kept():
    assert after_start(8, connections=64) == 64


def test_a_worker_freezes_what_it_loaded_and_collects_young_objects_less_often():
    # In a process of its own: the hook changes the collector of whoever calls it.
    probe = (
        "import gc, runpy; import django.db.models, rest_framework.views;"
        " before = gc.get_threshold();"
        " runpy.run_path('gunicorn.conf.py')['post_worker_init'](None);"
        " print(gc.get_freeze_count(), *before, *gc.get_threshold())"
    )
    run = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    frozen, *thresholds = map(int, run.stdout.split())
    assert frozen > 10_000  # the loaded modules' objects, out of the collector's sight
    young, middle, old, *after = thresholds
    assert after == [10_000, middle, old] and young < 10_000
    assert clean(printed_config())["post_worker_init"] == "<post_worker_init()>"
