# API tokens that end (labeling/models/tokens.py): several per account, the key's SHA-256 only,
# created, last used and expiry times. DRF's authtoken table is no longer read (its app is gone
# from INSTALLED_APPS): its never-ending tokens stop working, and people log in again.
import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ("labeling", "0014_project_rendering"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.CreateModel(
            name="ApiToken",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("name", models.CharField(blank=True, help_text="What it is for, as its owner named it.", max_length=100)),
                ("digest", models.CharField(editable=False, help_text="SHA-256 of the key, hex.", max_length=64, unique=True)),
                ("prefix", models.CharField(editable=False, help_text="The key's first characters, to tell it apart.",
                                            max_length=8)),
                ("created_at", models.DateTimeField(auto_now_add=True)),
                ("expires_at", models.DateTimeField()),
                ("last_used_at", models.DateTimeField(blank=True, help_text="To the minute (written at most once a minute).",
                                                      null=True)),
                ("user", models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name="api_tokens",
                                           to=settings.AUTH_USER_MODEL)),
            ],
            options={"verbose_name": "API token"},
        ),
    ]
