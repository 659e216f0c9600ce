"""Snapshots over the API: the list, a download, and "snapshot now".

The files are written by ``labeling.tasks.export_project_snapshot`` (on a worker) under
``settings.STEPMARK_EXPORT_DIR`` (see ``labeling/exports/snapshots.py``); these views only read that
folder and queue the job. Downloads stream from disk (``FileResponse``); the name in the URL
must be a snapshot file directly inside the project's folder.
"""
from django.conf import settings
from django.http import FileResponse, Http404
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse, extend_schema
from kombu.exceptions import OperationalError
from rest_framework import serializers, status
from rest_framework.response import Response
from rest_framework.reverse import reverse
from rest_framework.views import APIView

from labeling import tasks
from labeling.access.projects import project_for
from labeling.access.roles import LEAD, RESEARCHER
from labeling.access.permissions import IsResearcher, LeadOrResearcher
from labeling.exports import snapshots

from .import_export import IgnoreFormatParameter


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
