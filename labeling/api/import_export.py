"""Moving data in and out of a project: file upload into an importer, streamed export.

The work happens in ``labeling.imports.run_import`` and ``labeling.exports.stream_export``;
these views only check the request and translate the answer.
"""
import datetime

from django.http import StreamingHttpResponse
from django.utils import timezone
from django.utils.text import slugify
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema, inline_serializer
from rest_framework import serializers, status
from rest_framework.negotiation import DefaultContentNegotiation
from rest_framework.parsers import FormParser, MultiPartParser
from rest_framework.response import Response
from rest_framework.views import APIView

from labeling.access.projects import project_for
from labeling.access.roles import LEAD, RESEARCHER
from labeling.access.permissions import IsResearcher, LeadOrResearcher
from labeling.exports import ExportFilters, get_exporter, stream_export
from labeling.imports import ImportFailed, get_importer, run_import
from labeling.quality.screening import paused_annotator_ids

from .paging import MAX_NUMBER

# The formats the registries are meant to hold, for the docs; the registries decide.
IMPORT_FORMATS = ["prm800k", "candidates", "gsm8k-examples", "problems"]
EXPORT_FORMATS = ["prm800k", "trl", "prm800k-consensus"]


class ImportRequestSerializer(serializers.Serializer):
    file = serializers.FileField(help_text="JSONL, or JSONL compressed with gzip.")
    format = serializers.CharField(help_text=f"One of the registered formats: {', '.join(IMPORT_FORMATS)}.")

    def validate_format(self, value):
        try:
            get_importer(value)
        except ImportFailed as exc:
            raise serializers.ValidationError(exc.reason) from None
        return value


class ImportResultSerializer(serializers.Serializer):
    records = serializers.IntegerField(help_text="Lines read.")
    created = serializers.IntegerField(help_text="Records that added something.")
    skipped = serializers.IntegerField(help_text="Records already present (a re-import).")
    details = serializers.DictField()


ImportErrorSerializer = inline_serializer(
    "ImportError",
    {"detail": serializers.CharField(), "line": serializers.IntegerField(allow_null=True),
     "field": serializers.CharField(allow_null=True)},
)


class ImportView(APIView):
    """Import a file into the project: all of it or, on bad input, none of it."""

    permission_classes = [IsResearcher]
    parser_classes = [MultiPartParser, FormParser]

    @extend_schema(
        operation_id="projects_imports_create",
        request={"multipart/form-data": ImportRequestSerializer},
        responses={201: ImportResultSerializer, 400: ImportErrorSerializer},
    )
    def post(self, request, pk):
        project = project_for(request.user, pk, RESEARCHER)
        form = ImportRequestSerializer(data=request.data)
        form.is_valid(raise_exception=True)
        upload = form.validated_data["file"]
        # Bad input raises ImportFailed, answered {detail, line, field} by labeling.api.errors.
        result = run_import(form.validated_data["format"], upload, project, path=upload.name)
        return Response(ImportResultSerializer(result.as_dict()).data, status=status.HTTP_201_CREATED)


class ExportQuerySerializer(serializers.Serializer):
    format = serializers.CharField(default="prm800k")
    gzip = serializers.BooleanField(default=False)
    generation = serializers.ListField(child=serializers.IntegerField(min_value=-1, max_value=MAX_NUMBER),
                                       required=False)
    since = serializers.DateTimeField(required=False, help_text="Submitted at or after (ISO 8601).")
    until = serializers.DateTimeField(required=False, help_text="Submitted before (ISO 8601).")
    quality_control = serializers.BooleanField(default=True, help_text="0 leaves gold items out.")
    exclude_paused = serializers.BooleanField(
        default=False, help_text="1 leaves out the labels of annotators paused or failed in the project."
    )

    def validate_format(self, value):
        try:
            get_exporter(value)
        except ValueError as exc:
            raise serializers.ValidationError(str(exc)) from None
        return value

    def validate(self, data):
        if "since" in data and "until" in data and data["since"] >= data["until"]:
            raise serializers.ValidationError({"until": "must be later than since."})
        return data


def export_query(query_params):
    """The export's query string as serializer input; ``generation`` may repeat or use commas."""
    data = {key: query_params.get(key) for key in ("format", "gzip", "since", "until", "quality_control",
                                                   "exclude_paused") if key in query_params}
    generations = [g.strip() for value in query_params.getlist("generation") for g in value.split(",")]
    if generations:
        data["generation"] = [g for g in generations if g]
    return data


class IgnoreFormatParameter(DefaultContentNegotiation):
    # ?format= names the export format here, not DRF's renderer override.
    def select_renderer(self, request, renderers, format_suffix=None):
        return renderers[0], renderers[0].media_type


def attachment_name(project, extension, compress, now=None):
    """``<project>-<UTC timestamp><extension>[.gz]``, safe to put in a header."""
    now = (now or timezone.now()).astimezone(datetime.timezone.utc)
    name = slugify(project.name) or f"project-{project.pk}"
    return f"{name}-{now:%Y%m%dT%H%M%SZ}{extension}{'.gz' if compress else ''}"


class ExportView(APIView):
    """Stream the project's submitted labels; the file is never held whole in memory."""

    permission_classes = [LeadOrResearcher]
    content_negotiation_class = IgnoreFormatParameter

    @extend_schema(
        operation_id="projects_export_retrieve",
        parameters=[
            OpenApiParameter("format", str, enum=EXPORT_FORMATS, default="prm800k"),
            OpenApiParameter("gzip", bool, default=False),
            OpenApiParameter("generation", int, many=True, explode=True,
                             description="Keep these generations (repeat, or separate with commas)."),
            OpenApiParameter("since", OpenApiTypes.DATETIME, description="Submitted at or after."),
            OpenApiParameter("until", OpenApiTypes.DATETIME, description="Submitted before."),
            OpenApiParameter("quality_control", bool, default=True, description="false leaves gold items out."),
            OpenApiParameter("exclude_paused", bool, default=False,
                             description="true leaves out the labels of annotators paused in the project."),
        ],
        responses={
            (200, "application/x-ndjson"): OpenApiTypes.BINARY,
            (200, "application/gzip"): OpenApiTypes.BINARY,
            (400, "application/json"): OpenApiTypes.OBJECT,
        },
    )
    def get(self, request, pk):
        project = project_for(request.user, pk, LEAD, RESEARCHER)
        query = ExportQuerySerializer(data=export_query(request.query_params))
        query.is_valid(raise_exception=True)
        options = query.validated_data
        filters = ExportFilters(
            project_id=project.pk,
            generations=tuple(options["generation"]) if options.get("generation") else None,
            since=options.get("since"),
            until=options.get("until"),
            include_quality_control=options["quality_control"],
            exclude_annotator_ids=paused_annotator_ids(project) if options["exclude_paused"] else (),
        )
        exporter = get_exporter(options["format"])
        compress = options["gzip"]
        response = StreamingHttpResponse(
            stream_export(options["format"], filters, compress=compress),
            content_type="application/gzip" if compress else exporter.content_type,
        )
        filename = attachment_name(project, exporter.extension, compress)
        response["Content-Disposition"] = f'attachment; filename="{filename}"'
        return response
