"""The environment variables' table (annotator/environment.py) and how the settings read it.

Settings are read once per process, so a start with a bad value runs in a subprocess.
"""
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from annotator.environment import TYPES, VARIABLES, read
from tests.conftest import ROOT


def start(**variables):
    """``manage.py check`` with the test environment plus ``variables``: the finished process."""
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "annotator.settings", **variables}
    return subprocess.run([sys.executable, "manage.py", "check"], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("name, value, why", [
    ("DJANGO_DEBUG", "maybe", "Not a valid boolean."),
    ("STEPMARK_DB_CONNECT_TIMEOUT", "5s", "Not a valid integer."),
    ("STEPMARK_REDIS_TIMEOUT", "soon", "Not a valid number."),
    ("STEPMARK_BROKER", "rabbitmq", "Must be one of: redis, filesystem, eager."),
    ("STEPMARK_LOG_LEVEL", "LOUD", "Not a valid log level."),
])
def test_a_bad_value_stops_the_start_naming_the_variable(name, value, why):
    done = start(**{name: value})
    assert done.returncode != 0
    assert "ImproperlyConfigured: Invalid environment variables" in done.stderr
    assert f"{name}={value!r}: {why}" in done.stderr


def test_every_bad_value_is_named_at_once():
    done = start(DJANGO_DEBUG="maybe", STEPMARK_EXPORT_KEEP="all")
    assert done.returncode != 0
    assert "DJANGO_DEBUG='maybe'" in done.stderr and "STEPMARK_EXPORT_KEEP='all'" in done.stderr


def test_values_are_parsed_by_their_type(monkeypatch):
    monkeypatch.setenv("DJANGO_DEBUG", "yes")
    monkeypatch.setenv("DJANGO_ALLOWED_HOSTS", " a.example.org, b.example.org,,")
    monkeypatch.setenv("STEPMARK_DB_SOCKET_TIMEOUT", "40")
    monkeypatch.setenv("STEPMARK_GRADING_TIMEOUT", "2.5")
    monkeypatch.setenv("STEPMARK_LOG_LEVEL", "info")
    values = read()
    assert values["DJANGO_DEBUG"] is True
    assert values["DJANGO_ALLOWED_HOSTS"] == ["a.example.org", "b.example.org"]
    assert values["STEPMARK_DB_SOCKET_TIMEOUT"] == 40 and values["STEPMARK_GRADING_TIMEOUT"] == 2.5
    assert values["STEPMARK_LOG_LEVEL"] == 20  # logging.INFO


def test_an_unset_or_empty_variable_gets_its_default_derived_ones_from_those_read_before(monkeypatch, tmp_path):
    for variable in VARIABLES:
        monkeypatch.delenv(variable.name, raising=False)
    monkeypatch.setenv("STEPMARK_VAR_DIR", str(tmp_path))
    monkeypatch.setenv("STEPMARK_TORCH_THREADS", "")  # compose's ${NAME:-}
    monkeypatch.setenv("REDIS_URL", "redis://cache:6379/3")
    values = read()
    assert values["STEPMARK_TORCH_THREADS"] == 0 and values["STEPMARK_VISIBILITY_TIMEOUT"] == 600.0
    assert values["STEPMARK_EXPORT_DIR"] == tmp_path / "exports"
    assert values["DATABASE_URL"] == f"sqlite:///{tmp_path / 'stepmark.sqlite3'}"
    assert values["CELERY_BROKER_URL"] == "redis://cache:6379/3"
    assert values["DJANGO_SECURE_COOKIES"] is True  # not debug
    monkeypatch.setenv("DJANGO_DEBUG", "1")
    assert read()["DJANGO_SECURE_COOKIES"] is False


def test_each_variable_is_declared_once_with_a_type_and_a_default_the_docs_can_show():
    names = [variable.name for variable in VARIABLES]
    assert len(names) == len(set(names))
    for variable in VARIABLES:
        assert variable.type in TYPES, variable.name
        assert variable.meaning.strip(), variable.name
        if callable(variable.default) or variable.default is None or isinstance(variable.default, Path):
            assert variable.shown, f"{variable.name}: say how the docs show its default"


SOURCES = {"annotator/settings.py": r'env\["([A-Z_]+)"\]', "gunicorn.conf.py": r'read\(\)\["([A-Z_]+)"\]'}


def test_the_settings_read_every_variable_of_the_table_and_only_through_it():
    used = set()
    for path, pattern in SOURCES.items():
        text = (ROOT / path).read_text()
        assert "os.environ.get(" not in text.replace('os.environ.get("WEB_CONCURRENCY")', ""), path
        used |= set(re.findall(pattern, text))
    assert used == {variable.name for variable in VARIABLES}
