"""A project's LLM judge settings: the endpoint, model, prompt and limits of its pre-labelling jobs.

``GET/PATCH /api/projects/{id}/judge-settings/`` (researchers of the project; the views are
``scoring.judge_api``'s). One serializer judges every value on save, so a bad one is a 400 naming
its field and nothing is stored; a change is logged (labeling/audit). The API key is never stored
nor shown: ``api_key_env`` names the workers' environment variable that holds it, and only the
names ``STEPMARK_JUDGE_KEY_VARS`` lists are taken, so a researcher cannot have a judge send
another secret (``DJANGO_SECRET_KEY``, the database's password) to a server of their choosing.
Web side: no client is loaded here.
"""
import re
from urllib.parse import urlsplit

from django.conf import settings
from django.db import transaction
from rest_framework import serializers

from labeling import audit
from scoring.judge_prompt import DEFAULT_PROMPT
from scoring.models import JudgeSettings

PROMPT_VERSION = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,49}")
MAX_TEMPLATE = 20_000


def settings_of(project):
    """The project's JudgeSettings, or unsaved defaults when it has none (a GET writes nothing)."""
    return JudgeSettings.objects.filter(project=project).first() or JudgeSettings(project=project)


def key_names():
    """The environment variables a judge may read its key from."""
    return list(settings.STEPMARK_JUDGE_KEY_VARS)


def check_base_url(value):
    """An http(s) URL with a host and no credentials, query or fragment; "" (not set) passes."""
    value = value.strip()
    if not value:
        return ""
    parts = urlsplit(value)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise serializers.ValidationError("Give an http:// or https:// URL with a host, e.g. http://gpu-host:8000/v1.")
    if parts.username or parts.password:
        raise serializers.ValidationError("No credentials in the URL: it is stored and shown. Put the key in the "
                                          "environment variable api_key_env names.")
    if parts.query or parts.fragment:
        raise serializers.ValidationError("Give the base URL alone, without ?query or #fragment.")
    try:
        parts.port
    except ValueError:
        raise serializers.ValidationError("The port is not a number from 0 to 65535.") from None
    return value.rstrip("/")


class JudgeSettingsSerializer(serializers.ModelSerializer):
    base_url = serializers.CharField(max_length=500, allow_blank=True, required=False,
                                     help_text="The endpoint's base URL (OpenAI-compatible chat completions), "
                                               "e.g. http://gpu-host:8000/v1 for vLLM's server.")
    prompt_template = serializers.CharField(
        max_length=MAX_TEMPLATE, allow_blank=True, required=False, trim_whitespace=False,
        help_text="The prompt, with {problem}, {steps} (numbered 'Step k: text') and optionally {num_steps}; "
                  "empty: default_prompt. The answer is read as one 'Step k: +1 | reason' line per step "
                  "(or a JSON list of {step, rating, reason}).")
    api_key_env = serializers.CharField(
        max_length=100, allow_blank=True, required=False,
        help_text="The NAME of the workers' environment variable holding the API key, one of key_env_choices "
                  "(empty: no key, as for a local vLLM server). The key itself is never stored nor shown.")
    default_prompt = serializers.SerializerMethodField(help_text="The template used when prompt_template is empty.")
    key_env_choices = serializers.SerializerMethodField(
        help_text="The names api_key_env may take (STEPMARK_JUDGE_KEY_VARS).")
    configured = serializers.SerializerMethodField(help_text="Whether base_url and model are set: a job can start.")
    updated_at = serializers.DateTimeField(read_only=True, allow_null=True, help_text="Null until first saved.")

    class Meta:
        model = JudgeSettings
        fields = ["base_url", "model", "prompt_template", "prompt_version", "api_key_env", "concurrency",
                  "rate_limit", "budget", "max_attempts", "timeout_s", "max_tokens", "temperature",
                  "default_prompt", "key_env_choices", "configured", "updated_at"]
        extra_kwargs = {
            "model": {"allow_blank": True, "required": False},
            "prompt_version": {"help_text": "A short name for the template (letters, digits, . _ -), recorded in "
                                            "each label's source: change it when the template changes."},
            "concurrency": {"min_value": 1, "max_value": 64},
            "rate_limit": {"min_value": 0, "max_value": 100_000},
            "budget": {"min_value": 1, "max_value": 10_000_000},
            "max_attempts": {"min_value": 1, "max_value": 10},
            "timeout_s": {"min_value": 1, "max_value": 600},
            "max_tokens": {"min_value": 1, "max_value": 131_072},
            "temperature": {"min_value": 0, "max_value": 2},
        }

    def validate(self, data):
        # A key this form does not own (a typo, or "api_key" itself) is refused, not dropped.
        writable = {name for name, field in self.fields.items() if not field.read_only}
        strangers = sorted(set(getattr(self, "initial_data", {})) - writable)
        if strangers:
            raise serializers.ValidationError({strangers[0]: f"Not a judge setting; these are: "
                                                             f"{', '.join(sorted(writable))}."})
        return data

    def validate_base_url(self, value):
        return check_base_url(value)

    def validate_model(self, value):
        return value.strip()

    def validate_prompt_template(self, value):
        if not value.strip():
            return ""
        missing = [name for name in ("{problem}", "{steps}") if name not in value]
        if missing:
            raise serializers.ValidationError(f"The template must show {' and '.join(missing)}.")
        return value

    def validate_prompt_version(self, value):
        if not PROMPT_VERSION.fullmatch(value):
            raise serializers.ValidationError("1 to 50 letters, digits, '.', '_' or '-', e.g. prm800k-v1.")
        return value

    def validate_api_key_env(self, value):
        value = value.strip()
        if value and value not in key_names():
            raise serializers.ValidationError(
                f"Not one of the names the workers' key may be in: {', '.join(key_names()) or 'none'} "
                "(STEPMARK_JUDGE_KEY_VARS).")
        return value

    def get_default_prompt(self, judge) -> str:
        return DEFAULT_PROMPT

    def get_key_env_choices(self, judge) -> list[str]:
        return key_names()

    def get_configured(self, judge) -> bool:
        return bool(judge.base_url and judge.model)

    def create(self, validated_data):
        raise NotImplementedError("judge settings are saved by change_judge_settings")

    def update(self, judge, validated_data):
        return change_judge_settings(judge.project, validated_data, self.context["request"].user)


def change_judge_settings(project, values, by):
    """Set ``values`` (validated) on the project's judge settings, made on first use; logs what changed."""
    with transaction.atomic():
        judge, _ = JudgeSettings.objects.select_for_update().get_or_create(project=project)
        before = {name: getattr(judge, name) for name in values}
        for name, value in values.items():
            setattr(judge, name, value)
        judge.save()
        was, now = audit.changed(before, {name: getattr(judge, name) for name in values})
        if now:
            audit.record(project, by, audit.SETTINGS, target=f"judge settings of project {project.pk}",
                         before=was, after=now)
    return judge
