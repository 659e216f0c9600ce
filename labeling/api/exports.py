"""Exports over the API: the project's labels streamed in any export format, and the snapshots
(the list, a download, "snapshot now").

The export is written by ``labeling.exports.stream_export`` as the response streams, never held
whole in memory. Snapshot files are written by ``labeling.tasks.export_project_snapshot`` (on a
worker) under ``settings.STEPMARK_EXPORT_DIR`` (see ``labeling/exports/snapshots.py``); these
views only read that folder and queue the job. Downloads stream from disk (``FileResponse``);
the name in the URL must be a snapshot file directly inside the project's folder.
"""
import datetime

from django.conf import settings
from django.http import FileResponse, Http404, StreamingHttpResponse
from django.utils import timezone
from django.utils.text import slugify
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from kombu.exceptions import OperationalError
from rest_framework import serializers, status
from rest_framework.response import Response
from rest_framework.reverse import reverse
from rest_framework.views import APIView

from labeling import tasks
from labeling.access.permissions import IsResearcher, LeadOrResearcher
from labeling.access.projects import project_for
from labeling.access.roles import LEAD, RESEARCHER
from labeling.exports import ExportFilters, downloads, get_exporter, snapshots
from labeling.quality import sources as label_sources
from labeling.quality.screening import paused_annotator_ids

from .paging import MAX_NUMBER
from .renderers import IgnoreFormatParameter

# The formats the schema lists for ?format=; the registry (labeling/exports/registry.py) decides.
EXPORT_FORMATS = ["prm800k", "trl", "prm800k-consensus", "trl-parquet", "step-labels"]


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
    provenance = serializers.BooleanField(
        default=False, help_text="TRL formats: 1 adds the labeler and generation columns to every row."
    )
    agree = serializers.CharField(
        required=False, help_text="TRL formats: rows of the labels these sources agree on, comma-separated "
                                  "(people, prm, judge, rollouts, import or source:<id>; two or more).")

    def validate_agree(self, value):
        selectors = [s.strip() for s in value.split(",") if s.strip()]
        if len(selectors) < 2:
            raise serializers.ValidationError("name two or more sources, separated by commas.")
        return tuple(selectors)

    def validate_format(self, value):
        try:
            get_exporter(value)
        except ValueError as exc:
            raise serializers.ValidationError(str(exc)) from None
        return value

    def validate(self, data):
        if "since" in data and "until" in data and data["since"] >= data["until"]:
            raise serializers.ValidationError({"until": "must be later than since."})
        if data["provenance"] and not get_exporter(data["format"]).provenance:
            raise serializers.ValidationError(
                {"provenance": f"the {data['format']} format has no such columns to add (only the TRL formats take it; "
                               "PRM800K records carry labeler and generation already)."})
        if data["format"] == "step-labels" and data["exclude_paused"]:
            raise serializers.ValidationError({"exclude_paused": "applies to people's passes, not to machine labels."})
        if data.get("agree"):
            if not get_exporter(data["format"]).agree:
                raise serializers.ValidationError({"agree": f"the {data['format']} format cannot be filtered by "
                                                            "agreement (only the TRL formats can)."})
            passes_only = [k for k in ("since", "until") if k in data] + [
                k for k in ("provenance", "exclude_paused") if data[k]]
            if passes_only:
                raise serializers.ValidationError({passes_only[0]: "applies to people's passes, not to an export by "
                                                                   "agreement (one row per solution)."})
        return data


def export_query(query_params):
    """The export's query string as serializer input; ``generation`` may repeat or use commas."""
    data = {key: query_params.get(key) for key in ("format", "gzip", "since", "until", "quality_control",
                                                   "exclude_paused", "provenance", "agree") if key in query_params}
    generations = [g.strip() for value in query_params.getlist("generation") for g in value.split(",")]
    if generations:
        data["generation"] = [g for g in generations if g]
    return data


def attachment_name(project, export_format, extension, compress, generations=None, now=None):
    """``<project>-<format>[-gen<N>[+<M>...]]-<UTC timestamp><extension>[.gz]``, safe to put in a header.

    The format and the generations are in the name so that files of one project downloaded in
    several formats, or per generation, do not pass for one another on the researcher's disk.
    """
    now = (now or timezone.now()).astimezone(datetime.timezone.utc)
    parts = [slugify(project.name) or f"project-{project.pk}", slugify(export_format)]
    if generations:
        parts.append("gen" + "+".join(str(g) for g in sorted(set(generations))))
    return f"{'-'.join(parts)}-{now:%Y%m%dT%H%M%SZ}{extension}{'.gz' if compress else ''}"


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
            OpenApiParameter("provenance", bool, default=False,
                             description="TRL formats: true adds labeler and generation columns to every row."),
            OpenApiParameter("agree", str, description="TRL formats: rows of the labels these sources agree on "
                                                       "(comma-separated: people, prm, judge, rollouts, import, "
                                                       "source:<id>; two or more)."),
        ],
        # Each format's own media type (trl-parquet's is Parquet's), or gzip's with ?gzip=true.
        responses={
            **{(200, media_type): OpenApiTypes.BINARY
               for media_type in sorted({get_exporter(name).content_type for name in EXPORT_FORMATS}
                                        | {"application/gzip"})},
            400: OpenApiResponse(description="A bad filter or format, named."),
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
            provenance=options["provenance"],
            agree=options.get("agree", ()),
        )
        if filters.agree:
            label_sources.resolve_sources(project, filters.agree, field="agree")  # a 400 before the stream starts
        exporter = get_exporter(options["format"])
        compress = options["gzip"]
        response = StreamingHttpResponse(
            downloads.download(project, request.user, options["format"], filters, compress=compress),
            content_type="application/gzip" if compress else exporter.content_type,
        )
        filename = attachment_name(project, options["format"], exporter.extension, compress, filters.generations)
        response["Content-Disposition"] = f'attachment; filename="{filename}"'
        return response


class SnapshotSerializer(serializers.Serializer):
    name = serializers.CharField()
    size = serializers.IntegerField(help_text="Bytes (gzip).")
    created = serializers.DateTimeField(help_text="When it was written (UTC, from the name).")
    url = serializers.CharField(help_text="Where to download it.")


class SnapshotJobSerializer(serializers.Serializer):
    state = serializers.ChoiceField([snapshots.QUEUED, snapshots.RUNNING, snapshots.DONE, snapshots.FAILED])
    at = serializers.DateTimeField()
    name = serializers.CharField(required=False, help_text="The snapshot written (done).")
    error = serializers.CharField(required=False, help_text="Why it failed (failed).")
    deleted = serializers.IntegerField(required=False, help_text="Older snapshots the retention rule removed.")


class SnapshotListSerializer(serializers.Serializer):
    snapshots = SnapshotSerializer(many=True)
    job = SnapshotJobSerializer(allow_null=True, help_text="The project's latest snapshot job, if remembered.")
    keep_last = serializers.IntegerField(help_text="Retention: the newest this many are kept (0: all).")
    max_age_days = serializers.FloatField(help_text="Retention: older ones are deleted (0: never).")


def snapshot_list(request, project):
    rows = [
        {"name": s.name, "size": s.size, "created": s.created,
         "url": reverse("api:project-snapshot-download", args=[project.pk, s.name], request=request)}
        for s in snapshots.list_snapshots(project, settings.STEPMARK_EXPORT_DIR)
    ]
    return SnapshotListSerializer({
        "snapshots": rows,
        "job": snapshots.job_status(project),
        "keep_last": settings.STEPMARK_EXPORT_KEEP,
        "max_age_days": settings.STEPMARK_EXPORT_RETENTION_DAYS,
    }).data


class SnapshotListView(APIView):
    """The project's snapshots, newest first (GET); queue a snapshot now (POST, researchers)."""

    def get_permissions(self):
        return [IsResearcher()] if self.request.method == "POST" else [LeadOrResearcher()]

    @extend_schema(operation_id="projects_snapshots_list", responses={200: SnapshotListSerializer})
    def get(self, request, pk):
        project = project_for(request.user, pk, LEAD, RESEARCHER)
        return Response(snapshot_list(request, project))

    @extend_schema(
        operation_id="projects_snapshots_create",
        request=None,
        responses={202: SnapshotListSerializer, 503: OpenApiResponse(description="The job queue is unreachable.")},
    )
    def post(self, request, pk):
        project = project_for(request.user, pk, RESEARCHER)
        # Recorded before queueing: an eager run (or a quick worker) then overwrites it.
        snapshots.record_job(project, snapshots.QUEUED)
        try:
            tasks.export_project_snapshot.delay(project.pk)
        except OperationalError as exc:
            snapshots.record_job(project, snapshots.FAILED, error=f"could not queue the job: {exc}")
            return Response({"detail": f"The job queue is unreachable: {exc}"},
                            status=status.HTTP_503_SERVICE_UNAVAILABLE)
        downloads.snapshot_queued(project, request.user)
        return Response(snapshot_list(request, project), status=status.HTTP_202_ACCEPTED)


class SnapshotDownloadView(APIView):
    """Download one snapshot (PRM800K JSONL, gzip), streamed from disk."""

    permission_classes = [LeadOrResearcher]
    # The file is the answer whatever the Accept header asks for.
    content_negotiation_class = IgnoreFormatParameter

    @extend_schema(
        operation_id="projects_snapshots_download",
        responses={(200, "application/gzip"): OpenApiTypes.BINARY, (404, "application/json"): OpenApiTypes.OBJECT},
    )
    def get(self, request, pk, name):
        project = project_for(request.user, pk, LEAD, RESEARCHER)
        snapshot = snapshots.find_snapshot(project, settings.STEPMARK_EXPORT_DIR, name)
        if snapshot is None:
            raise Http404("No such snapshot.")
        try:
            handle = open(snapshot.path, "rb")
        except FileNotFoundError:  # the retention rule removed it a moment ago
            raise Http404("No such snapshot.") from None
        return FileResponse(handle, as_attachment=True, filename=snapshot.name, content_type="application/gzip")
