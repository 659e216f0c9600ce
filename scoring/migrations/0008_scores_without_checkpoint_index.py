# The index on the checkpoint alone goes: the (checkpoint, solution) unique index serves its lookups,
# and the planner misused it for a checkpoint it has no statistics on (scoring/models.py, scoring/shards.py).
# Dropped by name rather than by AlterField, which on PostgreSQL would also drop the foreign key and add
# it back, checking every score row under a lock that stops the scoring's writes.
import django.db.models.deletion
from django.db import migrations, models

INDEX = "scoring_solutionscore_checkpoint_id_5ba69723"  # the name Django gave it (0001)


class Migration(migrations.Migration):

    dependencies = [
        ('scoring', '0007_simulation_run'),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            database_operations=[
                migrations.RunSQL(f'DROP INDEX IF EXISTS "{INDEX}"',
                                  reverse_sql=f'CREATE INDEX "{INDEX}" ON "scoring_solutionscore" ("checkpoint_id")'),
            ],
            state_operations=[
                migrations.AlterField(
                    model_name='solutionscore',
                    name='checkpoint',
                    field=models.ForeignKey(db_index=False, on_delete=django.db.models.deletion.CASCADE,
                                            related_name='scores', to='scoring.checkpoint'),
                ),
            ],
        ),
    ]
