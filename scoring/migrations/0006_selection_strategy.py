"""Selection strategies on the model side: the strategy a run was started with, and the MC-dropout uncertainty
kept beside each score. Additive."""
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('scoring', '0005_scoring_shards'),
    ]

    operations = [
        migrations.AddField(
            model_name='generationrun',
            name='selection_mix',
            field=models.JSONField(blank=True, default=dict, help_text="The project's selection_mix with it (a mixture's shares)."),
        ),
        migrations.AddField(
            model_name='generationrun',
            name='strategy',
            field=models.CharField(blank=True, help_text="The project's selection_strategy when the run was started (empty: the project's when it selects).", max_length=20),
        ),
        migrations.AddField(
            model_name='solutionscore',
            name='dropout_passes',
            field=models.PositiveSmallIntegerField(default=0, help_text='MC-dropout passes behind the uncertainty (0: not measured).'),
        ),
        migrations.AddField(
            model_name='solutionscore',
            name='step_uncertainty',
            field=models.JSONField(blank=True, help_text='Per step, the std of P(correct) over the MC-dropout passes (null: not measured).', null=True),
        ),
        migrations.AddField(
            model_name='solutionscore',
            name='uncertainty',
            field=models.FloatField(blank=True, help_text='The largest step uncertainty (null: not measured, or no step scored).', null=True),
        ),
    ]
