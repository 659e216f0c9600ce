"""``stepmark_hand_out`` planned once per connection, and its own-work check narrowed to the states it looks for.

Two changes to 0007's function, both found with bench/annotator_loop.py:

- Plans. PL/pgSQL plans a statement with parameters afresh on each call until a generic
  plan looks no dearer than the custom ones, and for the statement that finds the head of
  each counter value it never does: over ``generate_series(0, p_overlap - 1)`` a generic
  plan has to guess a thousand rows. So that statement was planned again on every hand-out.
  ``SET plan_cache_mode = force_generic_plan`` on the function keeps one plan per statement
  and connection; the statements are fixed-shape index lookups whose best plan does not
  depend on the values. A hand-out's database CPU went from 0.70-0.72 to 0.44-0.48 ms.
- The own-work check ("does the annotator hold unfinished work in the project?") asked for
  ``state = 'active' OR (state = 'expired' AND ...)``. PostgreSQL answered the active half
  from the partial lease index, every active assignment of the project, through a bitmap
  scan; an index entry whose row was since submitted stays in that index until VACUUM, and
  a bitmap scan, unlike a plain index scan, never marks such entries dead. So every
  hand-out re-read all the hand-outs submitted since the last VACUUM: about 4,000 entries
  and 0.5-0.9 ms by the end of a 30-second run. Naming the states as well (``state IN
  ('active', 'expired')``, implied by the condition, so the answer is the same) lets it
  read an index that leads with the state by a plain scan, which marks what it finds dead
  and skips it from then on. ``queue._SQL_RESUME``, the Python path's version, says the
  same.

The function is 0007's with those two edits, written out in full in
labeling/work/sql/stepmark_hand_out.v2.sql; the reverse loads version 1 again.
"""
from django.db import migrations

from labeling.work import sql


def create(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(sql.load("stepmark_hand_out.v2"))


def restore(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(sql.load("stepmark_hand_out.v1"))


class Migration(migrations.Migration):

    dependencies = [
        ("labeling", "0010_drop_duplicate_key_indexes"),
    ]

    operations = [migrations.RunPython(create, restore)]
