"""Agreement between label sources over the API (leads and researchers of the project).

- ``GET /api/projects/{id}/source-agreement/``: every pair of sources (people, PRM, judge,
  rollouts, files): steps both labelled, the share they agree on, kappa with its interval;
  ``?generation=N`` keeps one generation, ``?neutral=negative`` counts 0 as false.
- ``GET /api/projects/{id}/source-disagreements/?a=people&b=judge``: the steps where two sources
  differ, by solution and position, at most 200 (``count`` says how many in all).

Thin views over ``labeling.stats.sources``; a bad source is a DomainError naming its parameter.
"""
from django.urls import reverse
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers
from rest_framework.response import Response
from rest_framework.views import APIView

from labeling.access.permissions import LeadOrResearcher
from labeling.access.projects import project_for
from labeling.access.roles import LEAD, RESEARCHER
from labeling.quality import sources as label_sources
from labeling.stats import sources as source_stats

from .paging import MAX_NUMBER


class SourceFiltersSerializer(serializers.Serializer):
    generation = serializers.IntegerField(required=False, min_value=-1, max_value=MAX_NUMBER)
    neutral = serializers.ChoiceField(["positive", "negative"], default="positive")


class SourcePairQuerySerializer(SourceFiltersSerializer):
    a = serializers.CharField(help_text="A source: people, prm, judge, rollouts, import or source:<id>.")
    b = serializers.CharField(help_text="The other source.")


class SourceSerializer(serializers.Serializer):
    selector = serializers.CharField(help_text="How to name it in ?a=, ?b= and the export's ?agree=.")
    kind = serializers.CharField()
    name = serializers.CharField()
    id = serializers.IntegerField(required=False, help_text="The label source's id (machine sources).")
    details = serializers.DictField(help_text="Its provenance: checkpoint, judge model and prompt, file.")


class SourcePairSerializer(serializers.Serializer):
    a = SourceSerializer()
    b = SourceSerializer()
    shared = serializers.IntegerField(help_text="Steps both labelled.")
    agree = serializers.FloatField(allow_null=True, help_text="Share of the shared steps with the same label.")
    kappa = serializers.FloatField(allow_null=True)
    low = serializers.FloatField(allow_null=True, help_text="95% bootstrap interval of kappa.")
    high = serializers.FloatField(allow_null=True)
    reason = serializers.CharField(allow_blank=True, help_text="Why kappa is undefined, where it is.")


class SourceAgreementSerializer(serializers.Serializer):
    sources = SourceSerializer(many=True)
    pairs = SourcePairSerializer(many=True)


class SourceDisagreementSerializer(serializers.Serializer):
    solution = serializers.IntegerField()
    url = serializers.SerializerMethodField(help_text="The solution's API route (steps and problem).")
    position = serializers.IntegerField()
    alternative = serializers.IntegerField()
    a = serializers.IntegerField(help_text="Source a's value (+1, 0, -1).")
    b = serializers.IntegerField(help_text="Source b's value.")

    def get_url(self, row) -> str:
        return reverse("api:solution-detail", args=[row["solution"]])


class SourceDisagreementsSerializer(serializers.Serializer):
    count = serializers.IntegerField(help_text="Steps where they differ, in all.")
    rows = SourceDisagreementSerializer(many=True, help_text="The first 200, by solution and position.")


GENERATION = OpenApiParameter("generation", int, description="Only this generation's solutions.")
NEUTRAL = OpenApiParameter("neutral", str, enum=["positive", "negative"], default="positive",
                           description="How a 0 counts: as true (the default, PRM800K's) or false.")


class SourceAgreementView(APIView):
    permission_classes = [LeadOrResearcher]

    @extend_schema(parameters=[GENERATION, NEUTRAL], responses=SourceAgreementSerializer)
    def get(self, request, pk):
        project = project_for(request.user, pk, LEAD, RESEARCHER)
        query = SourceFiltersSerializer(data=request.query_params)
        query.is_valid(raise_exception=True)
        result = source_stats.pairwise(project, **query.validated_data)
        return Response(SourceAgreementSerializer(result).data)


class SourceDisagreementsView(APIView):
    permission_classes = [LeadOrResearcher]

    @extend_schema(parameters=[OpenApiParameter("a", str, required=True), OpenApiParameter("b", str, required=True),
                               GENERATION, NEUTRAL], responses=SourceDisagreementsSerializer)
    def get(self, request, pk):
        project = project_for(request.user, pk, LEAD, RESEARCHER)
        query = SourcePairQuerySerializer(data=request.query_params)
        query.is_valid(raise_exception=True)
        options = dict(query.validated_data)
        a = label_sources.resolve_sources(project, [options.pop("a")], field="a")[0]
        b = label_sources.resolve_sources(project, [options.pop("b")], field="b")[0]
        return Response(SourceDisagreementsSerializer(source_stats.disagreements(project, a, b, **options)).data)
