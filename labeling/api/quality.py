"""Quality control over the API: gold items, proposals, consensus, annotators' standing.

Thin views over ``labeling.quality.gold``, ``labeling.quality.screening``, ``labeling.quality.consensus``
(with the adjudication queue) and ``labeling.quality.feedback``. Every endpoint but ``my-status``
and ``my-missed`` is for the project's leads (``IsLead``, then ``labeling.access.projects``); ``my-status`` tells an annotator
their own standing and never carries a score, a threshold, a reason or a gold value;
``my-missed`` shows gold values only of their own passes that were submitted, scored and missed. The leads' table of annotators with their standing and gold score is the
dashboard's (labeling/api/dashboard.py). A rule's refusal (``GoldError``, ``ConsensusError``) is
raised, and answered by ``labeling.api.errors``.
"""
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import serializers, status
from rest_framework.response import Response
from rest_framework.views import APIView

from labeling.access.permissions import IsAnnotator, IsLead
from labeling.access.projects import annotator_in, object_for, project_for
from labeling.access.roles import ANNOTATOR, LEAD
from labeling.errors import DomainError
from labeling.models import (
    AnnotatorProjectStatus,
    Assignment,
    GoldProposal,
    GoldRating,
    LabelSource,
    Project,
    Solution,
)
from labeling.quality import consensus, feedback, gold, proposals, screening

from .paging import MAX_NUMBER, BoundedPaging, page, whole_number
from .settings_forms import LeadSettingsView, documented
from .work import annotator_of


def lead_solution(request, pk):
    """The solution ``pk`` of a project the caller leads (404/403 otherwise: labeling/access/projects.py)."""
    return object_for(request.user, Solution.objects.select_related("project"), pk, LEAD)

# Serializers ----------------------------------------------------------------------------


class GoldItemSerializer(serializers.Serializer):
    position = serializers.IntegerField(min_value=0)
    alternative = serializers.IntegerField(min_value=0, default=0)
    value = serializers.ChoiceField(choices=[-1, 0, 1])


class RulingItemSerializer(GoldItemSerializer):
    value = serializers.ChoiceField(choices=[-1, 0, 1], allow_null=True, help_text="null removes the ruling.")


class GoldSerializer(serializers.Serializer):
    solution = serializers.IntegerField()
    is_gold = serializers.BooleanField()
    is_screening = serializers.BooleanField()
    ratings = GoldItemSerializer(many=True)
    approved_by = serializers.CharField(allow_null=True)
    approved_at = serializers.DateTimeField(allow_null=True)


class GoldRequestSerializer(serializers.Serializer):
    ratings = GoldItemSerializer(many=True)
    is_screening = serializers.BooleanField(required=False, help_text="Also make it a screening item (or not).")
    reason = serializers.CharField(required=False, allow_blank=True, default="", max_length=2000,
                                   help_text="Why, for the audit log.")


class FromAssignmentSerializer(serializers.Serializer):
    assignment = serializers.IntegerField(help_text="A submitted assignment of this solution.")
    is_screening = serializers.BooleanField(required=False)


class ProposalSerializer(serializers.ModelSerializer):
    ratings = serializers.SerializerMethodField()
    decided_by = serializers.CharField(source="decided_by.username", allow_null=True, default=None)

    class Meta:
        model = GoldProposal
        fields = ["id", "solution", "ratings", "votes", "state", "created_at", "decided_by", "decided_at"]

    def get_ratings(self, proposal) -> list[dict]:
        return [{"position": p, "alternative": a, "value": v} for p, a, v in proposal.ratings]


class EvidenceStepSerializer(serializers.Serializer):
    position = serializers.IntegerField()
    alternative = serializers.IntegerField()
    text = serializers.CharField()
    value = serializers.IntegerField(help_text="The proposed gold value.")
    votes = serializers.DictField(child=serializers.IntegerField(),
                                  help_text="{value: trusted passes that gave it}, counted now")


class ProposalWithEvidenceSerializer(ProposalSerializer):
    # A plain string: a second enum of these choices collides with MyStatus's in the schema's names.
    state = serializers.CharField(help_text="pending, approved or rejected")
    problem = serializers.CharField()
    steps = EvidenceStepSerializer(many=True, help_text="Each proposed value beside the votes it rests on.")

    class Meta(ProposalSerializer.Meta):
        fields = [*ProposalSerializer.Meta.fields, "problem", "steps"]


class DisagreementStepSerializer(serializers.Serializer):
    position = serializers.IntegerField()
    alternative = serializers.IntegerField()
    text = serializers.CharField()
    votes = serializers.DictField(child=serializers.IntegerField(), help_text="{value: passes that gave it}")
    voters = serializers.DictField(child=serializers.ListField(child=serializers.CharField()),
                                   help_text="{value: names of the annotators who gave it, sorted}")
    value = serializers.IntegerField(help_text="The consensus: the ruling, else the majority (ties to the lower).")
    ruling = serializers.IntegerField(allow_null=True, help_text="A lead's ruling, or null.")
    note = serializers.CharField(allow_blank=True, help_text="The ruling's note.")
    disagree = serializers.BooleanField(help_text="The passes gave this step two values or more.")


class DisagreementSerializer(serializers.Serializer):
    solution = serializers.IntegerField()
    problem = serializers.CharField()
    passes = serializers.IntegerField(help_text="Submitted passes that vote on it.")
    steps = DisagreementStepSerializer(many=True)


class ChoiceSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    name = serializers.CharField()


class DisagreementPageSerializer(serializers.Serializer):
    count = serializers.IntegerField()
    results = DisagreementSerializer(many=True)
    annotators = ChoiceSerializer(
        many=True, help_text="Who voted on any disagreement of the project (the `annotator` filter's choices).")
    generations = serializers.ListField(
        child=serializers.IntegerField(),
        help_text="Generation numbers of the disagreements (the `generation` filter's choices).")


class MissedStepSerializer(serializers.Serializer):
    position = serializers.IntegerField()
    alternative = serializers.IntegerField()
    text = serializers.CharField()
    yours = serializers.IntegerField(help_text="Your rating.")
    expected = serializers.IntegerField(help_text="The reference rating a lead approved.")


class MissedPassSerializer(serializers.Serializer):
    assignment = serializers.IntegerField()
    problem = serializers.CharField()
    submitted_at = serializers.DateTimeField()
    rated_none = serializers.BooleanField(help_text="You rated none of the steps it was checked on.")
    steps = MissedStepSerializer(many=True, help_text="The steps you rated otherwise than the reference.")


class GoldFigureSerializer(serializers.Serializer):
    checked = serializers.IntegerField(help_text="Your scored gold passes submitted before `through`.")
    matched = serializers.IntegerField(help_text="Of those, the passes that matched the gold on every step.")
    mean_exact_share = serializers.FloatField(allow_null=True, help_text="The mean share of steps that matched.")
    through = serializers.DateTimeField(help_text="The cut-off: an hour before the last midnight, server time.")


class MissedPassListSerializer(serializers.Serializer):
    results = MissedPassSerializer(many=True, help_text="Screening passes that missed, newest first.")
    checks = GoldFigureSerializer(help_text="Gold passes, as one daily figure: never item by item.")


class ConsensusItemSerializer(serializers.Serializer):
    position = serializers.IntegerField()
    alternative = serializers.IntegerField()
    value = serializers.IntegerField()
    votes = serializers.DictField(child=serializers.IntegerField(), help_text="{value: passes that gave it}")
    adjudicated = serializers.BooleanField()


class AdjudicationRequestSerializer(serializers.Serializer):
    ratings = RulingItemSerializer(many=True)
    note = serializers.CharField(required=False, allow_blank=True, default="")


class StandingSerializer(serializers.Serializer):
    annotator = serializers.IntegerField()
    uuid = serializers.UUIDField()
    username = serializers.CharField(allow_null=True)
    state = serializers.CharField()
    reason = serializers.CharField()
    decided_by = serializers.CharField(allow_null=True)
    decided_at = serializers.DateTimeField(allow_null=True)
    rolling_gold_score = serializers.FloatField(allow_null=True)
    gold_passes = serializers.IntegerField(help_text="Gold passes the rolling score is over.")
    screening_score = serializers.FloatField(allow_null=True)


class StandingRequestSerializer(serializers.Serializer):
    reason = serializers.CharField(required=False, allow_blank=True, default="", max_length=2000,
                                   help_text="Why: required to pause (the annotator is shown it), optional to resume.")


class MyStatusSerializer(serializers.Serializer):
    project = serializers.IntegerField()
    state = serializers.ChoiceField(choices=[c for c, _ in AnnotatorProjectStatus.STATE_CHOICES])
    done = serializers.IntegerField(help_text="Screening items done.")
    total = serializers.IntegerField(help_text="Screening items to do.")
    message = serializers.CharField()
    reason = serializers.CharField(allow_blank=True,
                                   help_text="The lead's reason when a lead paused you by hand, else empty.")
    results = serializers.CharField(allow_blank=True,
                                    help_text="Changes when your checked results page has something new (compare "
                                              "it with the value you last saw; its parts mean nothing more).")


class QualitySettingsSerializer(serializers.ModelSerializer):
    screening_items = serializers.SerializerMethodField(help_text="Screening items with gold ratings (read only).")

    class Meta:
        model = Project
        fields = ["quality_control_rate", "requires_screening", "screening_size", "screening_threshold",
                  "gold_threshold", "gold_window", "gold_min_passes", "screening_items"]
        extra_kwargs = {
            "quality_control_rate": {"min_value": 0, "max_value": 1},
            "screening_threshold": {"min_value": 0, "max_value": 1},
            "gold_threshold": {"min_value": 0, "max_value": 1},
            "gold_window": {"min_value": 1},
        }

    def get_screening_items(self, project) -> int:
        return screening.screening_items(project).count()  # at most screening_size of them


class PrelabelSettingsSerializer(serializers.ModelSerializer):
    """What annotators see of machine pre-labels (labeling/work/prelabels.py), and the traps' rate."""

    prelabel_source = serializers.PrimaryKeyRelatedField(
        queryset=LabelSource.objects.none(), allow_null=True, required=False,
        help_text="The label source whose labels are shown (GET /api/projects/{id}/label-sources/); null: none.")

    class Meta:
        model = Project
        fields = ["prelabel_mode", "prelabel_source", "trap_rate"]
        extra_kwargs = {"trap_rate": {"min_value": 0, "max_value": 1}}

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        project = self.instance
        # Only this project's sources: another project's id reads as one that does not exist.
        self.fields["prelabel_source"].queryset = LabelSource.objects.filter(project=project)


def slots(items):
    return {(item["position"], item["alternative"]): item["value"] for item in items}


# Gold items -----------------------------------------------------------------------------


def gold_body(solution):
    rows = list(
        GoldRating.objects.filter(step__solution=solution)
        .select_related("step", "approved_by")
        .order_by("step__position", "step__alternative")
    )
    latest = max(rows, key=lambda r: r.approved_at, default=None)
    return GoldSerializer({
        "solution": solution.pk,
        "is_gold": solution.is_gold,
        "is_screening": solution.is_screening,
        "ratings": [{"position": r.step.position, "alternative": r.step.alternative, "value": r.value} for r in rows],
        "approved_by": latest.approved_by.get_username() if latest and latest.approved_by else None,
        "approved_at": latest.approved_at if latest else None,
    }).data


class SolutionGoldView(APIView):
    """A solution's gold ratings: read, set (replacing them all), or remove (ordinary work again)."""

    permission_classes = [IsLead]

    @extend_schema(operation_id="solutions_gold_retrieve", responses=GoldSerializer)
    def get(self, request, pk):
        return Response(gold_body(lead_solution(request, pk)))

    @extend_schema(operation_id="solutions_gold_update", request=GoldRequestSerializer,
                   responses={200: GoldSerializer, 400: OpenApiResponse(description="{detail, field}")})
    def put(self, request, pk):
        solution = lead_solution(request, pk)
        form = GoldRequestSerializer(data=request.data)
        form.is_valid(raise_exception=True)
        gold.set_gold(solution, slots(form.validated_data["ratings"]), request.user,
                      screening=form.validated_data.get("is_screening"), reason=form.validated_data["reason"])
        solution.refresh_from_db()
        return Response(gold_body(solution))

    @extend_schema(operation_id="solutions_gold_destroy", responses={204: None})
    def delete(self, request, pk):
        gold.unset_gold(lead_solution(request, pk), request.user)
        return Response(status=status.HTTP_204_NO_CONTENT)


class GoldFromAssignmentView(APIView):
    """Make a submitted pass's ratings the solution's gold."""

    permission_classes = [IsLead]

    @extend_schema(operation_id="solutions_gold_from_assignment_create", request=FromAssignmentSerializer,
                   responses={200: GoldSerializer, 400: OpenApiResponse(description="{detail, field}")})
    def post(self, request, pk):
        solution = lead_solution(request, pk)
        form = FromAssignmentSerializer(data=request.data)
        form.is_valid(raise_exception=True)
        assignment = Assignment.objects.filter(pk=form.validated_data["assignment"], solution=solution).first()
        if assignment is None:
            raise DomainError("No such assignment of this solution.", field="assignment")
        gold.gold_from_assignment(assignment, request.user, screening=form.validated_data.get("is_screening"))
        solution.refresh_from_db()
        return Response(gold_body(solution))


class GoldProposeView(APIView):
    """Propose gold from the consensus of the solution's trusted passes (pending a lead)."""

    permission_classes = [IsLead]

    @extend_schema(operation_id="solutions_gold_propose_create", request=None,
                   responses={201: ProposalSerializer, 400: OpenApiResponse(description="{detail, field}")})
    def post(self, request, pk):
        solution = lead_solution(request, pk)
        proposal = proposals.propose_gold_from_consensus(solution, request.user)
        return Response(ProposalSerializer(proposal).data, status=status.HTTP_201_CREATED)


def with_evidence(rows):
    """Proposals with their problem and steps' votes now (one read for the page), serialized."""
    found = proposals.evidence(rows)
    for row in rows:
        row.problem, row.steps = found[row.pk]["problem"], found[row.pk]["steps"]
    return ProposalWithEvidenceSerializer(rows, many=True).data


class ProposalListView(APIView):
    """The project's gold proposals, newest first, a page at a time (``?limit=&offset=``)."""

    permission_classes = [IsLead]
    pagination_class = BoundedPaging

    @extend_schema(
        operation_id="projects_gold_proposals_list",
        parameters=[OpenApiParameter("state", str, enum=["pending", "approved", "rejected"],
                                     description="Only proposals in this state.")],
        responses=ProposalWithEvidenceSerializer(many=True),
    )
    def get(self, request, pk):
        project = project_for(request.user, pk, LEAD)
        rows = GoldProposal.objects.filter(solution__project=project).select_related("decided_by")
        state = request.query_params.get("state")
        if state:
            if state not in dict(GoldProposal.STATE_CHOICES):
                raise DomainError("state must be pending, approved or rejected.", field="state")
            rows = rows.filter(state=state)
        rows = rows.select_related("solution__problem", "solution__project").order_by("-created_at", "-pk")
        return page(self, request, rows, with_evidence)


class ProposalDecisionView(APIView):
    """A lead decides a gold proposal (``decide``) and gets it back."""

    permission_classes = [IsLead]
    decide = None  # proposals.approve_proposal or proposals.reject_proposal: (proposal, lead) -> proposal

    @extend_schema(request=None,
                   responses={200: ProposalSerializer, 400: OpenApiResponse(description="{detail, field}")})
    def post(self, request, pk):
        proposal = object_for(request.user, GoldProposal.objects.select_related("solution__project"), pk, LEAD,
                              project_of=lambda found: found.solution.project)
        proposal = self.decide(proposal, request.user)
        return Response(ProposalSerializer(proposal).data)


class ProposalApproveView(ProposalDecisionView):
    """Approve: the proposal's ratings become the solution's gold."""

    decide = staticmethod(proposals.approve_proposal)


class ProposalRejectView(ProposalDecisionView):
    """Reject: nothing changes but the proposal's state."""

    decide = staticmethod(proposals.reject_proposal)


# Consensus ------------------------------------------------------------------------------


def consensus_body(solution):
    table = consensus.consensus_ratings(solution)
    return ConsensusItemSerializer([
        {"position": p, "alternative": a, "value": c.value, "votes": {str(v): n for v, n in sorted(c.votes.items())},
         "adjudicated": c.adjudicated}
        for (p, a), c in table.items()
    ], many=True).data


class ConsensusView(APIView):
    """A solution's consensus per step (votes, majority, rulings); PUT records a lead's rulings."""

    permission_classes = [IsLead]

    @extend_schema(operation_id="solutions_consensus_retrieve", responses=ConsensusItemSerializer(many=True))
    def get(self, request, pk):
        return Response(consensus_body(lead_solution(request, pk)))

    @extend_schema(operation_id="solutions_consensus_update", request=AdjudicationRequestSerializer,
                   responses={200: ConsensusItemSerializer(many=True),
                              400: OpenApiResponse(description="{detail, field}")})
    def put(self, request, pk):
        solution = lead_solution(request, pk)
        form = AdjudicationRequestSerializer(data=request.data)
        form.is_valid(raise_exception=True)
        consensus.adjudicate(solution, slots(form.validated_data["ratings"]), request.user, form.validated_data["note"])
        return Response(consensus_body(solution))


class DisagreementListView(APIView):
    """The adjudication queue: the project's solutions whose overlapping passes disagree on a step."""

    permission_classes = [IsLead]

    @extend_schema(
        operation_id="projects_disagreements_list",
        parameters=[
            # No enum here: drf-spectacular would name it like the proposals' state enum.
            OpenApiParameter("state", str, default="open",
                             description="`open`: a disagreeing step has no ruling yet; `ruled`: every disagreeing "
                             "step is ruled; `all`: both."),
            OpenApiParameter("annotator", int, description="Only solutions this annotator's submitted pass votes on."),
            OpenApiParameter("generation", int, description="Only solutions of this generation number."),
            OpenApiParameter("position", int, description="Only solutions whose passes disagree at this step "
                             "position (0-based, as the steps' `position`); `state` then goes by that step's ruling."),
            OpenApiParameter("limit", int, default=20), OpenApiParameter("offset", int, default=0),
        ],
        responses={200: DisagreementPageSerializer, 400: OpenApiResponse(description="{detail, field}")},
    )
    def get(self, request, pk):
        project = project_for(request.user, pk, LEAD)
        params = request.query_params
        state = params.get("state") or "open"
        if state not in consensus.STATES:
            raise DomainError(f"state must be one of {', '.join(consensus.STATES)}.", field="state")
        # Absent or empty: no filter (the page's controls send "" for "any").
        annotator = whole_number(params, "annotator", default=None, low=1, high=MAX_NUMBER)
        generation = whole_number(params, "generation", default=None, low=0, high=MAX_NUMBER)
        position = whole_number(params, "position", default=None, low=0, high=MAX_NUMBER)
        limit = whole_number(params, "limit", default=20, low=1, high=200)
        offset = whole_number(params, "offset", default=0, low=0, high=MAX_NUMBER)
        ids = consensus.disagreeing_solution_ids(project.pk, state=state, annotator_id=annotator,
                                                 generation=generation, position=position)
        page = consensus.disagreements(ids[offset:offset + limit])
        return Response(DisagreementPageSerializer(
            {"count": len(ids), "results": page, **consensus.disagreement_choices(project.pk)}).data)


# Annotators' standing -------------------------------------------------------------------


def standing(annotator, project, row=None):
    row = row if row is not None else screening.status_of(annotator, project)
    # The plain rolling score; automatic pausing counts only passes after the latest resume.
    rolling = gold.gold_record(annotator, project)
    return {
        "annotator": annotator.pk,
        "uuid": annotator.uuid,
        "username": annotator.user.get_username() if annotator.user_id else None,
        "state": row.state if row else screening.ACTIVE,
        "reason": row.reason if row else "",
        "decided_by": row.decided_by.get_username() if row and row.decided_by_id else None,
        "decided_at": row.decided_at if row else None,
        "rolling_gold_score": rolling.score,
        "gold_passes": rolling.passes,
        "screening_score": row.screening_score if row else None,
    }


class StandingChangeView(APIView):
    """A lead changes the annotator's standing in the project, giving a reason (``change``)."""

    permission_classes = [IsLead]
    change = None  # screening.pause or screening.resume: (annotator, project, lead, reason) -> row

    @extend_schema(request=StandingRequestSerializer, responses=StandingSerializer)
    def post(self, request, pk, annotator_id):
        project = project_for(request.user, pk, LEAD)
        annotator = annotator_in(project, annotator_id)
        form = StandingRequestSerializer(data=request.data)
        form.is_valid(raise_exception=True)  # a pause without a reason is refused by screening.pause
        row = self.change(annotator, project, request.user, form.validated_data["reason"])
        return Response(StandingSerializer(standing(annotator, project, row)).data)


class PauseView(StandingChangeView):
    """Pause the annotator in this project: no new work until a lead resumes them."""

    change = staticmethod(screening.pause)


class ResumeView(StandingChangeView):
    """Let the annotator work again (after a pause or a failed screening)."""

    change = staticmethod(screening.resume)


@documented("prelabel_settings", PrelabelSettingsSerializer)
class PrelabelSettingsView(LeadSettingsView):
    """``GET/PATCH /api/projects/{id}/prelabel-settings/``: the pre-label policy (leads)."""

    form = PrelabelSettingsSerializer


@documented("quality_settings", QualitySettingsSerializer)
class QualitySettingsView(LeadSettingsView):
    """The project's quality-control settings: gold rate, screening and automatic pausing."""

    form = QualitySettingsSerializer


class MyStatusView(APIView):
    """The caller's standing in the project: screening progress, passed, failed or paused."""

    permission_classes = [IsAnnotator]

    @extend_schema(operation_id="projects_my_status_retrieve", responses=MyStatusSerializer)
    def get(self, request, pk):
        project = project_for(request.user, pk, ANNOTATOR)
        return Response(MyStatusSerializer(screening.my_status(annotator_of(request.user), project)).data)


class MyMissedPassesView(APIView):
    """The caller's checked passes: screening passes that missed (the steps rated otherwise, and
    the gold's value), and gold passes as one daily figure (labeling/quality/feedback.py says why).

    Only submitted and scored passes count; an ordinary pass or one in progress never does.
    """

    permission_classes = [IsAnnotator]

    @extend_schema(operation_id="projects_my_missed_list", responses=MissedPassListSerializer)
    def get(self, request, pk):
        project = project_for(request.user, pk, ANNOTATOR)
        annotator = annotator_of(request.user)
        return Response(MissedPassListSerializer({"results": feedback.missed_passes(annotator, project),
                                                  "checks": feedback.gold_figure(annotator, project)}).data)
