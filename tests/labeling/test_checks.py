"""The database checks: what ``manage.py migrate`` and ``check --database`` warn about."""
import io

import pytest
from django.core.management import call_command
from django.db import connection

from labeling.checks import AUTOVACUUM_OFF, check_autovacuum

pytestmark = pytest.mark.django_db


def autovacuum():
    with connection.cursor() as cursor:
        cursor.execute("SHOW autovacuum")
        return cursor.fetchone()[0]


def test_the_warning_follows_the_servers_autovacuum_setting():
    ids = [problem.id for problem in check_autovacuum(databases=["default"])]
    assert ids == ([] if autovacuum() == "on" else [AUTOVACUUM_OFF])


def test_without_a_database_nothing_is_asked():
    assert check_autovacuum(databases=None) == []


def test_check_with_the_database_reports_it():
    out, err = io.StringIO(), io.StringIO()
    call_command("check", databases=["default"], stdout=out, stderr=err)
    assert (AUTOVACUUM_OFF in out.getvalue() + err.getvalue()) == (autovacuum() != "on")
