"""The LLM judge's endpoints, for researchers of the project (routes added to ``scoring.api``'s).

- ``GET/PATCH /api/projects/{id}/judge-settings/``: the judge's endpoint, model, prompt and limits
  (``scoring.judge_settings``)
- ``POST /api/projects/{id}/judge-runs/``: judge a generation (``{"generation": n}``) or solutions
  (``{"solution_ids": [...]}``): 202 with the queued run, 409 while one is open; ``GET`` lists the runs
- ``GET /api/judge-runs/{id}/``: one run's state, progress and result
"""
from django.urls import path
from drf_spectacular.utils import OpenApiResponse, extend_schema, extend_schema_view, inline_serializer
from rest_framework import serializers
from rest_framework.parsers import JSONParser
from rest_framework.response import Response
from rest_framework.views import APIView

from labeling.access.permissions import IsResearcher
from labeling.access.projects import object_for, project_for
from labeling.access.roles import RESEARCHER
from scoring import judge_runs
from scoring.job_views import ProjectJobsView
from scoring.judge_settings import JudgeSettingsSerializer, settings_of
from scoring.models import JudgeRun


class JudgeSettingsView(APIView):
    """The project's LLM judge; PATCH changes what it sends."""

    permission_classes = [IsResearcher]
    parser_classes = [JSONParser]

    @extend_schema(operation_id="projects_judge_settings_retrieve", responses=JudgeSettingsSerializer)
    def get(self, request, pk):
        return Response(JudgeSettingsSerializer(settings_of(project_for(request.user, pk, RESEARCHER))).data)

    @extend_schema(operation_id="projects_judge_settings_partial_update", request=JudgeSettingsSerializer,
                   responses={200: JudgeSettingsSerializer,
                              400: OpenApiResponse(description="{field: [message]} for each refused value")})
    def patch(self, request, pk):
        project = project_for(request.user, pk, RESEARCHER)
        form = JudgeSettingsSerializer(settings_of(project), data=request.data, partial=True,
                                       context={"request": request})
        form.is_valid(raise_exception=True)
        form.save()
        return Response(JudgeSettingsSerializer(settings_of(project)).data)


class JudgeRunSerializer(serializers.ModelSerializer):
    progress = serializers.JSONField(read_only=True, help_text=(
        "While it runs: done and total (solutions to judge), requests and budget, fraction, rate (solutions/s), "
        "eta_s, updated_at."))
    result = serializers.JSONField(read_only=True, help_text=(
        "Once finished: solutions (asked for), already_labelled (skipped), judged, over_budget and stopped "
        "(never asked), labelled, unparseable, refused and errors (steps), requests (sent, retries included), "
        "budget, source (the LabelSource id). Null until it finishes; a failed run keeps what it did."))

    class Meta:
        model = JudgeRun
        fields = ["id", "project", "state", "generation", "solution_ids", "source", "progress", "result", "error",
                  "task_id", "created_at", "started_at", "finished_at"]
        read_only_fields = fields


class StartJudgeRunSerializer(serializers.Serializer):
    generation = serializers.IntegerField(min_value=-1, required=False, allow_null=True, default=None,
                                          help_text="The generation's number whose solutions to judge.")
    solution_ids = serializers.ListField(child=serializers.IntegerField(min_value=1), required=False,
                                         max_length=judge_runs.MAX_SOLUTION_IDS, default=list,
                                         help_text="Or: the solutions to judge.")

    def validate(self, data):
        if (data["generation"] is None) == (not data["solution_ids"]):
            raise serializers.ValidationError({"generation": "Give either a generation or solution_ids."})
        return data


JudgeConflictSerializer = inline_serializer("JudgeConflict", {
    "detail": serializers.CharField(), "run": JudgeRunSerializer(allow_null=True)})


@extend_schema_view(
    get=extend_schema(operation_id="projects_judge_runs_list", responses=JudgeRunSerializer(many=True)),
    post=extend_schema(
        operation_id="projects_judge_runs_create", request=StartJudgeRunSerializer,
        responses={202: JudgeRunSerializer,
                   409: OpenApiResponse(JudgeConflictSerializer, description="A judge run of this project is "
                                                                              "still queued or running.")}),
)
class ProjectJudgeRunsView(ProjectJobsView):
    """Judge a generation or a list of solutions, or list the project's judge runs."""

    model, serializer_class, form_class = JudgeRun, JudgeRunSerializer, StartJudgeRunSerializer

    def start(self, project, data, user):
        return judge_runs.start_judge_run(project, **data, user=user)

    def queue(self, run):
        from scoring.judge_tasks import run_judge

        return run_judge.delay(run.pk)

    def mark_failed(self, pk, reason):
        judge_runs.mark_failed(pk, reason)


class JudgeRunView(APIView):
    """One judge run: its state, progress and, once finished, its result."""

    permission_classes = [IsResearcher]

    @extend_schema(operation_id="judge_runs_retrieve", responses=JudgeRunSerializer)
    def get(self, request, pk):
        return Response(JudgeRunSerializer(object_for(request.user, JudgeRun.objects.all(), pk, RESEARCHER)).data)


urlpatterns = [
    path("projects/<int:pk>/judge-settings/", JudgeSettingsView.as_view(), name="project-judge-settings"),
    path("projects/<int:pk>/judge-runs/", ProjectJudgeRunsView.as_view(), name="project-judge-runs"),
    path("judge-runs/<int:pk>/", JudgeRunView.as_view(), name="judge-run-detail"),
]
