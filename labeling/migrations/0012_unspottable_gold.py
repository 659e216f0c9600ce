"""Gold nobody can spot: the queue's last key a scramble of the id, and an index to find a random gold item.

- solution_open_idx ends with the queue key, ``(id * 2654435761) % 2**32`` (labeling/models/
  content.py), instead of the id, so the candidate scan still reads the index in queue order
  while a problem's candidates are not served back to back.
- solution_gold_idx finds the first unseen gold item from a random point in one index probe
  however many gold items a project has (queue._gold_beside_open).

This migration also loaded version 3 of the PostgreSQL function ``stepmark_hand_out``; issue #27
removed the function (migration 0022), and a fresh database never creates it.
"""
from django.db import migrations, models
from django.db.models import F, Q


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
    ]
