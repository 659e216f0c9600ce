"""The view shared by a project's jobs of which one may be open at a time (judge runs, replay
simulations): ``GET`` lists the project's runs, newest first, paged; ``POST`` checks the form,
starts a run and queues its task (202), or answers 409 with the run still open
(``scoring.runs.JobConflict``). A subclass names its model, serializers and three steps; its
schema (operation ids, the 409's body) goes on the subclass with ``extend_schema_view``.
"""
from rest_framework import status
from rest_framework.parsers import JSONParser
from rest_framework.response import Response
from rest_framework.views import APIView

from labeling.access.permissions import IsResearcher
from labeling.access.projects import project_for
from labeling.access.roles import RESEARCHER
from labeling.api.paging import BoundedPaging, page
from labeling.outages import queued_or_failed
from scoring import runs


class ProjectJobsView(APIView):
    permission_classes = [IsResearcher]
    parser_classes = [JSONParser]
    pagination_class = BoundedPaging
    model = None  # the run's model, with ``project`` and ``task_id``
    serializer_class = None  # a run as the API shows it
    form_class = None  # what POST takes

    def start(self, project, data, user):
        """Make the run (``scoring.runs.JobConflict`` while one is open)."""
        raise NotImplementedError

    def queue(self, run):
        """Send the run's task; returns Celery's result."""
        raise NotImplementedError

    def mark_failed(self, pk, reason):
        """What a run whose task could not be sent becomes."""
        raise NotImplementedError

    def get(self, request, pk):
        project = project_for(request.user, pk, RESEARCHER)
        rows = self.model.objects.filter(project=project).order_by("-pk")
        return page(self, request, rows, lambda rows: self.serializer_class(rows, many=True).data)

    def post(self, request, pk):
        project = project_for(request.user, pk, RESEARCHER)
        form = self.form_class(data=request.data)
        form.is_valid(raise_exception=True)
        try:
            run = self.start(project, form.validated_data, request.user)
        except runs.JobConflict as conflict:
            return Response({"detail": str(conflict), "run": self.serializer_class(conflict.existing).data},
                            status=status.HTTP_409_CONFLICT)
        sent = queued_or_failed(lambda: self.queue(run), lambda reason: self.mark_failed(run.pk, reason))
        self.model.objects.filter(pk=run.pk, task_id="").update(task_id=sent.id)
        run = self.model.objects.get(pk=run.pk)
        return Response(self.serializer_class(run).data, status=status.HTTP_202_ACCEPTED)
