"""People against the PRM: the steps where the champion's score and people's consensus differ most.

For every ordinary solution (gold and screening left out) of a project that people rated (a
voting pass, ``labeling.quality.consensus``) and that the project's current champion scored
(a ``SolutionScore`` of it, with ``step_scores``), each of its own steps (alternative 0,
written by the model) that has both a consensus value and a step score is compared:

- ``prm``: the champion's P(correct) of the step (``SolutionScore.step_scores``, in position
  order, as ``scoring.shards.solution_texts`` sends the steps to the model);
- ``people``: the consensus value (-1, 0, +1: the majority, or a lead's adjudication), and
  ``target``: what it trains as, 1.0 for correct and 0.0 for wrong, by the rule the PRMs are
  trained with (``formats.prm800k.label`` under ``TRAINING_NEUTRAL``: a 0 counts as correct);
- ``disagreement``: ``|prm - target|``, 0 to 1. The list is by disagreement, largest first
  (then solution and position).

The champion scores the candidate pool when it selects a generation, so its step scores exist
for what it selected (and any pool it scored); solutions selected by an earlier champion and not
scored by this one are not compared: ``unscored`` counts them. A step the model could not read
(a null step score) is left out.

``GET /api/projects/{id}/people-vs-prm/?limit=&offset=`` (leads and researchers of the project)
pages the list, at most ``MAX_LIMIT`` rows a page, each with its solution's API URL.
"""
from collections import namedtuple

from django.urls import reverse
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import serializers
from rest_framework.response import Response
from rest_framework.views import APIView

from formats import prm800k
from labeling.access.permissions import LeadOrResearcher
from labeling.access.projects import project_for
from labeling.access.roles import LEAD, RESEARCHER
from labeling.api.paging import MAX_NUMBER, whole_number
from labeling.models import Solution, Step
from labeling.quality.consensus import adjudications, resolve, voting_passes, votes
from labeling.stats.generations import excerpt
from scoring.standing import TRAINING_NEUTRAL, champion
from scoring.models import SolutionScore

Disagreement = namedtuple("Disagreement", "solution position prm people target disagreement votes adjudicated")


def target(value):
    """The training target of a consensus value: 1.0 (correct) or 0.0 (wrong), by ``TRAINING_NEUTRAL``."""
    return 1.0 if prm800k.label(value, TRAINING_NEUTRAL) else 0.0


def people_vs_prm(project):
    """``(checkpoint or None, [Disagreement], unscored)``: every compared step, most disagreement first."""
    best = champion(project)
    rated = (Solution.objects.filter(project=project, is_gold=False, is_screening=False)
             .filter(pk__in=voting_passes(project_id=project.pk).values("solution_id")))
    if best is None:
        return None, [], rated.count()
    scores = dict(SolutionScore.objects.filter(checkpoint=best, solution__in=rated)
                  .values_list("solution_id", "step_scores"))
    unscored = rated.count() - len(scores)
    ids = list(scores)
    positions = {}
    for solution_id, position in (Step.objects.filter(solution_id__in=ids, alternative=0, author__isnull=True)
                                  .order_by("solution_id", "position").values_list("solution_id", "position")):
        positions.setdefault(solution_id, []).append(position)
    table, rulings = votes(ids), adjudications(ids)
    found = []
    for solution_id in ids:
        agreed = resolve(table.get(solution_id, {}), rulings.get(solution_id, {}))
        for position, prm in zip(positions.get(solution_id, []), scores[solution_id] or []):
            consensus = agreed.get((position, 0))
            if prm is None or consensus is None or consensus.value is None:
                continue
            goal = target(consensus.value)
            found.append(Disagreement(solution_id, position, prm, consensus.value, goal, abs(prm - goal),
                                      consensus.votes, consensus.adjudicated))
    found.sort(key=lambda d: (-d.disagreement, d.solution, d.position))
    return best, found, unscored


def details(rows):
    """The page's rows as dicts, with each solution's generation, problem and step text (excerpts)."""
    solutions = Solution.objects.filter(pk__in={r.solution for r in rows}).select_related("problem", "generation")
    by_id = {s.pk: s for s in solutions}
    texts = dict(((solution_id, position), text) for solution_id, position, text in Step.objects.filter(
        solution_id__in=list(by_id), alternative=0, author__isnull=True).values_list("solution_id", "position", "text"))
    out = []
    for r in rows:
        solution = by_id[r.solution]
        out.append({
            **r._asdict(),
            "votes": {str(value): count for value, count in sorted(r.votes.items())},
            "generation": solution.generation.number if solution.generation_id else None,
            "is_correct": solution.is_correct,
            "problem": excerpt(solution.problem.problem, 200),
            "step": excerpt(texts.get((r.solution, r.position), ""), 300),
        })
    return out


# The API -------------------------------------------------------------------------------

DEFAULT_LIMIT = 20
MAX_LIMIT = 100


class PeopleVsPrmStepSerializer(serializers.Serializer):
    solution = serializers.IntegerField()
    url = serializers.CharField(help_text="The solution in the API (its steps, answer and grade).")
    generation = serializers.IntegerField(allow_null=True, help_text="The generation that selected it (null: none).")
    position = serializers.IntegerField(help_text="The step's position (its own step, alternative 0).")
    step = serializers.CharField(help_text="The step's text (its first 300 characters).")
    problem = serializers.CharField(help_text="The problem statement (its first 200 characters).")
    is_correct = serializers.BooleanField(allow_null=True, help_text="Final answer graded against the truth.")
    prm = serializers.FloatField(help_text="The champion's P(correct) of the step.")
    people = serializers.IntegerField(help_text="People's consensus rating: -1, 0 or 1.")
    target = serializers.FloatField(help_text="What the consensus trains as: 1 correct (0 counts as correct), 0 wrong.")
    disagreement = serializers.FloatField(help_text="|prm - target|, 0 to 1.")
    votes = serializers.DictField(child=serializers.IntegerField(), help_text="Votes per rating value.")
    adjudicated = serializers.BooleanField(help_text="A lead ruled on the step (the ruling is the consensus).")


class PeopleVsPrmSerializer(serializers.Serializer):
    checkpoint = serializers.IntegerField(allow_null=True, help_text="The champion compared (null: none yet).")
    neutral = serializers.CharField(help_text="How a 0 rating counts (formats.prm800k.NEUTRAL_POLICIES).")
    count = serializers.IntegerField(help_text="Steps compared in all.")
    unscored = serializers.IntegerField(help_text="Rated solutions the champion has not scored (not compared).")
    results = PeopleVsPrmStepSerializer(many=True, help_text="This page, most disagreement first.")


class PeopleVsPrmView(APIView):
    """The steps where the champion PRM and people's consensus disagree most."""

    permission_classes = [LeadOrResearcher]

    @extend_schema(
        operation_id="projects_people_vs_prm_retrieve",
        parameters=[OpenApiParameter("limit", int, default=DEFAULT_LIMIT, description=f"1 to {MAX_LIMIT}."),
                    OpenApiParameter("offset", int, default=0)],
        responses={200: PeopleVsPrmSerializer, 400: OpenApiResponse(description="{detail, field}")},
    )
    def get(self, request, pk):
        project = project_for(request.user, pk, LEAD, RESEARCHER)
        limit = whole_number(request.query_params, "limit", default=DEFAULT_LIMIT, low=1, high=MAX_LIMIT)
        offset = whole_number(request.query_params, "offset", default=0, low=0, high=MAX_NUMBER)
        best, rows, unscored = people_vs_prm(project)
        results = details(rows[offset:offset + limit])
        for row in results:
            row["url"] = reverse("api:solution-detail", args=[row["solution"]])
        return Response(PeopleVsPrmSerializer({
            "checkpoint": best.pk if best else None, "neutral": TRAINING_NEUTRAL, "count": len(rows),
            "unscored": unscored, "results": results}).data)
