"""gunicorn.conf.py: the web process's settings, as gunicorn loads them."""
import os
import runpy
import subprocess
import sys
import textwrap
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


def in_a_process(code):
    """Run ``code`` in a fresh Python with Django set up; its printed words, as ints.

    In a process of its own: the hooks change the collector of whoever calls them.
    """
    setup = ("import os, gc, runpy, sys, weakref, django\n"
             "os.environ.setdefault('DJANGO_SETTINGS_MODULE', 'annotator.settings')\n"
             "django.setup()\nconf = runpy.run_path('gunicorn.conf.py')\n")
    run = subprocess.run([sys.executable, "-c", setup + textwrap.dedent(code)], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    return [int(word) for word in run.stdout.split()]


def test_a_worker_loads_the_views_freezes_them_and_collects_only_past_the_automatic_threshold():
    frozen, views_loaded, young, middle, old, *after = in_a_process(
        """
        before = gc.get_threshold()
        conf['post_worker_init'](None)
        print(gc.get_freeze_count(), int('labeling.api.work' in sys.modules), *before, *gc.get_threshold())
        """)
    assert frozen > 10_000 and views_loaded == 1  # the views' objects are frozen too
    assert after == [40_000, middle, old] and young < 10_000
    config = clean(printed_config())
    assert config["post_worker_init"] == "<post_worker_init()>"
    assert config["post_request"] == "<post_request()>"


def test_garbage_is_collected_between_requests_once_enough_has_piled_up():
    found = in_a_process(
        """
        conf['post_worker_init'](None)
        gc.collect()

        class Node:
            pass

        def cycle():
            a, b = Node(), Node()
            a.other, b.other = b, a
            return weakref.ref(a)

        few = [cycle() for _ in range(100)]
        early = conf['collect_between_requests']()
        print(-1 if early is None else early, sum(r() is not None for r in few))
        many = [cycle() for _ in range(6_000)]
        print(conf['collect_between_requests'](), sum(r() is not None for r in many), int(gc.get_count()[0] < 1_000))
        """)
    early, kept, generation, alive, emptied = found
    assert early == -1 and kept == 100  # below the threshold: nothing is collected yet
    assert generation in (0, 1, 2) and alive == 0 and emptied == 1
