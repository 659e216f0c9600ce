"""Figures for the researcher page that the human side owns: each generation's hit rate.

The model side (checkpoints, generation runs, retraining) has its own API in ``scoring/api.py``.
"""
from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.response import Response
from rest_framework.views import APIView

from labeling.access.projects import project_for
from labeling.access.roles import RESEARCHER
from labeling.access.permissions import IsResearcher
from labeling.stats.generations import generation_stats


class PickSerializer(serializers.Serializer):
    solution = serializers.IntegerField()
    rank = serializers.IntegerField(allow_null=True)
    verifier_score = serializers.FloatField(allow_null=True, help_text="The PRM's score when it selected it.")
    is_correct = serializers.BooleanField(allow_null=True, help_text="Final answer graded against the truth.")
    final_answer = serializers.CharField(allow_null=True)
    problem = serializers.CharField(help_text="The problem statement (its first 300 characters).")
    rated = serializers.BooleanField()
    found_wrong = serializers.BooleanField(help_text="A submitted pass ended found_error.")
    reason = serializers.JSONField(allow_null=True, help_text="Why it was picked: strategy, score, uncertainty "
                                   "(null: not measured), answer (right, wrong, ungraded); null when not recorded.")


class PeopleVersusPrmFields(serializers.Serializer):
    """What people found against what the PRM expected (labeling.stats.generations.people_versus_prm)."""

    people_wrong = serializers.IntegerField(
        help_text="Rated solutions people found wrong: a pass ended found_error, or the final answer is graded wrong.")
    people_wrong_share = serializers.FloatField(allow_null=True, help_text="people_wrong / rated.")
    expected_wrong_share = serializers.FloatField(
        allow_null=True, help_text="What the PRM expected: the mean of 1 - verifier_score over the rated solutions "
                                   "with a score (its probability that the solution is wrong).")
    expected_of = serializers.IntegerField(help_text="Rated solutions with a PRM score (expected_wrong_share's count).")


class StrategyFiguresSerializer(PeopleVersusPrmFields):
    strategy = serializers.CharField(help_text="The strategy that picked these solutions (empty: not recorded).")
    selected = serializers.IntegerField()
    rated = serializers.IntegerField()
    found_wrong = serializers.IntegerField()
    hit_rate = serializers.FloatField(allow_null=True, help_text="found_wrong / rated.")


class GenerationFiguresSerializer(PeopleVersusPrmFields):
    generation = serializers.IntegerField()
    created_at = serializers.DateTimeField()
    selected = serializers.IntegerField(help_text="Solutions the generation chose (gold and screening left out).")
    wrong_answer = serializers.IntegerField(help_text="Selected solutions whose final answer is graded wrong.")
    mean_verifier_score = serializers.FloatField(allow_null=True)
    rated = serializers.IntegerField(help_text="Selected solutions with a submitted pass.")
    found_wrong = serializers.IntegerField(help_text="Rated solutions where a pass ended found_error.")
    hit_rate = serializers.FloatField(allow_null=True, help_text="found_wrong / rated.")
    passes = serializers.IntegerField()
    median_seconds = serializers.FloatField(allow_null=True, help_text="Median time to rate one pass.")
    person_hours = serializers.FloatField()
    first_submitted_at = serializers.DateTimeField(allow_null=True)
    last_submitted_at = serializers.DateTimeField(allow_null=True)
    strategy = serializers.CharField(help_text="The selection strategy that chose it (empty: not recorded).")
    selection = serializers.JSONField(help_text="How: mix, wrong_share, per_problem_cap, seed, dropout_passes.")
    by_strategy = StrategyFiguresSerializer(many=True, help_text="The figures per strategy that picked (a mixture's parts).")
    picks = PickSerializer(many=True, help_text="The first selected solutions, in selection order.")


class GenerationStatsSerializer(serializers.Serializer):
    generations = GenerationFiguresSerializer(many=True)


class GenerationStatsView(APIView):
    """Per generation: what it selected, how much of it people found wrong, how long rating took."""

    permission_classes = [IsResearcher]

    @extend_schema(operation_id="projects_generation_stats_retrieve", responses={200: GenerationStatsSerializer})
    def get(self, request, pk):
        project = project_for(request.user, pk, RESEARCHER)
        return Response(GenerationStatsSerializer({"generations": generation_stats(project)}).data)
