"""The promotion gate's settings on the project: how many held-out problems, what confidence, what guard tolerance."""
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("labeling", "0023_solution_is_full")]

    operations = [
        migrations.AddField(
            model_name="project", name="promotion_min_problems",
            field=models.PositiveIntegerField(
                default=50, help_text="Held-out problems needed to judge a new checkpoint at all; with fewer, the champion stays."),
        ),
        migrations.AddField(
            model_name="project", name="promotion_confidence",
            field=models.FloatField(
                default=0.95, help_text="One-sided confidence at which the gain on retrain_metric must be above 0 "
                "(paired bootstrap over held-out problems)."),
        ),
        migrations.AddField(
            model_name="project", name="promotion_guard_tolerance",
            field=models.FloatField(
                default=0.02, help_text="How much worse than the champion's the log loss and the expected calibration error "
                "of a new checkpoint may be (absolute)."),
        ),
    ]
