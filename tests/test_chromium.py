"""The tests' shared Chromium (the ``chromium`` fixture of tests/conftest.py) and the test database.

Playwright's sync API runs an event loop in the test process's thread until the end of the run,
and while it runs asgiref hands Django a connection of its own there. A pytest process with one
test that reads the database before Chromium starts and one after must still drop its test
database at the end.
"""
import os
import subprocess
import sys

import psycopg
import pytest

from tests.conftest import ROOT, database_url

PROBE = '''
import pytest
from django.contrib.auth.models import User


@pytest.mark.django_db
def test_before_chromium():
    assert not User.objects.exists()


@pytest.mark.django_db
def test_with_chromium(chromium):
    assert chromium.is_connected()
    assert not User.objects.exists()  # on the connection asgiref keeps while Playwright's loop runs
'''


@pytest.mark.browser
def test_a_run_that_used_chromium_drops_its_test_database(tmp_path):
    (tmp_path / "test_probe.py").write_text(PROBE)
    name = f"chromium_probe_{os.getpid()}"
    env = {key: value for key, value in os.environ.items() if key != "PYTEST_XDIST_WORKER"}
    env.update(DATABASE_URL=database_url().rsplit("/", 1)[0] + f"/{name}", DJANGO_SETTINGS_MODULE="annotator.settings",
               PYTHONPATH=str(ROOT))
    # No migrations (the tables made from the models): this run is about the database's end.
    run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "tests.conftest", "-p", "no:cacheprovider",
                          "--nomigrations", "test_probe.py"],
                         cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    output = run.stdout + run.stderr
    assert run.returncode == 0 and "2 passed" in output, output
    assert "being accessed by other users" not in output, output
    with psycopg.connect(database_url(), autocommit=True) as admin:
        assert admin.execute("SELECT 1 FROM pg_database WHERE datname = %s", [f"test_{name}"]).fetchone() is None
