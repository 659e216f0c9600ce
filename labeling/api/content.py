"""Read-only problems and solutions for the leads and researchers of their projects (never gold ratings)."""
from django.db.models import Prefetch
from drf_spectacular.utils import OpenApiParameter, extend_schema, extend_schema_view
from rest_framework import serializers, viewsets

from labeling.access.permissions import LeadOrResearcher
from labeling.access.projects import projects_of
from labeling.access.roles import LEAD, RESEARCHER
from labeling.models import Problem, Solution, Step

from .paging import MAX_NUMBER, whole_number


class ProblemSerializer(serializers.ModelSerializer):
    class Meta:
        model = Problem
        fields = ["id", "project", "problem", "ground_truth_solution", "ground_truth_answer", "subject",
                  "level", "source_id", "created_at"]


class SolutionSerializer(serializers.ModelSerializer):
    generation = serializers.IntegerField(source="generation.number", allow_null=True, read_only=True)

    class Meta:
        model = Solution
        fields = ["id", "project", "problem", "generator", "final_answer", "is_correct", "has_pre_generated",
                  "generation", "selection_rank", "verifier_score", "selection_reason", "is_gold", "is_screening", "num_steps",
                  "created_at"]


class StepSerializer(serializers.ModelSerializer):
    class Meta:
        model = Step
        fields = ["position", "text", "source"]


class SolutionDetailSerializer(SolutionSerializer):
    steps = StepSerializer(many=True, read_only=True, source="own_steps",
                           help_text="The solution's own steps (alternative 0), in order.")

    class Meta(SolutionSerializer.Meta):
        fields = SolutionSerializer.Meta.fields + ["steps"]


def project_filter(request):
    """The ``?project=`` id as an int, or None; a bad value is a 400 ``{detail, field: "project"}``."""
    return whole_number(request.query_params, "project", default=None, low=0, high=MAX_NUMBER)


_BY_PROJECT = extend_schema(parameters=[OpenApiParameter("project", int, description="Only this project's rows.")])


@extend_schema_view(list=_BY_PROJECT)
class ProblemViewSet(viewsets.ReadOnlyModelViewSet):
    """Problems with their reference solution and answer."""

    permission_classes = [LeadOrResearcher]
    serializer_class = ProblemSerializer

    def get_queryset(self):
        problems = Problem.objects.order_by("id")
        if getattr(self, "swagger_fake_view", False):
            return problems
        problems = problems.filter(project__in=projects_of(self.request.user, LEAD, RESEARCHER))
        project = project_filter(self.request)
        return problems if project is None else problems.filter(project_id=project)


@extend_schema_view(list=_BY_PROJECT)
class SolutionViewSet(viewsets.ReadOnlyModelViewSet):
    """Model-written solutions; the detail carries the solution's own steps."""

    permission_classes = [LeadOrResearcher]

    def get_serializer_class(self):
        return SolutionDetailSerializer if self.action == "retrieve" else SolutionSerializer

    def get_queryset(self):
        solutions = Solution.objects.select_related("generation").order_by("id")
        if getattr(self, "swagger_fake_view", False):
            return solutions
        solutions = solutions.filter(project__in=projects_of(self.request.user, LEAD, RESEARCHER))
        if self.action == "retrieve":
            own = Step.objects.filter(alternative=0).order_by("position")
            return solutions.prefetch_related(Prefetch("steps", queryset=own, to_attr="own_steps"))
        project = project_filter(self.request)
        return solutions if project is None else solutions.filter(project_id=project)
