"""Gold only where ordinary work is open: version 4 of ``stepmark_hand_out``.

Measured on version 3 (issue #26): once ordinary work ran out for an annotator, ``next`` answered
204 unless gold was due, so every hand-out after the first 204 was gold while the page said
"No work for you now". Version 4 serves a due gold item only where a generation has ordinary work
open for the annotator, as ``queue._claim_open`` does: with none left the answer is "no work"
whatever the draw. The signature is unchanged; the reverse loads version 3 again.
"""
from django.db import migrations

from labeling.work import sql


def create(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        # No parameters: the body's "%" (the queue key) is SQL's modulo, not a placeholder.
        schema_editor.execute(sql.load("stepmark_hand_out.v4"), params=None)


def restore(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(sql.load("stepmark_hand_out.v3"), params=None)


class Migration(migrations.Migration):
    dependencies = [("labeling", "0018_loop_settings")]

    operations = [migrations.RunPython(create, restore)]
