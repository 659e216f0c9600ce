"""The audit log and the reports inbox over the API.

- ``GET /api/projects/{id}/audit/``: the project's audit entries, newest first, filtered
  (``action``, ``actor``, ``since``, ``until``) and paged; ``?format=csv`` streams every entry
  the filter keeps as a CSV file. Leads and researchers of the project.
- ``GET /api/projects/{id}/reports/``: annotators' give-up and bad-problem reports (``state``
  open, resolved or all), paged. Leads.
- ``POST /api/assignments/{id}/resolve/``: resolve a report with a note (logged). Leads.

Thin views over ``labeling.audit.log`` and ``labeling.quality.reports``; a bad filter is a
DomainError naming it (labeling/api/errors.py answers it).
"""
import csv
import io
import json

from django.http import StreamingHttpResponse
from django.urls import reverse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import serializers
from rest_framework.response import Response
from rest_framework.views import APIView

from labeling import audit
from labeling.access.permissions import IsLead, LeadOrResearcher
from labeling.access.projects import object_for, project_for
from labeling.access.roles import LEAD, RESEARCHER, roles_in
from labeling.audit import log
from labeling.errors import DomainError
from labeling.models import Assignment
from labeling.quality import reports

from .dashboard import _csv_safe as csv_safe
from .paging import BoundedPaging, page
from .renderers import IgnoreFormatParameter
from .work import checked

CSV_COLUMNS = ["id", "at", "actor", "action", "target", "reason", "before", "after"]


class AuditEntrySerializer(serializers.Serializer):
    id = serializers.IntegerField()
    at = serializers.DateTimeField()
    actor = serializers.CharField(source="actor_name", help_text="Who: a username, or empty for the system.")
    action = serializers.ChoiceField(choices=audit.ACTIONS)
    target = serializers.CharField(help_text="What was acted on, in words.")
    before = serializers.SerializerMethodField(help_text="What it was (the fields that changed).")
    after = serializers.SerializerMethodField(help_text="What it became.")
    reason = serializers.CharField(allow_blank=True, help_text="Why: the reason or note given.")

    def get_before(self, entry) -> dict | None:
        return log.shown(entry, sees_gold=self.context.get("sees_gold", False))[0]

    def get_after(self, entry) -> dict | None:
        return log.shown(entry, sees_gold=self.context.get("sees_gold", False))[1]


FILTERS = [
    OpenApiParameter("action", str, enum=list(audit.ACTIONS), description="Only this action."),
    OpenApiParameter("actor", str, description="Only this person's actions (a username)."),
    OpenApiParameter("since", str, description="From this date (YYYY-MM-DD, included) or ISO date and time."),
    OpenApiParameter("until", str, description="To this date (YYYY-MM-DD, included) or ISO date and time."),
]


def csv_lines(rows, sees_gold):
    """The entries as CSV text, a header then a line each (``before``/``after`` as JSON), streamed."""
    buffer = io.StringIO()
    writer = csv.writer(buffer)

    def flush():
        text = buffer.getvalue()
        buffer.seek(0)
        buffer.truncate()
        return text

    writer.writerow(CSV_COLUMNS)
    yield flush()
    for entry in rows.iterator(chunk_size=500):
        before, after = log.shown(entry, sees_gold=sees_gold)
        writer.writerow([csv_safe(v) for v in (
            entry.pk, entry.at.isoformat(), entry.actor_name, entry.action, entry.target, entry.reason,
            json.dumps(before, sort_keys=True), json.dumps(after, sort_keys=True))])
        yield flush()


class AuditLogView(APIView):
    """The project's audit log: who did what, when, before and after, and why; JSON pages or a CSV file."""

    permission_classes = [LeadOrResearcher]
    pagination_class = BoundedPaging
    content_negotiation_class = IgnoreFormatParameter  # ?format= picks JSON or CSV here

    @extend_schema(
        operation_id="projects_audit_list",
        parameters=[OpenApiParameter("format", str, enum=["json", "csv"], default="json"), *FILTERS,
                    OpenApiParameter("limit", int, default=100), OpenApiParameter("offset", int, default=0)],
        responses={(200, "application/json"): AuditEntrySerializer(many=True), (200, "text/csv"): OpenApiTypes.STR,
                   400: OpenApiResponse(description="{detail, field}: a bad filter, named")},
    )
    def get(self, request, pk):
        project = project_for(request.user, pk, LEAD, RESEARCHER)
        wanted = request.query_params.get("format", "json")
        if wanted not in ("json", "csv"):
            raise DomainError("format must be json or csv.", "format")
        rows = log.entries(project, request.query_params)
        sees_gold = LEAD in roles_in(request.user, project.pk)
        if wanted == "json":
            return page(self, request, rows, lambda found: AuditEntrySerializer(
                found, many=True, context={"sees_gold": sees_gold}).data)
        response = StreamingHttpResponse(csv_lines(rows, sees_gold), content_type="text/csv; charset=utf-8")
        response["Content-Disposition"] = f'attachment; filename="audit-project-{project.pk}.csv"'
        return response


# The reports inbox ------------------------------------------------------------------------


class ReportSerializer(serializers.Serializer):
    assignment = serializers.IntegerField(source="pk")
    annotator = serializers.IntegerField(source="annotator_id", allow_null=True)
    username = serializers.SerializerMethodField()
    reason = serializers.CharField(source="finish_reason", help_text="give_up or bad_problem")
    note = serializers.CharField(source="finish_note", allow_blank=True, help_text="The annotator's words.")
    solution = serializers.IntegerField(source="solution_id")
    problem = serializers.SerializerMethodField()
    submitted_at = serializers.DateTimeField()
    resolved = serializers.SerializerMethodField()
    resolved_by = serializers.SerializerMethodField()
    resolved_at = serializers.SerializerMethodField()
    resolution_note = serializers.SerializerMethodField()
    drilldown = serializers.SerializerMethodField(help_text="The annotator's drill-down page.")

    def _resolution(self, row):
        return getattr(row, "resolution", None)

    def get_username(self, row) -> str | None:
        return row.annotator.user.get_username() if row.annotator_id and row.annotator.user_id else None

    def get_problem(self, row) -> str:
        return row.solution.problem.problem

    def get_resolved(self, row) -> bool:
        return self._resolution(row) is not None

    def get_resolved_by(self, row) -> str | None:
        found = self._resolution(row)
        return found.resolved_by.get_username() if found and found.resolved_by_id else None

    def get_resolved_at(self, row) -> str | None:
        found = self._resolution(row)
        return found.resolved_at.isoformat() if found else None

    def get_resolution_note(self, row) -> str:
        found = self._resolution(row)
        return found.note if found else ""

    def get_drilldown(self, row) -> str | None:
        if not row.annotator_id:
            return None
        return reverse("dashboard-annotator", args=[row.project_id, row.annotator_id])


class ResolveSerializer(serializers.Serializer):
    note = serializers.CharField(required=False, allow_blank=True, default="", max_length=2000,
                                 help_text="What was done about it (logged).")


class ReportListView(APIView):
    """The project's give-up and bad-problem reports, newest first (``state``: open, resolved or all)."""

    permission_classes = [IsLead]
    pagination_class = BoundedPaging

    @extend_schema(
        operation_id="projects_reports_list",
        parameters=[OpenApiParameter("state", str, default="open", description="open, resolved or all")],
        responses={200: ReportSerializer(many=True), 400: OpenApiResponse(description="{detail, field}")},
    )
    def get(self, request, pk):
        project = project_for(request.user, pk, LEAD)
        rows = reports.reports(project, request.query_params.get("state", reports.OPEN))
        return page(self, request, rows, lambda found: ReportSerializer(found, many=True).data)


class ReportResolveView(APIView):
    """Resolve a report with a note: it leaves the open inbox, and the audit log keeps who, when and the note."""

    permission_classes = [IsLead]

    @extend_schema(operation_id="assignments_resolve_create", request=ResolveSerializer,
                   responses={200: ReportSerializer, 400: OpenApiResponse(description="Not a report"),
                              409: OpenApiResponse(description="Already resolved")})
    def post(self, request, pk):
        assignment = object_for(request.user, Assignment.objects.select_related("project"), pk, LEAD)
        data = checked(ResolveSerializer, request)
        reports.resolve(assignment, request.user, data["note"])
        row = reports.reports(assignment.project, reports.ALL).get(pk=assignment.pk)
        return Response(ReportSerializer(row).data)
