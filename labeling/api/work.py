"""The annotator's labelling API: take the next task, save drafts, submit, look back.

Thin views over ``labeling.work.queue`` and ``labeling.work.submission``, the same functions the browser
workspace uses, so an external labelling tool follows exactly the same rules. Every view
needs the annotator role and works only on the caller's own assignments: another person's
assignment is a 404, as if it did not exist. What a payload may hold is decided in
``work_serializers`` (never anything that tells a gold item from ordinary work). A rule's
refusal is raised, and answered by ``labeling.api.errors``.
"""
from django.db.models import Count, Q
from django.http import Http404
from django.utils import timezone
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import generics, status
from rest_framework.parsers import JSONParser
from rest_framework.renderers import JSONRenderer
from rest_framework.response import Response
from rest_framework.views import APIView

from labeling.access.permissions import IsAnnotator
from labeling.access.projects import NOT_FOUND, projects_of
from labeling.access.roles import ANNOTATOR, roles_in
from labeling.errors import DomainError
from labeling.models import Annotator, Assignment, Project, Rating
from labeling.models.prepared import first, prepared
from labeling.work import queue
from labeling.work.history import submitted_passes
from labeling.work.submission import UNDO_SECONDS, check_size, save_draft, submit, unsubmit

from .content import project_filter
from .work_serializers import (
    AssignmentSerializer,
    DraftSerializer,
    MyCountsSerializer,
    MyPassSerializer,
    SubmitSerializer,
    domain_ratings,
    first_error,
    present,
    raw_ratings,
)

# Their bodies are the common refusal's, {detail, field} (labeling/api/autoschema.py).
_REFUSED = {
    400: OpenApiResponse(description="Input that breaks a labelling rule."),
    404: OpenApiResponse(description="No such assignment of yours."),
    409: OpenApiResponse(description="The lease expired and someone else holds the solution, or the project "
                                     "was deactivated; or (field revision) the ratings changed since the revision "
                                     "the request is based on."),
}


class LoopView(APIView):
    """The loop's endpoints: annotators only, JSON answers."""

    renderer_classes = [JSONRenderer]
    permission_classes = [IsAnnotator]


def annotator_of(user):
    """The caller's Annotator row, or None (staff pass the role check without one)."""
    if not user.is_authenticated:
        return None
    try:
        return user.annotator  # the token check reads it with the user (labeling/access/tokens.py)
    except Annotator.DoesNotExist:
        return None


def render(assignment, code=status.HTTP_200_OK):
    return Response(present(assignment), status=code)


def checked(serializer_class, request):
    """The request's validated data, or a refusal naming the first bad field."""
    form = serializer_class(data=request.data)
    if form.is_valid():
        return form.validated_data
    message, field = first_error(form.errors) or ("Invalid request.", None)
    raise DomainError(message, field)


def own_assignment(request, pk):
    """The caller's assignment ``pk`` in a project they annotate, with its project, solution and
    problem, or 404: another person's work does not exist for them. A deactivated project's
    work still reads (its saves are refused with the reason: ``submission.PROJECT_CLOSED``)."""
    annotator = annotator_of(request.user)
    found = None if annotator is None else first(_own_assignment(pk, annotator.pk))
    if found is None or ANNOTATOR not in roles_in(request.user, found.project_id):
        raise Http404("No such assignment.")
    return found


@prepared
def _own_assignment(pk, annotator_id):
    return (Assignment.objects.select_related("project", "solution__problem")
            .filter(pk=pk, annotator_id=annotator_id).order_by()[:1])


@prepared
def _project(pk):
    return Project.objects.filter(pk=pk).order_by()[:1]


class NextView(LoopView):
    """Hand the caller their next assignment in the project."""

    @extend_schema(
        operation_id="projects_next_create",
        request=None,
        responses={
            200: OpenApiResponse(AssignmentSerializer, description="Your unfinished assignment, lease renewed."),
            201: OpenApiResponse(AssignmentSerializer, description="A newly handed-out assignment."),
            204: OpenApiResponse(description="No work for you now (none left, project or account paused)."),
            404: OpenApiResponse(description="No such project."),
        },
    )
    def post(self, request, pk):
        # A deactivated project answers "no work" (204) to its annotators, not 404.
        project = first(_project(pk))
        if project is None or ANNOTATOR not in roles_in(request.user, pk):
            raise Http404(NOT_FOUND)
        annotator = annotator_of(request.user)
        if annotator is None:  # the role came without the row (granted by hand): make it
            annotator = Annotator.objects.get_or_create(user=request.user)[0]
        now = timezone.now()
        assignment = queue.next_assignment(annotator, project, now=now)
        if assignment is None:
            return Response(status=status.HTTP_204_NO_CONTENT)
        fresh = assignment.handed_out_at == now  # a resumed one keeps its first hand-out time
        return render(assignment, status.HTTP_201_CREATED if fresh else status.HTTP_200_OK)


class AssignmentView(LoopView):
    """One of the caller's assignments: problem, steps, rules and their own ratings."""

    @extend_schema(responses={200: AssignmentSerializer, 404: _REFUSED[404]})
    def get(self, request, pk):
        return render(own_assignment(request, pk))


class DraftView(LoopView):
    """Save ratings into the draft (merged with what is stored) and renew the lease.

    PUT and PATCH do the same: items name their step, so a save never drops other ratings.
    """

    parser_classes = [JSONParser]

    @extend_schema(operation_id="assignments_draft_update", request=DraftSerializer,
                   responses={200: AssignmentSerializer, **_REFUSED})
    def put(self, request, pk):
        return self.save(request, pk)

    @extend_schema(operation_id="assignments_draft_partial_update", request=DraftSerializer,
                   responses={200: AssignmentSerializer, **_REFUSED})
    def patch(self, request, pk):
        return self.save(request, pk)

    def save(self, request, pk):
        assignment = own_assignment(request, pk)
        check_size(assignment, raw_ratings(request.data))  # before a single item is checked
        data = checked(DraftSerializer, request)
        save_draft(assignment, domain_ratings(data), revision=data.get("revision"))
        return render(assignment)


class SubmitView(LoopView):
    """Finish the assignment. A retry with the same ``submit_key`` answers 200 with the same body."""

    parser_classes = [JSONParser]

    @extend_schema(operation_id="assignments_submit_create", request=SubmitSerializer,
                   responses={200: AssignmentSerializer, **_REFUSED})
    def post(self, request, pk):
        assignment = own_assignment(request, pk)
        check_size(assignment, raw_ratings(request.data))  # before a single item is checked
        data = checked(SubmitSerializer, request)
        submit(
            assignment,
            finish_reason=data["finish_reason"],
            note=data["note"],
            ratings=domain_ratings(data),
            submit_key=data.get("submit_key"),
            client_elapsed_ms=data.get("client_elapsed_ms"),
            revision=data.get("revision"),
        )
        return render(assignment)


class UnsubmitView(LoopView):
    """Undo a submit: reopen the caller's own pass, ratings as sent, within seconds of its submit.

    The rule (the window, "nothing has used it yet") is ``submission.unsubmit``'s. Idempotent: an
    assignment already open answers 200 as it is.
    """

    @extend_schema(
        operation_id="assignments_unsubmit_create",
        request=None,
        responses={
            200: OpenApiResponse(AssignmentSerializer, description="The pass, open again with a fresh lease."),
            404: _REFUSED[404],
            409: OpenApiResponse(description=f"More than {UNDO_SECONDS} s since the submit, the pass was "
                                             "already used (scored, counted in a review), it is not "
                                             "submitted, or the project was deactivated."),
        },
    )
    def post(self, request, pk):
        assignment = own_assignment(request, pk)
        unsubmit(assignment)
        return render(assignment)


@extend_schema(parameters=[OpenApiParameter("project", int, description="Only this project's passes.")])
class HistoryView(LoopView, generics.ListAPIView):
    """The caller's submitted passes, newest first, with the ratings as sent (labeling/work/history.py)."""

    serializer_class = MyPassSerializer

    def get_queryset(self):
        annotator = annotator_of(self.request.user)
        if getattr(self, "swagger_fake_view", False) or annotator is None:
            return Assignment.objects.none()
        return submitted_passes(annotator, projects_of(self.request.user, ANNOTATOR), project_filter(self.request))


class CountsView(LoopView):
    """Per project where the caller has work: submitted today and in all, steps rated, in progress."""

    @extend_schema(responses=MyCountsSerializer(many=True))
    def get(self, request):
        annotator = annotator_of(request.user)
        if annotator is None:
            return Response([])
        midnight = timezone.localtime().replace(hour=0, minute=0, second=0, microsecond=0)
        submitted = Q(state=Assignment.SUBMITTED)
        rows = (
            Assignment.objects.filter(annotator=annotator, project__in=projects_of(request.user, ANNOTATOR))
            .values("project", "project__name")
            .annotate(
                submitted_today=Count("pk", filter=submitted & Q(submitted_at__gte=midnight)),
                submitted_total=Count("pk", filter=submitted),
                in_progress=Count("pk", filter=Q(state=Assignment.ACTIVE)),
            )
            .order_by("project__name")
        )
        # Counted apart: joining ratings above would multiply the assignment counts.
        rated = dict(
            Rating.objects.filter(assignment__annotator=annotator, assignment__state=Assignment.SUBMITTED,
                                  assignment__project__in=projects_of(request.user, ANNOTATOR), value__isnull=False)
            .order_by()
            .values("assignment__project")
            .annotate(n=Count("pk"))
            .values_list("assignment__project", "n")
        )
        data = [
            {"project": r["project"], "project_name": r["project__name"], "submitted_today": r["submitted_today"],
             "submitted_total": r["submitted_total"], "steps_rated": rated.get(r["project"], 0),
             "in_progress": r["in_progress"]}
            for r in rows
        ]
        return Response(MyCountsSerializer(data, many=True).data)
