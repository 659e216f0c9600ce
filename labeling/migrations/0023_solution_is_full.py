"""Full solutions leave the queue's index: ``Solution.is_full`` and solution_open_idx without the counter.

solution_open_idx held the live counter as its third column, so the queue read it one counter
value at a time (a subquery per value of 0..overlap-1 on every hand-out) to get rows in queue
order without walking the full ones. With ``is_full`` in the index's condition instead, open
work is one index scan in queue order, and the claim is one ``select_for_update(skip_locked=True)``.
"""
from django.db import migrations, models
from django.db.models import F, Q

MARK_FULL = """
UPDATE labeling_solution SET is_full = TRUE
WHERE live_assignments >= (SELECT p.overlap FROM labeling_project p WHERE p.id = labeling_solution.project_id)
"""


class Migration(migrations.Migration):
    dependencies = [("labeling", "0022_drop_loop_functions")]

    operations = [
        migrations.AddField(
            model_name="solution", name="is_full", field=models.BooleanField(db_default=False, default=False),
        ),
        # Plain SQL both PostgreSQL and SQLite (the demo) take: no alias on the updated table.
        migrations.RunSQL(MARK_FULL, migrations.RunSQL.noop),
        migrations.RemoveIndex(model_name="solution", name="solution_open_idx"),
        migrations.AddIndex(
            model_name="solution",
            index=models.Index(
                F("project"), F("generation"), F("selection_rank"), (F("id") * 2654435761) % 4294967296,
                condition=Q(is_full=False, is_gold=False, is_screening=False),
                name="solution_open_idx",
            ),
        ),
    ]
