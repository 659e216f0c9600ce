"""Django admin for every labelling model: the lead's and researcher's back office."""
from django.contrib import admin

from .models import (
    Adjudication, Annotator, AnnotatorProjectStatus, ApiToken, Assignment, AuditEntry, Diagram, DiagramProject,
    Generation, GoldProposal, GoldRating, GoldScore, ImportJob, LabelSource, Membership, Problem, Project, Rating,
    ReportResolution, Solution, Step, StepLabel,
)


class MembershipInline(admin.TabularInline):
    model = Membership
    fk_name = "project"
    extra = 1
    raw_id_fields = ["user", "added_by"]


@admin.register(ImportJob)
class ImportJobAdmin(admin.ModelAdmin):
    list_display = ["id", "project", "format", "file_name", "state", "requested_by", "created_at"]
    list_filter = ["state", "format", "project"]
    raw_id_fields = ["project", "requested_by"]
    readonly_fields = ["state", "created_at"]


@admin.register(Membership)
class MembershipAdmin(admin.ModelAdmin):
    list_display = ["user", "role", "project", "added_by", "added_at"]
    list_filter = ["role", "project"]
    search_fields = ["user__username", "project__name"]
    raw_id_fields = ["user", "added_by"]


@admin.register(Project)
class ProjectAdmin(admin.ModelAdmin):
    inlines = [MembershipInline]
    list_display = ["name", "overlap", "quality_control_rate", "stop_at_first_error", "is_active", "created_at"]
    list_filter = ["is_active", "stop_at_first_error", "allow_human_steps", "dollar_math"]
    search_fields = ["name"]


@admin.register(Problem)
class ProblemAdmin(admin.ModelAdmin):
    list_display = ["id", "project", "short_problem", "ground_truth_answer", "subject", "level"]
    list_filter = ["project", "subject", "level"]
    search_fields = ["problem", "source_id"]
    raw_id_fields = ["project"]

    @admin.display(description="problem")
    def short_problem(self, obj):
        return obj.problem[:80]


@admin.register(Generation)
class GenerationAdmin(admin.ModelAdmin):
    list_display = ["project", "number", "created_at"]
    list_filter = ["project"]


class StepInline(admin.TabularInline):
    model = Step
    fields = ["position", "alternative", "text", "source", "author"]
    raw_id_fields = ["author"]
    extra = 0


@admin.register(Solution)
class SolutionAdmin(admin.ModelAdmin):
    list_display = ["id", "project", "problem_id", "generator", "final_answer", "is_correct", "generation",
                    "selection_rank", "verifier_score", "is_gold", "is_screening"]
    list_filter = ["project", "is_correct", "is_gold", "is_screening", "generation"]
    search_fields = ["generator", "final_answer"]
    raw_id_fields = ["project", "problem", "generation"]
    inlines = [StepInline]


@admin.register(Step)
class StepAdmin(admin.ModelAdmin):
    list_display = ["id", "solution_id", "position", "alternative", "source", "short_text"]
    search_fields = ["text"]
    raw_id_fields = ["solution", "author"]

    @admin.display(description="text")
    def short_text(self, obj):
        return obj.text[:80]


@admin.register(Annotator)
class AnnotatorAdmin(admin.ModelAdmin):
    list_display = ["uuid", "user", "status", "created_at"]
    list_filter = ["status"]
    search_fields = ["uuid", "user__username"]
    raw_id_fields = ["user"]


class RatingInline(admin.TabularInline):
    model = Rating
    fields = ["step", "value", "flagged", "chosen", "rated_at"]
    raw_id_fields = ["step"]
    extra = 0


@admin.register(Assignment)
class AssignmentAdmin(admin.ModelAdmin):
    list_display = ["id", "project", "solution_id", "annotator", "state", "finish_reason", "submitted_at",
                    "total_time", "is_quality_control", "is_screening"]
    list_filter = ["project", "state", "finish_reason", "is_quality_control", "is_screening"]
    raw_id_fields = ["project", "solution", "annotator"]
    inlines = [RatingInline]


@admin.register(Rating)
class RatingAdmin(admin.ModelAdmin):
    list_display = ["id", "assignment_id", "step_id", "value", "flagged", "chosen", "rated_at"]
    list_filter = ["value", "flagged"]
    raw_id_fields = ["assignment", "step"]


@admin.register(GoldRating)
class GoldRatingAdmin(admin.ModelAdmin):
    list_display = ["step", "value", "approved_by", "approved_at"]
    raw_id_fields = ["step", "approved_by"]


@admin.register(GoldScore)
class GoldScoreAdmin(admin.ModelAdmin):
    list_display = ["assignment", "annotator", "project", "is_screening", "exact_share", "within_one_share",
                    "first_error_same", "steps_compared", "submitted_at"]
    list_filter = ["is_screening", "project"]
    raw_id_fields = ["assignment", "annotator"]


@admin.register(AnnotatorProjectStatus)
class AnnotatorProjectStatusAdmin(admin.ModelAdmin):
    list_display = ["annotator", "project", "state", "reason", "decided_by", "decided_at"]
    list_filter = ["state", "project"]
    raw_id_fields = ["annotator", "decided_by"]


@admin.register(GoldProposal)
class GoldProposalAdmin(admin.ModelAdmin):
    list_display = ["id", "solution", "votes", "state", "created_at", "decided_by"]
    list_filter = ["state"]
    raw_id_fields = ["solution", "decided_by"]


@admin.register(Adjudication)
class AdjudicationAdmin(admin.ModelAdmin):
    list_display = ["step", "value", "decided_by", "decided_at"]
    raw_id_fields = ["step", "decided_by"]


class DiagramProjectInline(admin.TabularInline):
    model = DiagramProject
    extra = 0
    raw_id_fields = ["project"]


@admin.register(Diagram)
class DiagramAdmin(admin.ModelAdmin):
    """Drawn by the worker (labeling/diagrams/); ``manage.py draw_diagrams --redraw-failed`` draws again."""

    list_display = ["sha256", "status", "draw_seconds", "drawn_at", "created_at"]
    list_filter = ["status"]
    search_fields = ["sha256", "code"]
    readonly_fields = ["sha256", "svg", "error", "draw_seconds", "drawn_at", "created_at"]
    inlines = [DiagramProjectInline]


@admin.register(DiagramProject)
class DiagramProjectAdmin(admin.ModelAdmin):
    list_display = ["diagram", "project"]
    list_filter = ["project"]
    raw_id_fields = ["diagram"]


@admin.register(ApiToken)
class ApiTokenAdmin(admin.ModelAdmin):
    """Everyone's API tokens; deleting one (or selecting several, "Delete selected") revokes it.

    Only a key's hash is stored, so none can be read here, and tokens are made by their owners
    (POST /api/auth/token/ or the API tokens page), not in the admin.
    """

    list_display = ["user", "name", "prefix", "created_at", "last_used_at", "expires_at"]
    list_filter = ["expires_at"]
    search_fields = ["user__username", "name", "prefix"]
    readonly_fields = ["user", "name", "prefix", "created_at", "last_used_at", "expires_at"]
    exclude = ["digest"]

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False


class _ReadOnly(admin.ModelAdmin):
    """Rows the actions themselves write (labeling/audit, the inbox's resolve): read here, never made,
    changed or deleted, or the log would no longer say what happened."""

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False


@admin.register(AuditEntry)
class AuditEntryAdmin(_ReadOnly):
    list_display = ["at", "project", "actor_name", "action", "target"]
    list_filter = ["action", "project"]
    search_fields = ["actor_name", "target", "reason"]


@admin.register(ReportResolution)
class ReportResolutionAdmin(_ReadOnly):
    list_display = ["assignment", "resolved_by", "resolved_at"]
    raw_id_fields = ["assignment", "resolved_by"]


@admin.register(LabelSource)
class LabelSourceAdmin(admin.ModelAdmin):
    list_display = ["project", "kind", "name", "created_at"]
    list_filter = ["kind", "project"]


@admin.register(StepLabel)
class StepLabelAdmin(_ReadOnly):
    list_display = ["step", "source", "value", "score", "status"]
    list_filter = ["status", "source__kind"]
    raw_id_fields = ["step", "source"]
