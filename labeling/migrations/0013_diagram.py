"""Diagram: the [asy] diagrams of a project's text, drawn to SVG by a background job
(labeling/diagrams/), one row per code (its sha256), linked to the projects that hold it."""
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ("labeling", "0012_unspottable_gold"),
    ]

    operations = [
        migrations.CreateModel(
            name="Diagram",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("sha256", models.CharField(max_length=64, unique=True)),
                ("code", models.TextField()),
                ("status", models.CharField(choices=[("pending", "pending"), ("drawn", "drawn"), ("failed", "failed")],
                                            default="pending", max_length=10)),
                ("svg", models.TextField(blank=True)),
                ("error", models.TextField(blank=True)),
                ("draw_seconds", models.FloatField(blank=True, help_text="How long Asymptote took.", null=True)),
                ("drawn_at", models.DateTimeField(blank=True, null=True)),
                ("created_at", models.DateTimeField(auto_now_add=True)),
            ],
        ),
        migrations.CreateModel(
            name="DiagramProject",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("diagram", models.ForeignKey(db_index=False, on_delete=models.deletion.CASCADE,
                                              to="labeling.diagram")),
                ("project", models.ForeignKey(on_delete=models.deletion.CASCADE, to="labeling.project")),
            ],
            options={
                "constraints": [models.UniqueConstraint(fields=("diagram", "project"), name="diagram_project_unique")],
            },
        ),
        migrations.AddField(
            model_name="diagram",
            name="projects",
            field=models.ManyToManyField(related_name="diagrams", through="labeling.DiagramProject",
                                         to="labeling.project"),
        ),
    ]
