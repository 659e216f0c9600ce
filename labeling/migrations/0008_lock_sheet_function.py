"""``stepmark_lock_sheet``: a save's or submit's lock and reads in one round trip, on PostgreSQL only.

``labeling.work.submission`` starts every draft save and submit by taking the solution's row lock,
reloading the assignment's mutable fields (read after the lock, so that they include what
the last lock holder committed) and reading the sheet: the steps the assignment may rate
with its ratings. As separate statements those are three round trips, all but the first
made while holding the lock. Inside a function each statement takes its own snapshot after
the lock, exactly as the separate statements did, and the web process waits once.

Returns nothing when the solution does not exist; else a first row with the assignment's
mutable fields (all NULL when the assignment does not exist), then one row per sheet step
in ``submission._SQL_SHEET``'s order. Its text is labeling/work/sql/stepmark_lock_sheet.v1.sql.
tests/labeling/work/test_submission_function.py compares it with the separate statements.
"""
from django.db import migrations

from labeling.work import sql

DROP = "DROP FUNCTION IF EXISTS stepmark_lock_sheet(bigint, bigint, varchar);"


def create(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(sql.load("stepmark_lock_sheet.v1"))


def drop(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(DROP)


class Migration(migrations.Migration):

    dependencies = [
        ("labeling", "0007_hand_out_function"),
    ]

    operations = [migrations.RunPython(create, drop)]
