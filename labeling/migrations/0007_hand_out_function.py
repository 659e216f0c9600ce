"""``stepmark_hand_out``: the queue's common hand-out in one round trip, on PostgreSQL only.

See ``labeling.work.queue.next_assignment``: it calls this function first and, when it returns
no row, runs its own (complete) path. The function covers the common case only, doing what
that path would do step for step, in the same lock order: the annotator's row locked, no
own work to resume, no gold due, no lapsed lease to reap; then the first open solution
(newest generation first, the head of each counter value compared, rows others hold
locked passed over), its live assignments counted under its lock (lapsed ones expired),
the assignment inserted and the counter set. It returns the hand-out's row and then one
row per model step of the solution (the payload's steps), or nothing: "ask the full path".

The function's text is labeling/work/sql/stepmark_hand_out.v1.sql. A later change to the
hand-out rules must change the function too: a new version file and a new migration that loads
it (0011 loads version 2); tests/labeling/work/test_queue_function.py runs the same scenarios
through both paths.
"""
from django.db import migrations

from labeling.work import sql

DROP = "DROP FUNCTION IF EXISTS stepmark_hand_out(bigint, bigint, timestamptz, timestamptz, integer, boolean, " \
       "double precision, double precision);"


def create(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(sql.load("stepmark_hand_out.v1"))


def drop(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(DROP)


class Migration(migrations.Migration):

    dependencies = [
        ("labeling", "0006_project_scoring_settings"),
    ]

    operations = [migrations.RunPython(create, drop)]
