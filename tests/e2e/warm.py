"""Celery worker processes forked from one warm interpreter per test process.

A worker that scores imports torch and transformers, one that trains the Trainer too: 5 to 11 s
of CPU on the two-core machine each time the e2e tests start a worker (13 in a run), before the
worker does anything the test is about. So each worker is a ``multiprocessing`` process of the
``forkserver`` method: a server process imports those libraries once, then forks each worker. The worker is still a process of its own, runs
Celery's own command line (``celery -A annotator worker ...``) with the test's environment, and
can be killed like any other; only the interpreter's imports of the libraries are shared.
Django and the project are imported in the worker, after its environment is set, as in a
worker started from the shell.
"""
import multiprocessing
import os
import signal
import subprocess
import sys

# The heavy third-party imports a worker makes, none of which reads Django's settings.
PRELOAD = ["torch", "transformers", "transformers.trainer", "sklearn.metrics", "accelerate", "peft",
           "celery.bin.celery", "billiard"]

# Read by huggingface_hub and tokenizers when they are imported: the server's environment must
# already say what every worker's says (tests/e2e/conftest.py worker_env).
IMPORT_TIME_ENV = {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"}

_context = None


def _forkserver():
    global _context
    if _context is None:
        for name, value in IMPORT_TIME_ENV.items():
            os.environ.setdefault(name, value)
        _context = multiprocessing.get_context("forkserver")
        _context.set_forkserver_preload(PRELOAD)
    return _context


def _run(argv, env, cwd, log_path):
    """The forked worker: the test's environment, its log as stdout and stderr, then Celery."""
    os.environ.clear()
    os.environ.update(env)
    os.chdir(cwd)
    log = os.open(log_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    os.dup2(log, 1)
    os.dup2(log, 2)
    os.close(log)
    sys.stdout = open(1, "w", buffering=1, closefd=False)
    sys.stderr = open(2, "w", buffering=1, closefd=False)
    signal.signal(signal.SIGINT, signal.default_int_handler)  # as in a process started from a shell
    sys.argv = argv
    from celery.bin.celery import main

    main()


class Forked:
    """The ``subprocess.Popen`` calls the tests make, on a forked worker."""

    def __init__(self, argv, env, cwd, log_path):
        self._process = _forkserver().Process(target=_run, args=(argv, env, str(cwd), str(log_path)), daemon=True)
        self._process.start()
        self.pid = self._process.pid

    @property
    def returncode(self):
        return self._process.exitcode

    def poll(self):
        return self._process.exitcode

    def send_signal(self, signum):
        if self._process.exitcode is None:
            os.kill(self.pid, signum)

    def terminate(self):
        self.send_signal(signal.SIGTERM)

    def kill(self):
        self.send_signal(signal.SIGKILL)

    def wait(self, timeout=None):
        self._process.join(timeout)
        if self._process.exitcode is None:
            raise subprocess.TimeoutExpired(self._process.name, timeout)
        return self._process.exitcode
