"""Gold nobody can spot: gold due by a server-side draw and served by ``stepmark_hand_out``, and the
queue's last key a scramble of the id.

Measured on version 2 (issue #18): an annotator predicted every gold hand-out from the schedule
(a function of their own id, their assignment count and the rate), a gold hand-out took the Python
path (median ``next`` 10.1 ms against 4.1 ms), and ordinary work came in id order, a problem's
candidates back to back, so a gold item broke a visible run.

- Version 3 of the function takes ``p_gold_start`` (NULL, or where to look for a gold item:
  queue.next_assignment draws both from the operating system's randomness) instead of the rate
  and the annotator's phase, and hands out the first unseen gold item from that point itself,
  with the statements of ordinary work. solution_gold_idx keeps that one index probe however
  many gold items a project has (sorting them all at random cost a gold hand-out 0.3 ms more
  than an ordinary one on SQLite with 200 of them, enough to tell them apart).
- solution_open_idx ends with the queue key, ``(id * 2654435761) % 2**32`` (labeling/models/
  content.py), instead of the id, so the candidate scan still reads the index in queue order.

The function is written out in full in labeling/work/sql/stepmark_hand_out.v3.sql; the reverse
loads version 2 again.
"""
from django.db import migrations, models
from django.db.models import F, Q

from labeling.work import sql


def create(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        # A new argument list makes a new function: drop version 2's signature first.
        schema_editor.execute("DROP FUNCTION IF EXISTS stepmark_hand_out(bigint, bigint, timestamptz, timestamptz, "
                              "integer, boolean, double precision, double precision)")
        # No parameters: the body's "%" (the queue key) is SQL's modulo, not a placeholder.
        schema_editor.execute(sql.load("stepmark_hand_out.v3"), params=None)


def restore(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute("DROP FUNCTION IF EXISTS stepmark_hand_out(bigint, bigint, timestamptz, timestamptz, "
                              "integer, boolean, bigint)")
        schema_editor.execute(sql.load("stepmark_hand_out.v2"))


class Migration(migrations.Migration):
    dependencies = [("labeling", "0011_hand_out_plans")]

    operations = [
        migrations.RemoveIndex(model_name="solution", name="solution_open_idx"),
        migrations.AddIndex(
            model_name="solution",
            index=models.Index(
                F("project"), F("generation"), F("live_assignments"), F("selection_rank"),
                (F("id") * 2654435761) % 4294967296,
                condition=Q(is_gold=False, is_screening=False),
                name="solution_open_idx",
            ),
        ),
        migrations.AddIndex(
            model_name="solution",
            index=models.Index(
                F("project"), (F("id") * 2654435761) % 4294967296,
                condition=Q(is_gold=True, is_screening=False),
                name="solution_gold_idx",
            ),
        ),
        migrations.RunPython(create, restore),
    ]
