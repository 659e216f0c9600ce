"""Admin pages for the model side's records (read mostly: the jobs write them)."""
from django.contrib import admin

from .models import Checkpoint, GenerationRun, JudgeRun, JudgeSettings, SolutionScore


@admin.register(Checkpoint)
class CheckpointAdmin(admin.ModelAdmin):
    list_display = ["id", "project", "status", "is_champion", "layout", "generation", "passes", "created_at"]
    list_filter = ["status", "is_champion", "layout", "project"]
    raw_id_fields = ["parent", "registered_by"]
    readonly_fields = ["created_at", "finished_at"]


@admin.register(GenerationRun)
class GenerationRunAdmin(admin.ModelAdmin):
    list_display = ["id", "project", "state", "scored", "total", "selected", "checkpoint", "created_at"]
    list_filter = ["state", "project"]
    raw_id_fields = ["generation", "checkpoint", "requested_by"]
    readonly_fields = ["created_at", "started_at", "finished_at"]


@admin.register(SolutionScore)
class SolutionScoreAdmin(admin.ModelAdmin):
    list_display = ["id", "solution", "checkpoint", "score", "created_at"]
    list_filter = ["checkpoint"]
    raw_id_fields = ["solution", "checkpoint"]


@admin.register(JudgeSettings)
class JudgeSettingsAdmin(admin.ModelAdmin):
    list_display = ["id", "project", "model", "prompt_version", "base_url", "updated_at"]
    raw_id_fields = ["project"]


@admin.register(JudgeRun)
class JudgeRunAdmin(admin.ModelAdmin):
    list_display = ["id", "project", "state", "generation", "source", "created_at", "finished_at"]
    list_filter = ["state", "project"]
    raw_id_fields = ["source", "requested_by"]
    readonly_fields = ["created_at", "started_at", "finished_at"]
