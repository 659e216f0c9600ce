"""Shared fixtures.

The suite runs against the real PostgreSQL and Redis named by DATABASE_URL and REDIS_URL
(`make test` sets localhost defaults). A service that cannot be reached fails the run; it is
never skipped. The PRM core's tests (tests/scoring/prm) also run without Django
(`-p no:django`, as `make test` runs them first); then no database is checked, none is used.
"""
import os
from pathlib import Path

import pytest

from labeling.data import data_dir as _data_dir

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
    if not _data_dir().is_dir():
        raise pytest.UsageError(f"The data directory {_data_dir()} is missing (data/ in the repository, or $STEPMARK_DATA)")


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
