"""A real Celery worker process against a real Redis broker, on the pytest-django test database.

The worker is ``celery -A annotator worker -Q default,gpu --pool=solo`` run in a process of
its own (forked from a warm interpreter that has imported torch and transformers,
tests/e2e/warm.py) with DATABASE_URL pointing at the test database, so it sees what the test
commits (tests use ``transactional_db``). The broker is a Redis database of its own (``E2E_REDIS_DB``,
default 13; each xdist worker's own, tests/workers.py), flushed before and after. Redis hands an unacknowledged task to the next worker
after ``STEPMARK_VISIBILITY_TIMEOUT`` seconds, set short here so that the fault tests see
redelivery within seconds.
"""
import os
import signal
import subprocess
import time
import uuid
from pathlib import Path

import pytest

from labeling.data import open_text
from tests.conftest import ROOT, TEST_GATE_RESAMPLES, broker_db_url, use_broker
from tests.e2e.warm import Forked

VISIBILITY_TIMEOUT = 4


@pytest.fixture(scope="session")
def e2e_broker(redis_url):
    """The broker URL; the test process's Celery app publishes there too while the tests run."""
    import redis

    from annotator.celery import app

    url = broker_db_url(redis_url)
    redis.Redis.from_url(url).flushdb()
    saved = app.conf.broker_url, app.conf.broker_transport_options
    use_broker(app, url, {"visibility_timeout": VISIBILITY_TIMEOUT})
    yield url
    use_broker(app, *saved)
    redis.Redis.from_url(url).flushdb()


@pytest.fixture
def e2e_dirs(tmp_path, settings):
    dirs = {"checkpoints": tmp_path / "checkpoints", "exports": tmp_path / "exports"}
    settings.STEPMARK_CHECKPOINT_DIR = dirs["checkpoints"]
    settings.STEPMARK_EXPORT_DIR = dirs["exports"]
    return dirs


class Worker:
    """One Celery worker process that can be started, killed (SIGKILL) and started again."""

    def __init__(self, env, log_dir):
        self.env, self.log_dir = env, log_dir
        self.process, self.name, self.starts = None, None, 0

    def start(self, timeout=90):
        from annotator.celery import app

        self.starts += 1
        self.name = f"e2e-{uuid.uuid4().hex[:8]}@localhost"
        self.log = self.log_dir / f"worker-{self.starts}.log"
        command = ["celery", "-A", "annotator", "worker", "-Q", "default,gpu", "--pool=solo", "-c", "1",
                   "-n", self.name, "--without-gossip", "--without-mingle", "-l", "info"]
        self.log.touch()
        self.process = Forked(command, self.env, ROOT, self.log)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"the worker exited with {self.process.returncode}:\n{self.tail()}")
            # A solo worker busy with a task answers no ping: its "ready" line counts too.
            if f"{self.name} ready." in self.log.read_text(errors="replace"):
                return self
            if app.control.ping(destination=[self.name], timeout=0.5):
                return self
        raise RuntimeError(f"the worker did not answer a ping in {timeout}s:\n{self.tail()}")

    def kill(self):
        """SIGKILL: no clean-up, no acknowledgement, as when a machine dies."""
        self.process.send_signal(signal.SIGKILL)
        self.process.wait(timeout=30)

    def stop(self):
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.kill()

    def tail(self, lines=40):
        return "\n".join(self.log.read_text(errors="replace").splitlines()[-lines:])


@pytest.fixture
def worker_env(transactional_db, e2e_broker, e2e_dirs):
    """The environment of a worker process that shares the test's database and broker."""
    from django.db import connection

    db = connection.settings_dict
    database_url = f"postgres://{db['USER']}@{db['HOST'] or '127.0.0.1'}:{db['PORT'] or 5432}/{db['NAME']}"
    env = dict(os.environ, DATABASE_URL=database_url, DJANGO_DEBUG="1", STEPMARK_BROKER="redis",
               CELERY_BROKER_URL=e2e_broker, REDIS_URL=e2e_broker, STEPMARK_VISIBILITY_TIMEOUT=str(VISIBILITY_TIMEOUT),
               STEPMARK_CHECKPOINT_DIR=str(e2e_dirs["checkpoints"]), STEPMARK_EXPORT_DIR=str(e2e_dirs["exports"]),
               STEPMARK_GATE_RESAMPLES=str(TEST_GATE_RESAMPLES), STEPMARK_TORCH_THREADS="1", OMP_NUM_THREADS="1",
               TOKENIZERS_PARALLELISM="false",
               HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1")
    if db.get("PASSWORD"):
        env["DATABASE_URL"] = database_url.replace(f"{db['USER']}@", f"{db['USER']}:{db['PASSWORD']}@")
    return env


@pytest.fixture
def worker_factory(worker_env, tmp_path):
    """Make workers (started by the test); every one still running is stopped at the end."""
    made = []

    def make(**extra_env):
        worker = Worker({**worker_env, **{k: str(v) for k, v in extra_env.items()}}, tmp_path)
        made.append(worker)
        return worker

    yield make
    for worker in made:
        worker.stop()
        if worker.process is not None:
            print(f"--- {worker.log.name} ---\n{worker.tail()}")  # shown when the test failed


@pytest.fixture
def worker(worker_factory):
    return worker_factory().start()


def wait_for(condition, *, timeout, every=0.1, message="condition"):
    """Poll ``condition`` until it returns something truthy; fail after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = condition()
        if found:
            return found
        time.sleep(every)
    raise AssertionError(f"timed out after {timeout}s waiting for {message}")


def gsm8k_slice(data_dir, path, problems):
    """The first ``problems`` lines of GSM8K's example model solutions (4 solutions each)."""
    with open_text(Path(data_dir) / "gsm8k" / "example_model_solutions.jsonl.gz") as source:
        path.write_text("".join(line for _, line in zip(range(problems), source)), encoding="utf-8")
    return path
