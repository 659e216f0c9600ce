"""Projects: members see theirs; their leads and researchers change and count them.

An annotator sees the active projects they annotate (id, name, instructions); a lead or
researcher of a project sees it whole, with its rules and counts; whoever may create projects
creates one and becomes its lead and researcher. Members are managed in labeling/api/members.py.
"""
from django.db.models import Count, IntegerField, OuterRef, Subquery
from django.db.models.functions import Coalesce
from drf_spectacular.extensions import OpenApiSerializerExtension
from drf_spectacular.utils import (
    PolymorphicProxySerializer,
    extend_schema,
    extend_schema_view,
)
from rest_framework import mixins, serializers, viewsets


from labeling.access import roles
from labeling.access.permissions import HasAnyRole, MayCreateProjects
from labeling.access.projects import authorize, visible_projects
from labeling.models import Assignment, Problem, Project, Solution
from labeling.project_settings import change_settings


LOOP_SETTINGS = ["pool_limit", "generation_size", "selection_strategy", "selection_mix", "selection_wrong_share",
                 "selection_per_problem_cap", "retrain_threshold", "retrain_metric", "promotion_min_problems",
                 "promotion_confidence", "promotion_guard_tolerance", "base_model_path", "train_settings"]


class AnnotatorProjectSerializer(serializers.ModelSerializer):
    """What an annotator needs to pick a project: no counts, no rules."""

    class Meta:
        model = Project
        fields = ["id", "name", "instructions"]


class ProjectSerializer(serializers.ModelSerializer):
    """The whole project with its counts, for leads and researchers."""

    problems = serializers.IntegerField(source="num_problems", read_only=True)
    solutions = serializers.IntegerField(source="num_solutions", read_only=True)
    submitted_assignments = serializers.IntegerField(source="num_submitted", read_only=True)

    class Meta:
        model = Project
        fields = [
            "id", "name", "instructions", "overlap", "quality_control_rate", "stop_at_first_error",
            "allow_alternatives", "allow_human_steps", "lease_seconds", "requires_screening",
            "dollar_math", "show_calculator_markup",
            "is_active", "created_at", "problems", "solutions", "submitted_assignments", *LOOP_SETTINGS,
        ]
        # The loop's settings are read here and changed (validated, by researchers) at
        # /api/projects/{id}/loop-settings/ (scoring/loop_settings.py).
        read_only_fields = ["created_at", *LOOP_SETTINGS]
        # The model's check constraints, as field errors instead of a database error.
        extra_kwargs = {"overlap": {"min_value": 1}, "quality_control_rate": {"min_value": 0, "max_value": 1}}


def with_counts(projects):
    """Annotate problems, solutions and submitted assignments, one subquery each.

    Subqueries rather than joined Counts: three joins would multiply into each other.
    """

    def count(model, **filters):
        rows = model.objects.filter(project=OuterRef("pk"), **filters).order_by()
        rows = rows.values("project").annotate(n=Count("pk")).values("n")
        return Coalesce(Subquery(rows, output_field=IntegerField()), 0)

    return projects.annotate(
        num_problems=count(Problem),
        num_solutions=count(Solution),
        num_submitted=count(Assignment, state=Assignment.SUBMITTED),
    )


class ProjectForMember(ProjectSerializer):
    """The whole project for its leads and researchers, the annotator's fields for the others."""

    def to_representation(self, project):
        whole = super().to_representation(project)
        user = self.context["request"].user
        if roles.roles_in(user, project.pk) & {roles.LEAD, roles.RESEARCHER}:
            return whole
        return {name: whole[name] for name in AnnotatorProjectSerializer.Meta.fields}


class AnnotatorProjectOnly(OpenApiSerializerExtension):
    """The annotator's project holds its three fields and nothing else: said in the schema, so
    that a lead's whole project matches ``Project`` only, as ``ProjectForRole``'s oneOf needs."""

    target_class = AnnotatorProjectSerializer

    def map_serializer(self, auto_schema, direction):
        schema = auto_schema._map_serializer(self.target, direction, bypass_extensions=True)
        return {**schema, "additionalProperties": False}


_EITHER = PolymorphicProxySerializer(
    component_name="ProjectForRole",
    serializers=[ProjectSerializer, AnnotatorProjectSerializer],
    resource_type_field_name=None,
)


@extend_schema_view(
    list=extend_schema(
        description="Active projects for annotators (id, name, instructions); every project with "
        "its rules and counts for leads and researchers.",
        responses=_EITHER,
    ),
    retrieve=extend_schema(responses=_EITHER),
)
class ProjectViewSet(
    mixins.ListModelMixin, mixins.RetrieveModelMixin, mixins.CreateModelMixin,
    mixins.UpdateModelMixin, viewsets.GenericViewSet,
):
    """Projects. Reading needs a membership; creating the right to create; changing the project's lead or researcher role."""

    queryset = Project.objects.all()

    def get_permissions(self):
        # Any role somewhere first (an account without one is refused before a lookup); the
        # project's own rule is checked on the object (``get_object``).
        return [MayCreateProjects()] if self.action == "create" else [HasAnyRole()]

    def get_queryset(self):
        if getattr(self, "swagger_fake_view", False):
            return Project.objects.order_by("name")
        # Annotators see active projects only; a paused project vanishes from their list.
        return with_counts(visible_projects(self.request.user).order_by("name"))

    def get_object(self):
        project = super().get_object()
        if self.action not in ("list", "retrieve"):
            authorize(self.request.user, project, roles.LEAD, roles.RESEARCHER)
        return project

    def get_serializer_class(self):
        if getattr(self, "swagger_fake_view", False) or self.action not in ("list", "retrieve"):
            return ProjectSerializer
        return ProjectForMember

    def perform_create(self, serializer):
        project = serializer.save()
        for role in (roles.LEAD, roles.RESEARCHER):
            roles.grant_role(self.request.user, role, project, by=self.request.user)
        serializer.instance = with_counts(Project.objects).get(pk=project.pk)

    def perform_update(self, serializer):
        project = change_settings(serializer.instance, serializer.validated_data, self.request.user)
        serializer.instance = with_counts(Project.objects).get(pk=project.pk)
