"""The researcher's API for the model side: generation runs, checkpoints, retraining.

Thin views over ``scoring.jobs``; the work runs in the PRM worker (``scoring.tasks``). Every
view needs the researcher role (the people-vs-PRM list: lead or researcher), checked before any lookup. Included under /api/ by
annotator/urls.py (URL names in the ``scoring`` namespace).

- ``POST /api/projects/{id}/generations/``: start a generation (202; 409 when one is open)
- ``GET  /api/projects/{id}/generations/``: the project's runs, newest first, paged (``?limit=&offset=``)
- ``GET  /api/generation-runs/{id}/``: one run: state, selection strategy (and mix), scored/total (live), rate and
  time left, selected, error
- ``POST /api/generation-runs/{id}/cancel/``: cancel a queued or scoring run (409 when past that)
- ``GET  /api/projects/{id}/checkpoints/``: every checkpoint: status, reason, metrics, lineage, layout, retrain progress
- ``POST /api/projects/{id}/checkpoints/``: register a PRM from a directory the workers read (202; 400 naming
  what the directory lacks); a worker validates it (``scoring.registry``)
- ``POST /api/checkpoints/{id}/champion/``: make a registered, rejected or former champion checkpoint the champion
- ``POST /api/checkpoints/{id}/evaluate/``: queue its evaluation against the champion (promoted when better; 202)
- ``GET  /api/checkpoints/{id}/report/``: its evaluation report (plot data) beside the champion's
- ``POST /api/projects/{id}/retrain/``: queue ``retrain_if_due`` (``force`` skips the due check)
- ``GET  /api/projects/{id}/people-vs-prm/``: the steps where the champion and people's consensus disagree
  most (leads and researchers; ``scoring.people``)
- ``POST /api/projects/{id}/simulations/``: start a replay simulation on the project's own labels (202; 409 when one
  is open; ``scoring.simulations``); ``GET`` lists them, newest first, paged
- ``GET  /api/simulations/{id}/``: one simulation: state, settings, result (curves per strategy, savings), error
- ``GET/PATCH /api/projects/{id}/loop-settings/``: pool, generation, selection and retraining settings
  (``scoring.loop_settings``)
- the LLM judge: ``/api/projects/{id}/judge-settings/``, ``/api/projects/{id}/judge-runs/``, ``/api/judge-runs/{id}/``
  (``scoring.judge_api``)
"""
from django.db.models import F
from django.utils import timezone
from django.urls import path
from drf_spectacular.utils import OpenApiResponse, extend_schema, extend_schema_view, inline_serializer
from rest_framework import serializers, status
from rest_framework.parsers import JSONParser
from rest_framework.response import Response
from rest_framework.views import APIView

from labeling.access.permissions import IsResearcher
from labeling.access.projects import object_for, project_for
from labeling.access.roles import RESEARCHER
from labeling.api.paging import BoundedPaging, page
from labeling.outages import queued_or_failed
from scoring import judge_api, registry, runs, simulations
from scoring.job_views import ProjectJobsView
from scoring.loop_settings import LoopSettingsView
from scoring.people import PeopleVsPrmView
from scoring.models import Checkpoint, GenerationRun, SimulationRun
from scoring.prm import strategies
from scoring.progress import run_pace, run_shards

app_name = "scoring"


class GenerationRunSerializer(serializers.ModelSerializer):
    generation = serializers.IntegerField(source="generation.number", allow_null=True, read_only=True,
                                          help_text="The generation number it selected (null until done).")
    progress = serializers.SerializerMethodField(help_text="scored / total, 0 to 1 (null before counting).")
    rate = serializers.SerializerMethodField(help_text="Solutions scored per second in this scoring pass "
                                                       "(null unless scoring and some are scored).")
    eta_s = serializers.SerializerMethodField(help_text="Seconds left to score the rest at that rate (null: unknown).")
    shards = serializers.SerializerMethodField(help_text="Its pool's shards (scoring/shards.py): {shards, done, claimed, "
                                                         "scored, total}, summed over the workers scoring them.")

    class Meta:
        model = GenerationRun
        fields = ["id", "project", "state", "size", "strategy", "selection_mix", "scored", "total", "progress", "rate",
                  "eta_s", "shards", "selected", "generation", "checkpoint", "error", "task_id", "created_at", "started_at", "scoring_started_at",
                  "scored_at_start", "finished_at"]
        read_only_fields = fields

    def to_representation(self, run):
        self._shards = run_shards(run)
        self._pace = run_pace(run, shards=self._shards)  # the three fields below, from one clock reading
        return super().to_representation(run)

    def get_progress(self, run) -> float | None:
        return self._pace.fraction

    def get_rate(self, run) -> float | None:
        return self._pace.rate

    def get_eta_s(self, run) -> float | None:
        return self._pace.eta_s

    def get_shards(self, run) -> dict:
        return self._shards


class CheckpointSerializer(serializers.ModelSerializer):
    has_report = serializers.SerializerMethodField(help_text="Whether its evaluation report (plots) is stored.")

    class Meta:
        model = Checkpoint
        fields = ["id", "project", "status", "is_champion", "reason", "parent", "generation", "passes", "data_hash",
                  "base_model", "path", "layout", "layout_options", "metrics", "progress", "has_report", "task_id",
                  "created_at", "finished_at"]
        read_only_fields = fields
        extra_kwargs = {"metrics": {"help_text": (
            "Its figures: heldout and champion_heldout (step_auroc, step_f1, accuracy, log_loss, steps on the "
            "held-out problems), heldout_problems, metric, train, lineage; and gate, the promotion gate's decision "
            "when it was judged against a champion (scoring.prm.gate): metric, higher_is_better, challenger and "
            "champion (the metric's figures), difference, interval ([low, high] of the one-sided interval of the "
            "difference, the open side null), confidence, resamples, resamples_defined, seed, guards ({log_loss, "
            "ece}: {challenger, champion}), guard_tolerance, problems, min_problems, steps, champion_id, decision "
            "(promote or reject) and reason.")}}

    def get_has_report(self, checkpoint) -> bool:
        return bool(checkpoint.report)


class CheckpointReportSerializer(serializers.Serializer):
    checkpoint = CheckpointSerializer(help_text="The checkpoint judged.")
    champion = CheckpointSerializer(allow_null=True, help_text="The champion it was judged against (null: none).")
    report = serializers.DictField(help_text="heldout_problems, metric, champion_id, and the sections (steps: "
                                   "roc, calibration; best-of-n; processbench where evaluated) of the "
                                   "checkpoint ('challenger') and of the champion on the same problems.")


class StartGenerationSerializer(serializers.Serializer):
    size = serializers.IntegerField(required=False, min_value=1, max_value=1_000_000,
                                    help_text="Solutions to select (default: the project's generation_size).")


class RegisterCheckpointSerializer(serializers.Serializer):
    path = serializers.CharField(max_length=1000, help_text="Absolute path of the PRM's directory, as the workers see it.")
    layout = serializers.ChoiceField(choices=[registry.AUTO, *registry.LAYOUTS], default=registry.AUTO,
                                     help_text="How it is laid out; auto tells it from the files (scoring.prm.layouts).")
    step_separator = serializers.CharField(required=False, allow_blank=True, trim_whitespace=False, max_length=32,
                                           help_text='token-classification only: the step separator (default "\\n", '
                                                     "as TRL's PRMTrainer).")
    champion = serializers.BooleanField(default=False, help_text="Make it the champion once a worker validated it.")


EvaluationQueuedSerializer = inline_serializer("EvaluationQueued", {"task_id": serializers.CharField(),
                                                                    "checkpoint": serializers.IntegerField()})


class RetrainSerializer(serializers.Serializer):
    force = serializers.BooleanField(default=False, help_text="Train even when fewer new passes than the threshold arrived.")


RetrainQueuedSerializer = inline_serializer("RetrainQueued", {"task_id": serializers.CharField(),
                                                              "force": serializers.BooleanField()})
ConflictSerializer = inline_serializer("JobConflict", {"detail": serializers.CharField(),
                                                       "run": GenerationRunSerializer(allow_null=True)})


def _runs():
    return GenerationRun.objects.select_related("generation")


class ProjectGenerationsView(APIView):
    """Start a generation run for the project, or list its runs."""

    permission_classes = [IsResearcher]
    parser_classes = [JSONParser]
    pagination_class = BoundedPaging

    @extend_schema(operation_id="projects_generations_list", responses=GenerationRunSerializer(many=True))
    def get(self, request, pk):
        project = project_for(request.user, pk, RESEARCHER)
        runs = _runs().filter(project=project).order_by("-pk")
        return page(self, request, runs, lambda rows: GenerationRunSerializer(rows, many=True).data)

    @extend_schema(
        operation_id="projects_generations_create", request=StartGenerationSerializer,
        responses={202: GenerationRunSerializer,
                   409: OpenApiResponse(ConflictSerializer, description="A run of this project is still open.")},
    )
    def post(self, request, pk):
        from scoring import tasks
        project = project_for(request.user, pk, RESEARCHER)
        form = StartGenerationSerializer(data=request.data)
        form.is_valid(raise_exception=True)
        try:
            run = runs.start_generation(project, size=form.validated_data.get("size"), user=request.user)
        except runs.JobConflict as conflict:
            return Response({"detail": str(conflict), "run": GenerationRunSerializer(conflict.existing).data},
                            status=status.HTTP_409_CONFLICT)
        limit = {"pool_limit": project.pool_limit} if project.pool_limit else {}  # 0: the whole pool
        sent = queued_or_failed(lambda: tasks.run_generation.delay(run.pk, **limit), lambda reason: (
            GenerationRun.objects.filter(pk=run.pk).update(state=GenerationRun.FAILED, error=reason,
                                                           finished_at=timezone.now())))
        GenerationRun.objects.filter(pk=run.pk, task_id="").update(task_id=sent.id)
        return Response(GenerationRunSerializer(_runs().get(pk=run.pk)).data, status=status.HTTP_202_ACCEPTED)


class GenerationRunView(APIView):
    """One generation run, with live progress."""

    permission_classes = [IsResearcher]

    @extend_schema(operation_id="generation_runs_retrieve", responses=GenerationRunSerializer)
    def get(self, request, pk):
        return Response(GenerationRunSerializer(object_for(request.user, _runs(), pk, RESEARCHER)).data)


class GenerationRunCancelView(APIView):
    """Cancel a queued or scoring run; the worker stops before its next batch."""

    permission_classes = [IsResearcher]

    @extend_schema(
        operation_id="generation_runs_cancel_create", request=None,
        responses={200: GenerationRunSerializer,
                   409: OpenApiResponse(ConflictSerializer, description="The run is selecting or finished.")},
    )
    def post(self, request, pk):
        run = object_for(request.user, _runs(), pk, RESEARCHER)
        if not runs.cancel_run(run):
            return Response({"detail": f"Run {run.pk} is {run.state}; it can no longer be cancelled.",
                             "run": GenerationRunSerializer(run).data}, status=status.HTTP_409_CONFLICT)
        return Response(GenerationRunSerializer(_runs().get(pk=run.pk)).data)


class ProjectCheckpointsView(APIView):
    """Every checkpoint of the project, newest first: metrics over time and lineage; or register a PRM."""

    permission_classes = [IsResearcher]
    parser_classes = [JSONParser]

    @extend_schema(operation_id="projects_checkpoints_list", responses=CheckpointSerializer(many=True))
    def get(self, request, pk):
        project = project_for(request.user, pk, RESEARCHER)
        rows = Checkpoint.objects.filter(project=project).order_by(F("created_at").desc(), "-pk")[:500]
        return Response(CheckpointSerializer(rows, many=True).data)

    @extend_schema(operation_id="projects_checkpoints_create", request=RegisterCheckpointSerializer,
                   responses={202: CheckpointSerializer,
                              400: OpenApiResponse(description="{detail, field}: what the directory lacks")})
    def post(self, request, pk):
        project = project_for(request.user, pk, RESEARCHER)
        form = RegisterCheckpointSerializer(data=request.data)
        form.is_valid(raise_exception=True)
        data = form.validated_data
        checkpoint = registry.register(project, data["path"], layout=data["layout"], champion=data["champion"],
                                       step_separator=data.get("step_separator"), user=request.user)
        return Response(CheckpointSerializer(checkpoint).data, status=status.HTTP_202_ACCEPTED)


class CheckpointChampionView(APIView):
    """Make the checkpoint the project's champion (the next generation scores with it)."""

    permission_classes = [IsResearcher]

    @extend_schema(operation_id="checkpoints_champion_create", request=None,
                   responses={200: CheckpointSerializer,
                              409: OpenApiResponse(description="It is validating, invalid, training or failed.")})
    def post(self, request, pk):
        checkpoint = object_for(request.user, Checkpoint.objects.all(), pk, RESEARCHER)
        return Response(CheckpointSerializer(registry.make_champion(checkpoint, by=request.user)).data)


class CheckpointEvaluateView(APIView):
    """Queue the checkpoint's evaluation against the champion on the held-out problems (promoted when better)."""

    permission_classes = [IsResearcher]

    @extend_schema(operation_id="checkpoints_evaluate_create", request=None,
                   responses={202: EvaluationQueuedSerializer,
                              409: OpenApiResponse(description="It is the champion, or not loadable.")})
    def post(self, request, pk):
        checkpoint = object_for(request.user, Checkpoint.objects.all(), pk, RESEARCHER)
        sent = registry.queue_evaluation(checkpoint)
        return Response({"task_id": sent.id, "checkpoint": checkpoint.pk}, status=status.HTTP_202_ACCEPTED)


class CheckpointReportView(APIView):
    """A checkpoint's evaluation beside the champion's on the same held-out problems: the plots' data."""

    permission_classes = [IsResearcher]

    @extend_schema(operation_id="checkpoints_report_retrieve", responses=CheckpointReportSerializer)
    def get(self, request, pk):
        checkpoint = object_for(request.user, Checkpoint.objects.all(), pk, RESEARCHER)
        report = checkpoint.report or {}
        against = Checkpoint.objects.filter(project=checkpoint.project_id, pk=report.get("champion_id")).first()
        return Response({"checkpoint": CheckpointSerializer(checkpoint).data,
                         "champion": CheckpointSerializer(against).data if against else None, "report": report})


class ProjectRetrainView(APIView):
    """Queue a retrain of the project's PRM (it runs when due, or always with ``force``)."""

    permission_classes = [IsResearcher]
    parser_classes = [JSONParser]

    @extend_schema(operation_id="projects_retrain_create", request=RetrainSerializer,
                   responses={202: RetrainQueuedSerializer})
    def post(self, request, pk):
        from scoring import tasks
        project = project_for(request.user, pk, RESEARCHER)
        form = RetrainSerializer(data=request.data)
        form.is_valid(raise_exception=True)
        force = form.validated_data["force"]
        sent = tasks.retrain_if_due.delay(project.pk, force=force)
        return Response({"task_id": sent.id, "force": force}, status=status.HTTP_202_ACCEPTED)


class SimulationRunSerializer(serializers.ModelSerializer):
    settings = serializers.JSONField(source="config", read_only=True,
                                     help_text="What was asked: strategies, rounds, per_round, seed_size (null: "
                                               "per_round), seed, heldout_fraction.")
    result = serializers.JSONField(read_only=True, help_text=(
        "The simulator's report once done (scoring.prm.simulate): strategies, rounds, per_round, seed_size, pool, "
        "heldout_solutions, heldout_problems; curves ({strategy: [{round, solutions, steps, auroc, f1, f1_oracle, "
        "bon, picked, elapsed_s}]}, labels spent as solutions and labelled steps) and savings ({strategy: {target, "
        "steps_needed, solutions_needed, steps_saved, solutions_saved, steps_saved_share, solutions_saved_share, "
        "reached, by_seed_set}}: the labels each needs to reach random's final AUROC). Null until done."))

    class Meta:
        model = SimulationRun
        fields = ["id", "project", "state", "settings", "result", "error", "task_id", "created_at", "started_at",
                  "finished_at"]
        read_only_fields = fields


class StartSimulationSerializer(serializers.Serializer):
    strategies = serializers.ListField(
        child=serializers.ChoiceField(choices=strategies.MIXABLE), min_length=1, max_length=len(strategies.MIXABLE),
        default=simulations.DEFAULTS["strategies"],
        help_text="Strategies to replay, distinct (the savings are measured against random).")
    rounds = serializers.IntegerField(min_value=1, max_value=simulations.MAX_ROUNDS,
                                      default=simulations.DEFAULTS["rounds"], help_text="Rounds after the seed set.")
    per_round = serializers.IntegerField(min_value=1, max_value=simulations.MAX_PER_ROUND,
                                         default=simulations.DEFAULTS["per_round"],
                                         help_text="Solutions (labelling passes) chosen per round.")
    seed_size = serializers.IntegerField(min_value=1, max_value=simulations.MAX_SEED_SIZE, required=False,
                                         allow_null=True, default=None,
                                         help_text="Solutions in the random seed set, the same for every strategy "
                                                   "(default: per_round).")
    seed = serializers.IntegerField(min_value=0, max_value=2**31 - 1, default=0,
                                    help_text="Seeds the seed set, random's picks, the held-out split and training.")
    heldout_fraction = serializers.FloatField(min_value=0.05, max_value=0.5,
                                              default=simulations.DEFAULTS["heldout_fraction"],
                                              help_text="Share of the problems held out to evaluate every round on.")

    def validate_strategies(self, value):
        if len(set(value)) != len(value):
            raise serializers.ValidationError("Give each strategy once.")
        return value


SimulationConflictSerializer = inline_serializer("SimulationConflict", {
    "detail": serializers.CharField(), "run": SimulationRunSerializer(allow_null=True)})


@extend_schema_view(
    get=extend_schema(operation_id="projects_simulations_list", responses=SimulationRunSerializer(many=True)),
    post=extend_schema(
        operation_id="projects_simulations_create", request=StartSimulationSerializer,
        responses={202: SimulationRunSerializer,
                   409: OpenApiResponse(SimulationConflictSerializer, description="A simulation of this project "
                                                                                   "is still queued or running.")}),
)
class ProjectSimulationsView(ProjectJobsView):
    """Start a replay simulation on the project's own labels, or list its simulations."""

    model, serializer_class, form_class = SimulationRun, SimulationRunSerializer, StartSimulationSerializer

    def start(self, project, data, user):
        return simulations.start_simulation(project, data, user=user)

    def queue(self, run):
        from scoring import tasks

        return tasks.simulate_selection.delay(run.pk)

    def mark_failed(self, pk, reason):
        simulations.mark_failed(pk, reason)


class SimulationRunView(APIView):
    """One replay simulation: its settings, state and, once done, its curves and savings."""

    permission_classes = [IsResearcher]

    @extend_schema(operation_id="simulations_retrieve", responses=SimulationRunSerializer)
    def get(self, request, pk):
        return Response(SimulationRunSerializer(object_for(request.user, SimulationRun.objects.all(), pk,
                                                           RESEARCHER)).data)


urlpatterns = [
    path("projects/<int:pk>/simulations/", ProjectSimulationsView.as_view(), name="project-simulations"),
    path("simulations/<int:pk>/", SimulationRunView.as_view(), name="simulation-detail"),
    path("projects/<int:pk>/generations/", ProjectGenerationsView.as_view(), name="project-generations"),
    path("generation-runs/<int:pk>/", GenerationRunView.as_view(), name="generation-run-detail"),
    path("generation-runs/<int:pk>/cancel/", GenerationRunCancelView.as_view(), name="generation-run-cancel"),
    path("projects/<int:pk>/checkpoints/", ProjectCheckpointsView.as_view(), name="project-checkpoints"),
    path("projects/<int:pk>/retrain/", ProjectRetrainView.as_view(), name="project-retrain"),
    path("projects/<int:pk>/loop-settings/", LoopSettingsView.as_view(), name="project-loop-settings"),
    path("projects/<int:pk>/people-vs-prm/", PeopleVsPrmView.as_view(), name="project-people-vs-prm"),
    path("checkpoints/<int:pk>/report/", CheckpointReportView.as_view(), name="checkpoint-report"),
    path("checkpoints/<int:pk>/champion/", CheckpointChampionView.as_view(), name="checkpoint-champion"),
    path("checkpoints/<int:pk>/evaluate/", CheckpointEvaluateView.as_view(), name="checkpoint-evaluate"),
]
urlpatterns += judge_api.urlpatterns  # the LLM judge's settings and runs (scoring/judge_api.py)
