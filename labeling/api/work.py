"""The annotator's labelling API: take the next task, save drafts, submit, look back.

Thin views over ``labeling.work.queue`` and ``labeling.work.submission``, the same functions the browser
workspace uses, so an external labelling tool follows exactly the same rules. Every view
needs the annotator role and works only on the caller's own assignments: another person's
assignment is a 404, as if it did not exist. What a payload may hold is decided in
``labelling_serializers`` (never anything that tells a gold item from ordinary work).

The loop's reads (the token and its user, the project, the annotator, the caller's
assignment with what its payload shows) are written statements read through
``labeling.work.rows``: on every task, building them with the ORM cost more CPU than the rest of
the request.
"""
import functools

from django.contrib.auth import get_user_model
from django.db import transaction
from django.db.models import Count, Q
from django.http import Http404
from django.utils import timezone
from django.utils.translation import gettext_lazy as _
from drf_spectacular.drainage import set_override
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import generics, status
from rest_framework.authentication import TokenAuthentication
from rest_framework.exceptions import AuthenticationFailed
from rest_framework.negotiation import DefaultContentNegotiation
from rest_framework.parsers import JSONParser
from rest_framework.renderers import JSONRenderer
from rest_framework.response import Response
from rest_framework.settings import api_settings
from rest_framework.views import APIView

from labeling.access import roles
from labeling.access.permissions import IsAnnotator
from labeling.models import Annotator, Assignment, Problem, Project, Rating, Solution
from labeling.work import queue, rows
from labeling.work.submission import LabellingError, save_draft, submit

from .content import project_filter
from .work_serializers import (
    AssignmentSerializer,
    DraftSerializer,
    MyCountsSerializer,
    MyPassSerializer,
    RefusalSerializer,
    SubmitSerializer,
    assignment_payload,
    domain_ratings,
    first_error,
    plain_submit,
)

LEASE_LOST = (
    "Your lease on this assignment expired and the solution went to another annotator; "
    "your ratings are kept, but this assignment can no longer change. Take the next task."
)

_REFUSED = {
    400: OpenApiResponse(RefusalSerializer, description="Input that breaks a labelling rule."),
    404: OpenApiResponse(description="No such assignment of yours."),
    409: OpenApiResponse(RefusalSerializer, description="The lease expired and someone else holds the solution."),
}

class Rider:
    """A view's first read, joined onto the token check so that it costs no round trip.

    ``joins``: SQL joined after the caller's user row ``u``; its ``%s`` placeholders take the
    URL's keyword arguments named in ``kwargs``, in order. ``parts``: ``(part, alias)`` with
    ``part`` as ``rows.fetch`` takes it; ``extra``: SQL of raw values after them. Under token
    authentication the row comes with the token check (``LoopTokenAuthentication``); under
    any other the same joins are read from the user row (``read``). Either way the view gets
    it from ``rider_row``.
    """

    def __init__(self, joins, parts, extra=(), kwargs=("pk",)):
        self.joins, self.kwargs, self.extra = joins, kwargs, list(extra)
        self.parts = [part for part, alias in parts]
        self.columns = ", ".join(_columns(part, alias) for part, alias in parts)

    def params(self, request):
        kwargs = (getattr(request, "parser_context", None) or {}).get("kwargs", {})
        return [kwargs.get(name) for name in self.kwargs]

    def fetch(self, sql, params, *leading, held=0):
        """``rows.fetch_one`` of a statement selecting ``leading`` parts, ``held`` raw values, then the rider's."""
        return rows.fetch_one(sql, params, *leading, *self.parts, extra=held + len(self.extra))

    def select(self, held_sql=""):
        """The select list: the rider's parts, ``held_sql`` (raw values of the statement's own), its extras."""
        return ", ".join(filter(None, [self.columns, held_sql, *self.extra]))

    def read(self, request):
        """The rider's row read on its own, from the caller's user row."""
        User = get_user_model()
        sql = f"SELECT {self.select()} FROM {User._meta.db_table} u {self.joins} WHERE u.{User._meta.pk.column} = %s"
        return self.fetch(sql, [*self.params(request), request.user.pk])


def _columns(part, alias):
    model, fields = part if isinstance(part, tuple) else (part, None)
    return rows.columns(model, alias, fields)


class LoopTokenAuthentication(TokenAuthentication):
    """DRF's token authentication with the token, its user and their roles in one written statement.

    The same answers as ``TokenAuthentication`` (the same refusals, ``request.auth`` the
    token); the user comes with the fields the role check reads (the others load when asked
    for) and their roles, so ``IsAnnotator`` asks the database nothing. A view's ``rider``
    (see ``Rider``) is read by the same statement.
    """

    user_fields = ("id", "username", "is_active", "is_staff", "is_superuser")
    request = rider = None

    def authenticate(self, request):
        self.request = request
        self.rider = getattr((getattr(request, "parser_context", None) or {}).get("view"), "rider", None)
        return super().authenticate(request)

    def authenticate_credentials(self, key):
        Token, User = self.get_model(), get_user_model()
        leading = [(Token, ["key", "user"]), (User, self.user_fields)]
        held = 1  # the role mask
        if self.rider is None:
            found = rows.fetch_one(self.statement(), [key], *leading, extra=held)
        else:
            found = self.rider.fetch(self.statement(self.rider), [*self.rider.params(self.request), key], *leading,
                                     held=held)
        if found is None:
            raise AuthenticationFailed(_("Invalid token."))
        token, user = found[:2]
        if not user.is_active:
            raise AuthenticationFailed(_("User inactive or deleted."))
        token.user = user
        if self.rider is None:
            roles.remember_roles(user, found[2])
        else:
            riding = len(self.rider.parts)
            roles.remember_roles(user, found[2 + riding])
            self.request._rider_row = (*found[2:2 + riding], *found[2 + riding + held:])
        return user, token

    @classmethod
    @functools.cache
    def statement(cls, rider=None):
        """The token check's SQL (with a view's rider), built once: it runs on every request of the loop."""
        Token, User = cls().get_model(), get_user_model()
        held = roles.role_mask_sql("u." + User._meta.pk.column)
        return (
            f"SELECT {rows.columns(Token, 't', ['key', 'user'])}, {rows.columns(User, 'u', cls.user_fields)},"
            f" {rider.select(held) if rider else held}"
            f" FROM {Token._meta.db_table} t JOIN {User._meta.db_table} u"
            f" ON u.{User._meta.pk.column} = t.{Token._meta.get_field('user').column}"
            f" {rider.joins if rider else ''} WHERE t.key = %s"
        )


def rider_row(request, rider):
    """The row of the view's ``rider``: from the token check, else read now (session authentication)."""
    found = getattr(request, "_rider_row", None)
    return found if found is not None else rider.read(request)


# The API schema documents it as the token scheme it is (drf-spectacular would otherwise
# warn about two classes behind one "tokenAuth").
set_override(LoopTokenAuthentication, "suppress_collision_warning", True)

class JSONAnswers(DefaultContentNegotiation):
    """The loop's views answer JSON whatever ``Accept`` says (their only renderer).

    DRF's negotiation parses the header against every renderer on each request, a few per
    cent of a loop request's Python time; the body's parser is still chosen by DRF.
    """

    def select_renderer(self, request, renderers, format_suffix=None):
        return renderers[0], renderers[0].media_type


LOOP_RENDERERS = [JSONRenderer]

# The project's authentication classes, the token one replaced by the above.
LOOP_AUTHENTICATION = [
    LoopTokenAuthentication if cls is TokenAuthentication else cls for cls in api_settings.DEFAULT_AUTHENTICATION_CLASSES
]

def annotator_of(user):
    """The caller's Annotator row, or None (staff pass the role check without one)."""
    return Annotator.objects.filter(user=user).first() if user.is_authenticated else None


# The caller's assignment with its project, solution and problem (all NULL when it is not theirs).
OWN_RIDER = Rider(
    """LEFT JOIN labeling_annotator n ON n.user_id = u.id
        LEFT JOIN labeling_assignment a ON a.id = %s AND a.annotator_id = n.id
        LEFT JOIN labeling_project p ON p.id = a.project_id LEFT JOIN labeling_solution s ON s.id = a.solution_id
        LEFT JOIN labeling_problem pr ON pr.id = s.problem_id""",
    [(Assignment, "a"), (Project, "p"), (Solution, "s"), (Problem, "pr")],
)


def own_assignment(request):
    """The caller's assignment named by the URL's ``pk``, or 404: another person's work does not exist for them."""
    if not request.user.is_authenticated:
        raise Http404("No such assignment.")
    # One statement: the owner is matched through their Annotator row's user.
    found = rider_row(request, OWN_RIDER)
    if found is None or found[0].pk is None:
        raise Http404("No such assignment.")
    assignment, project, solution, problem = found
    solution.problem, assignment.project, assignment.solution = problem, project, solution
    return assignment


def render(assignment, code=status.HTTP_200_OK):
    """The assignment's payload (``AssignmentSerializer``'s shape, built directly)."""
    return Response(assignment_payload(assignment), status=code)


def refusal(message, field=None, code=status.HTTP_400_BAD_REQUEST):
    return Response({"detail": message, "field": field}, status=code)


def refused_by_rules(assignment, error):
    """400 with the rule's message, or 409 when the real cause is a lost lease."""
    with transaction.atomic():
        # The domain's check runs in a transaction the error rolled back; ask again. Taking
        # the slot back when it is free is what the next save would do anyway.
        solution = queue.lock_solution(assignment)
        lost = assignment.state != Assignment.SUBMITTED and not queue.ensure_active(assignment, solution)
    if lost:
        return refusal(LEASE_LOST, code=status.HTTP_409_CONFLICT)
    return refusal(error.message, error.field)


def checked(serializer_class, request):
    """``(validated data, None)`` or ``(None, 400 response)`` naming the first bad field."""
    form = serializer_class(data=request.data)
    if form.is_valid():
        return form.validated_data, None
    message, field = first_error(form.errors) or ("Invalid request.", None)
    return None, refusal(message, field)


class NextView(APIView):
    """Hand the caller their next assignment in the project."""

    authentication_classes = LOOP_AUTHENTICATION
    renderer_classes = LOOP_RENDERERS
    content_negotiation_class = JSONAnswers
    permission_classes = [IsAnnotator]
    rider = Rider(
        "LEFT JOIN labeling_project p ON p.id = %s LEFT JOIN labeling_annotator a ON a.user_id = u.id",
        [(Project, "p"), (Annotator, "a")], extra=["a.id"],
    )

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
        # The project, and the caller's Annotator row when they have one (its id repeated: NULL without).
        found = rider_row(request, self.rider)
        if found is None or found[0].pk is None:
            raise Http404("No such project.")
        project, annotator, has_annotator = found
        if has_annotator is None:  # the role came without the row (granted by hand): make it
            annotator = Annotator.objects.get_or_create(user=request.user)[0]
        now = timezone.now()
        assignment = queue.next_assignment(annotator, project, now=now)
        if assignment is None:
            return Response(status=status.HTTP_204_NO_CONTENT)
        fresh = assignment.handed_out_at == now  # a resumed one keeps its first hand-out time
        # The queue's own instance is the caller's and current (project and solution set on
        # it); only the problem is read for the payload.
        return render(assignment, status.HTTP_201_CREATED if fresh else status.HTTP_200_OK)


class AssignmentView(APIView):
    """One of the caller's assignments: problem, steps, rules and their own ratings."""

    authentication_classes = LOOP_AUTHENTICATION
    renderer_classes = LOOP_RENDERERS
    content_negotiation_class = JSONAnswers
    permission_classes = [IsAnnotator]
    rider = OWN_RIDER

    @extend_schema(responses={200: AssignmentSerializer, 404: _REFUSED[404]})
    def get(self, request, pk):
        return render(own_assignment(request))


class DraftView(APIView):
    """Save ratings into the draft (merged with what is stored) and renew the lease.

    PUT and PATCH do the same: items name their step, so a save never drops other ratings.
    """

    authentication_classes = LOOP_AUTHENTICATION
    renderer_classes = LOOP_RENDERERS
    content_negotiation_class = JSONAnswers
    permission_classes = [IsAnnotator]
    rider = OWN_RIDER
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
        assignment = own_assignment(request)
        data, bad = checked(DraftSerializer, request)
        if bad is not None:
            return bad
        try:
            save_draft(assignment, domain_ratings(data))
        except LabellingError as error:
            return refused_by_rules(assignment, error)
        return render(assignment)


class SubmitView(APIView):
    """Finish the assignment. A retry with the same ``submit_key`` answers 200 with the same body."""

    authentication_classes = LOOP_AUTHENTICATION
    renderer_classes = LOOP_RENDERERS
    content_negotiation_class = JSONAnswers
    permission_classes = [IsAnnotator]
    rider = OWN_RIDER
    parser_classes = [JSONParser]

    @extend_schema(operation_id="assignments_submit_create", request=SubmitSerializer,
                   responses={200: AssignmentSerializer, **_REFUSED})
    def post(self, request, pk):
        assignment = own_assignment(request)
        data = plain_submit(request.data)
        if data is None:
            data, bad = checked(SubmitSerializer, request)
            if bad is not None:
                return bad
        try:
            submit(
                assignment,
                finish_reason=data["finish_reason"],
                note=data["note"],
                ratings=domain_ratings(data),
                submit_key=data.get("submit_key"),
                client_elapsed_ms=data.get("client_elapsed_ms"),
            )
        except LabellingError as error:
            return refused_by_rules(assignment, error)
        return render(assignment)


@extend_schema(parameters=[OpenApiParameter("project", int, description="Only this project's passes.")])
class HistoryView(generics.ListAPIView):
    """The caller's submitted passes, newest first."""

    permission_classes = [IsAnnotator]
    serializer_class = MyPassSerializer

    def get_queryset(self):
        rows = Assignment.objects.filter(state=Assignment.SUBMITTED).select_related("project")
        if getattr(self, "swagger_fake_view", False):
            return rows.none()
        annotator = annotator_of(self.request.user)
        if annotator is None:
            return rows.none()
        rows = rows.filter(annotator=annotator)
        project = project_filter(self.request)
        if project is not None:
            rows = rows.filter(project_id=project)
        rated = Count("ratings", filter=Q(ratings__value__isnull=False))
        return rows.annotate(steps_rated=rated).order_by("-submitted_at", "-pk")


class CountsView(APIView):
    """Per project where the caller has work: submitted today and in all, steps rated, in progress."""

    permission_classes = [IsAnnotator]

    @extend_schema(responses=MyCountsSerializer(many=True))
    def get(self, request):
        annotator = annotator_of(request.user)
        if annotator is None:
            return Response([])
        midnight = timezone.localtime().replace(hour=0, minute=0, second=0, microsecond=0)
        submitted = Q(state=Assignment.SUBMITTED)
        rows = (
            Assignment.objects.filter(annotator=annotator)
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
                                  value__isnull=False)
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
