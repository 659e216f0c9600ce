"""Shared fixtures.

The suite runs against the real PostgreSQL and Redis named by DATABASE_URL and REDIS_URL
(`make test` sets localhost defaults). A service that cannot be reached fails the run; it is
never skipped. The PRM core's tests (tests/scoring/prm) also run without Django
(`-p no:django`, as `make test` runs them first); then no database is checked, none is used.
"""
import contextlib
import json
import os
import socket
from pathlib import Path

import pytest

from labeling.data import data_dir as _data_dir
from labeling.data import open_text

ROOT = Path(__file__).resolve().parent.parent


def pytest_addoption(parser, pluginmanager):
    if not pluginmanager.has_plugin("django"):
        # pyproject.toml names the settings for pytest-django; without the plugin, nothing reads them
        parser.addini("DJANGO_SETTINGS_MODULE", "read by pytest-django only")


def pytest_sessionstart(session):
    if session.config.pluginmanager.has_plugin("django"):
        from django.conf import settings

        engine = settings.DATABASES["default"]["ENGINE"]
        if "postgresql" not in engine:
            raise pytest.UsageError(
                "The test suite needs PostgreSQL: set DATABASE_URL (make test does) — got " + engine
            )
        from tests import flush

        flush.install()
    if not _data_dir().is_dir():
        raise pytest.UsageError(f"The data directory {_data_dir()} is missing (data/ in the repository, or $STEPMARK_DATA)")


@pytest.fixture(scope="session")
def chromium(request):
    """This test process's Chromium (tests/chromium.py), launched by the first test that asks for it."""
    from playwright.sync_api import sync_playwright

    from tests import chromium as flags

    assert os.path.exists(flags.path()), "Chromium is not installed (make chromium)"
    # Playwright's sync API keeps an event loop in this thread until the browser closes, at the end
    # of the run; Django refuses ORM calls from a thread with a running loop unless told that this
    # is deliberate.
    os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=flags.path(), args=flags.ARGS)
        yield browser
        # While that loop runs, asgiref keeps this thread's Django connections in a context variable,
        # apart from the ones it had before: the connection the tests used since is closed here,
        # before the loop stops and hides it. Left open, it kept pytest-django from dropping the
        # worker's test database ("being accessed by other users").
        if request.config.pluginmanager.has_plugin("django"):
            from django.db import connections

            connections.close_all()
        browser.close()


def database_url():
    """The URL of the database the tests use (pytest-django's), for a server or worker started as a process."""
    from django.db import connection

    db = connection.settings_dict
    auth = f"{db['USER']}:{db['PASSWORD']}" if db.get("PASSWORD") else db["USER"]
    return f"postgres://{auth}@{db['HOST'] or '127.0.0.1'}:{db['PORT'] or 5432}/{db['NAME']}"


@contextlib.contextmanager
def silent_port():
    """A port on 127.0.0.1 whose connections the kernel accepts (the listen backlog) and nobody
    ever answers: a backing service that stopped answering without refusing."""
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(64)
        yield listener.getsockname()[1]


def use_broker(app, url, transport_options=None):
    """Point the Celery app of this process at ``url``, dropping connections to the old one."""
    app.conf.broker_url = url
    app.conf.broker_transport_options = transport_options or {}
    app._pool = None
    app.amqp._producer_pool = None  # the publisher's pool caches the old connection


@pytest.fixture(scope="session")
def data_dir():
    """The data the tests read (``labeling.data.data_dir()``: the repository's ``data/``)."""
    return _data_dir()


@pytest.fixture(scope="session")
def redis_url():
    import redis

    url = os.environ.get("REDIS_URL", "redis://127.0.0.1:6379/15")
    redis.Redis.from_url(url).ping()  # raises (fails the test) when Redis is down
    return url


def broker_db_url(redis_url):
    """The Redis database the tests' Celery broker uses (``E2E_REDIS_DB``, default 13; with xdist
    each worker's own, tests/workers.py): on the server of ``redis_url``, apart from its caches."""
    return redis_url.rsplit("/", 1)[0] + "/" + os.environ.get("E2E_REDIS_DB", "13")


TEST_GATE_RESAMPLES = 200
# A module's or session's fixture runs before this module's autouse fixture: one that makes
# accounts names these itself.
FAST_HASHERS = ["tests.factories.FastPBKDF2PasswordHasher"]


@pytest.fixture(autouse=True)
def fast_settings(request):
    """Every test hashes passwords with the production algorithm at a thousandth of its rounds
    (tests/factories.py): the production cost, half a second a password by design, is for
    attackers, and the suite makes thousands of users. Tests that check the hashers name
    their own PASSWORD_HASHERS. No setting where Django is not loaded (the PRM core's run)."""
    if not request.config.pluginmanager.has_plugin("django"):
        yield
        return
    settings = request.getfixturevalue("settings")
    settings.PASSWORD_HASHERS = FAST_HASHERS
    # WhiteNoise looks a static file up when it is asked for, as in development, instead of
    # listing every file of the finders (admin, DRF, Swagger UI, the frontend) each time a test
    # client loads the middleware: 60 ms a client, for thousands of clients.
    settings.WHITENOISE_AUTOREFRESH = True
    # The promotion gate's bootstrap (scikit-learn's metrics, 2 ms a draw and model) at a fifth of
    # its draws: the tests here judge what a decision records, tests/scoring/prm/test_gate.py the
    # statistics at the default.
    settings.STEPMARK_GATE_RESAMPLES = TEST_GATE_RESAMPLES
    yield


@pytest.fixture
def example(data_dir):
    """PRM800K's README record (phase 2: found_error, five completions at position 2), fresh per test."""
    return json.loads((data_dir / "prm800k" / "readme_example_record.json").read_text())


@pytest.fixture
def native(data_dir):
    """The eight real PRM800K records of native_records.jsonl.gz (phase 1 and 2, screening, give_up)."""
    with open_text(data_dir / "prm800k" / "native_records.jsonl.gz") as f:
        return [json.loads(line) for line in f if line.strip()]


@pytest.fixture
def export_dir(settings, tmp_path):
    """Snapshots go to a fresh folder, which keeps the latest two per project, of any age."""
    settings.STEPMARK_EXPORT_DIR = tmp_path / "exports"
    settings.STEPMARK_EXPORT_KEEP = 2
    settings.STEPMARK_EXPORT_RETENTION_DAYS = 0
    return settings.STEPMARK_EXPORT_DIR


@pytest.fixture
def eager():
    """STEPMARK_BROKER=eager's setting, for one test: a queued job runs inline."""
    from annotator.celery import app

    app.conf.task_always_eager = True
    yield
    app.conf.task_always_eager = False


@pytest.fixture(scope="session")
def asy_problems(data_dir):
    """The MATH-500 records whose problem holds an ``[asy]`` diagram (42 of the 500), in file order."""
    with open_text(data_dir / "math" / "math500.jsonl.gz") as f:
        records = [json.loads(line) for line in f if line.strip()]
    return [r for r in records if "[asy]" in r["problem"]]


@pytest.fixture(scope="session")
def tiny_base(tmp_path_factory):
    """A tiny random BERT with the MiniLM tokenizer: the projects' base model where the jobs must
    run whole but the model's size is not what is tested (the e2e loop, the demo's first jobs).
    The bundled MiniLM itself trains and scores in tests/scoring/test_jobs.py."""
    import torch
    from transformers import AutoTokenizer, BertConfig, BertModel

    from scoring.prm.model import default_base_model

    path = tmp_path_factory.mktemp("tiny_base") / "bert"
    tokenizer = AutoTokenizer.from_pretrained(str(default_base_model()), local_files_only=True)
    torch.manual_seed(0)
    model = BertModel(BertConfig(vocab_size=len(tokenizer), hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
                                 intermediate_size=64, max_position_embeddings=512))
    model.save_pretrained(path)
    tokenizer.save_pretrained(path)
    return path
