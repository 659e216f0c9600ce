"""Selection strategies: the project's strategy and mix, the strategy each generation was chosen by, and why each
solution was picked (``Solution.selection_reason``). Additive; older generations keep an empty strategy."""
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('labeling', '0024_promotion_gate'),
    ]

    operations = [
        migrations.AddField(
            model_name='generation',
            name='selection',
            field=models.JSONField(blank=True, default=dict, help_text="How it was chosen: mix (a mixture's shares), wrong_share, per_problem_cap, seed (random's) and dropout_passes (uncertainty's MC-dropout passes; 0: not measured)."),
        ),
        migrations.AddField(
            model_name='generation',
            name='strategy',
            field=models.CharField(blank=True, help_text='The selection strategy that chose it (Project.selection_strategy); empty when not recorded (screening, or chosen before strategies were recorded: convincing_wrong then).', max_length=20),
        ),
        migrations.AddField(
            model_name='project',
            name='selection_mix',
            field=models.JSONField(blank=True, default=dict, help_text='The mixture\'s shares, e.g. {"convincing_wrong": 0.5, "uncertainty": 0.3, "random": 0.2}: known strategies, non-negative, summing to 1 (read when selection_strategy is mixture).'),
        ),
        migrations.AddField(
            model_name='project',
            name='selection_strategy',
            field=models.CharField(choices=[('convincing_wrong', 'convincing wrong answers'), ('uncertainty', 'uncertainty (MC dropout)'), ('random', 'random (seeded)'), ('mixture', 'mixture')], default='convincing_wrong', help_text="How a generation is chosen: convincing_wrong (highest-scored wrong answers, PRM800K's rule), uncertainty (where the PRM disagrees with itself under MC dropout), random (seeded baseline), or mixture (selection_mix's shares).", max_length=20),
        ),
        migrations.AddField(
            model_name='solution',
            name='selection_reason',
            field=models.JSONField(blank=True, help_text='Why the PRM chose it: strategy, score, uncertainty (null: not measured) and answer (right, wrong or ungraded) as they stood then (scoring.prm.strategies.reason).', null=True),
        ),
    ]
