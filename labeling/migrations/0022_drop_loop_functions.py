"""Drop the PostgreSQL twins of the annotator loop (issue #27): the queue and the submission run in the ORM alone.

Databases migrated before this hold ``stepmark_hand_out`` (version 4) and ``stepmark_lock_sheet``;
a fresh one never created them (migrations 0007, 0008, 0011, 0012 and 0019 no longer do). Going
back does not create them again: no code calls them.
"""
from django.db import migrations

DROP = """DROP FUNCTION IF EXISTS stepmark_hand_out(bigint, bigint, timestamptz, timestamptz, integer, boolean, bigint);
DROP FUNCTION IF EXISTS stepmark_lock_sheet(bigint, bigint, varchar);"""


def drop(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(DROP, params=None)


class Migration(migrations.Migration):
    dependencies = [("labeling", "0021_lease_seconds_min")]
    operations = [migrations.RunPython(drop, migrations.RunPython.noop)]
