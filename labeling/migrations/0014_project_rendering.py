"""Project.dollar_math and Project.show_calculator_markup: how problem and step text is shown."""
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ("labeling", "0013_diagram"),
    ]

    operations = [
        migrations.AddField(
            model_name="project",
            name="dollar_math",
            field=models.BooleanField(
                default=True,
                help_text="Read $...$ and $$...$$ as LaTeX math (Pandoc's rule, so '$2 per egg ... $112' stays text). "
                "Off for plain-text data sets such as GSM8K, where $ is a currency sign; \\(...\\) and \\[...\\] stay math.",
            ),
        ),
        migrations.AddField(
            model_name="project",
            name="show_calculator_markup",
            field=models.BooleanField(
                default=False,
                help_text="Show GSM8K's calculator annotations <<16*7=112>> in problems and steps (hidden when off).",
            ),
        ),
    ]
