"""Imports over the API: an upload imported by a job on a worker, its preview, the job's state.

The work happens in ``labeling.imports.jobs`` (which runs ``labeling.imports.run_import`` on a
worker); these views only check the request and translate the answer. The export endpoint is
in ``exports.py``.
"""
from django.core.files.uploadhandler import TemporaryFileUploadHandler
from django.urls import reverse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse, extend_schema, extend_schema_field, inline_serializer
from rest_framework import serializers, status
from rest_framework.parsers import FormParser, MultiPartParser
from rest_framework.response import Response
from rest_framework.views import APIView

from labeling.access.permissions import IsResearcher
from labeling.access.projects import object_for, project_for
from labeling.access.roles import RESEARCHER
from labeling.imports import jobs
from labeling.imports.registry import describe_formats, format_names
from labeling.imports.splitting import SPLITS
from labeling.models import ImportJob

from .paging import BoundedPaging, page

PREVIEW_RECORDS = 5  # records a preview shows

# The formats the registry holds, for the docs; the registry decides.
IMPORT_FORMATS = format_names()


@extend_schema_field(OpenApiTypes.BINARY)
class UploadField(serializers.FileField):
    """A file field the OpenAPI schema declares as binary: Swagger's "Try it out" shows a file picker."""


class ImportRequestSerializer(serializers.Serializer):
    file = UploadField(help_text="JSONL (gzip or not); .json for vllm, .parquet for hf-parquet (docs/formats.md).")
    format = serializers.ChoiceField(choices=IMPORT_FORMATS, help_text="The import format (GET /api/import-formats/).")
    split = serializers.ChoiceField(choices=SPLITS, required=False,
                                    help_text="Raw-output formats: how a completion becomes steps (default paragraphs).")
    pattern = serializers.CharField(required=False, allow_blank=True, max_length=1000,
                                    help_text="With split=regex: where to split (zero-width keeps the marker).")
    generator = serializers.CharField(required=False, allow_blank=True, max_length=200,
                                      help_text="Raw-output formats: the model's name, over what the file says; "
                                                "required for vllm, whose files do not name it.")
    requests = UploadField(required=False, help_text="openai-batch: the Batch input file (its messages hold the problems).")
    tag = serializers.CharField(required=False, allow_blank=True, max_length=20,
                                help_text="math-shepherd: the step tag (default ки).")
    label_source = serializers.CharField(required=False, allow_blank=True, max_length=200,
                                         help_text="Step-label formats: the label source's name "
                                                   "(default '<format>: <file name>').")

    def options(self):
        return {key: self.validated_data.get(key) for key in ("split", "pattern", "generator", "tag", "label_source")}


class ImportResultSerializer(serializers.Serializer):
    records = serializers.IntegerField(help_text="Lines read.")
    created = serializers.IntegerField(help_text="How many were added, counted in `unit`.")
    skipped = serializers.IntegerField(help_text="How many were there already (a re-import, or repeated in the file), "
                                                 "counted in `unit`.")
    # A job that ended before `unit` existed counted records.
    unit = serializers.ChoiceField(choices=["solutions", "problems", "records", "labels"], default="records",
                                   help_text="What created and skipped count: solutions (candidate and raw-output "
                                             "formats), problems (problem files), records (PRM800K, one pass each) "
                                             "or labels (machine step labels: math-shepherd, mc-rollouts).")
    details = serializers.DictField()


# The body is the common refusal's (labeling/api/autoschema.py): an import's names its line.
BAD_FILE = OpenApiResponse(description="Bad options ({field: [messages]}) or a bad line ({detail, line, field}).")

ProgressSerializer = inline_serializer(
    "ImportProgress",
    {"lines_read": serializers.IntegerField(), "records_stored": serializers.IntegerField(),
     "bytes_read": serializers.IntegerField(), "fraction": serializers.FloatField(help_text="Bytes read / total."),
     "eta_s": serializers.FloatField(allow_null=True, help_text="Seconds left at the rate the bytes were read "
                                                                "(null unless running and some are read).")},
)
JobErrorSerializer = inline_serializer(
    "ImportJobError",
    {"message": serializers.CharField(), "file": serializers.CharField(allow_null=True),
     "line": serializers.IntegerField(allow_null=True), "field": serializers.CharField(allow_null=True)},
    allow_null=True,  # null unless the job failed
)


class ImportJobSerializer(serializers.ModelSerializer):
    progress = serializers.SerializerMethodField()
    error = serializers.SerializerMethodField()
    result = ImportResultSerializer(allow_null=True)
    url = serializers.SerializerMethodField()
    requested_by = serializers.SerializerMethodField(help_text="Who uploaded it (null once their account is gone).")

    class Meta:
        model = ImportJob
        fields = ["id", "project", "format", "options", "file_name", "state", "bytes_total", "progress", "result",
                  "error", "requested_by", "created_at", "started_at", "finished_at", "url"]

    def get_requested_by(self, job) -> str | None:
        return job.requested_by.get_username() if job.requested_by_id else None

    @extend_schema_field(ProgressSerializer)
    def get_progress(self, job):
        return jobs.live(job)

    @extend_schema_field(JobErrorSerializer)
    def get_error(self, job):
        if job.state != ImportJob.FAILED:
            return None
        return {"message": job.error, "file": job.error_file or None, "line": job.error_line,
                "field": job.error_field or None}

    def get_url(self, job) -> str:
        return reverse("api:import-job", args=[job.pk])


class UploadView(APIView):
    """A view whose multipart upload is streamed to a temporary file, never held in memory."""

    permission_classes = [IsResearcher]
    parser_classes = [MultiPartParser, FormParser]

    def initialize_request(self, request, *args, **kwargs):
        # Before anything reads the body (the session's CSRF check parses the form).
        request.upload_handlers = [TemporaryFileUploadHandler(request)]
        return super().initialize_request(request, *args, **kwargs)

    def form(self, request):
        form = ImportRequestSerializer(data=request.data)
        form.is_valid(raise_exception=True)
        return form


class ImportView(UploadView):
    """Upload a file to import: a job on the worker, all of the file or, on bad input, none of it."""

    @extend_schema(
        operation_id="projects_imports_create",
        request={"multipart/form-data": ImportRequestSerializer},
        responses={202: ImportJobSerializer, 400: BAD_FILE},
    )
    def post(self, request, pk):
        project = project_for(request.user, pk, RESEARCHER)
        form = self.form(request)
        # Bad options raise FormatError naming the field (labeling.api.errors answers it).
        job = jobs.start(project, request.user, form.validated_data["format"], form.validated_data["file"],
                         form.options(), requests=form.validated_data.get("requests"))
        data = ImportJobSerializer(job).data
        return Response(data, status=status.HTTP_202_ACCEPTED, headers={"Location": data["url"]})

    pagination_class = BoundedPaging  # the history is paged by ?limit=&offset= as every list

    @extend_schema(operation_id="projects_imports_list", responses={200: ImportJobSerializer(many=True)})
    def get(self, request, pk):
        """The project's import jobs, newest first, paged: each with its state, counts or error, who and when."""
        project = project_for(request.user, pk, RESEARCHER)
        history = ImportJob.objects.filter(project=project).select_related("requested_by").order_by("-pk")
        return page(self, request, history, lambda rows: ImportJobSerializer(rows, many=True).data)


class ImportPreviewView(UploadView):
    """The first records of a file split into steps as the import would, each final answer graded against the
    ground truth it would get; stores nothing."""

    @extend_schema(
        operation_id="projects_imports_preview",
        request={"multipart/form-data": ImportRequestSerializer},
        responses={200: OpenApiTypes.OBJECT, 400: BAD_FILE},
    )
    def post(self, request, pk):
        project = project_for(request.user, pk, RESEARCHER)
        form = self.form(request)
        upload = form.validated_data["file"]
        records = jobs.preview_upload(form.validated_data["format"], upload, form.options(),
                                      requests=form.validated_data.get("requests"), n=PREVIEW_RECORDS,
                                      project=project)
        return Response({"file": upload.name, "records": records})


class ImportJobView(APIView):
    """One import job: its state, live counts with an ETA, and its outcome."""

    permission_classes = [IsResearcher]

    @extend_schema(responses={200: ImportJobSerializer})
    def get(self, request, pk):
        job = object_for(request.user, ImportJob.objects.select_related("project"), pk, RESEARCHER)
        return Response(ImportJobSerializer(job).data)


class ImportJobCancelView(APIView):
    """Cancel a queued or running import: it stores nothing (409 once it has ended)."""

    permission_classes = [IsResearcher]

    @extend_schema(request=None, responses={200: ImportJobSerializer, 409: OpenApiTypes.OBJECT})
    def post(self, request, pk):
        job = object_for(request.user, ImportJob.objects.select_related("project"), pk, RESEARCHER)
        return Response(ImportJobSerializer(jobs.cancel(job)).data)


class ImportFormatsView(APIView):
    """The import formats, their options and whether they can be previewed: what the upload form offers."""

    permission_classes = [IsResearcher]

    @extend_schema(responses={200: OpenApiTypes.OBJECT})
    def get(self, request):
        return Response({"formats": describe_formats(), "splits": list(SPLITS), "preview_records": PREVIEW_RECORDS})
