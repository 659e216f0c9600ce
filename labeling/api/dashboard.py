"""The lead dashboard over the API: figures, the annotator table (JSON or CSV), the drill-down,
and the thresholds of the outlier flags.

Lead role only (``IsLead``; staff pass too): the figures and the drill-down show gold
ratings and everyone's work. The figures come from labeling/stats/cache.py, already rendered
as JSON; the views add the live parts (each annotator's standing, and the outlier flags of
labeling/stats/outliers.py under the project's thresholds now) and the cache's freshness.
"""
import csv
import io
import json
import math

from django.conf import settings
from django.http import HttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import serializers
from rest_framework.throttling import UserRateThrottle
from rest_framework.views import APIView

from labeling.access.projects import annotator_in, project_for
from labeling.access.roles import LEAD
from labeling.access.permissions import IsLead
from labeling.stats import cache as stats_cache
from labeling.models import Annotator, Project
from labeling.stats import dashboard, outliers

from .paging import MAX_NUMBER
from .renderers import IgnoreFormatParameter
from .settings_forms import LeadSettingsView, documented

# ``labeler`` is the annotator's uuid, what the exports write as ``labeler``: the column to join them on.
TABLE_COLUMNS = [
    "id", "labeler", "label", "status", "status_reason", "flags", "gold_score", "gold_passes", "wrong_prelabels",
    "wrong_prelabels_accepted", "kappa_majority",
    "kappa_majority_low", "kappa_majority_high", "majority_items", "kappa", "kappa_partners",
    "shared_items", "share_plus", "share_zero", "share_minus", "ratings", "passes", "steps",
    "median_step_seconds", "median_pass_seconds", "active_hours",
]


class DashboardQuerySerializer(serializers.Serializer):
    generation = serializers.IntegerField(min_value=-1, max_value=MAX_NUMBER, required=False)
    since = serializers.DateTimeField(required=False, help_text="Passes submitted at or after (ISO 8601).")
    until = serializers.DateTimeField(required=False, help_text="Passes submitted before (ISO 8601).")
    bucket = serializers.ChoiceField(["day", "week"], required=False, help_text="Agreement over time per day or week.")
    refresh = serializers.BooleanField(default=False, help_text="Recompute now instead of serving the cache.")

    def validate(self, data):
        if "since" in data and "until" in data and data["since"] >= data["until"]:
            raise serializers.ValidationError({"until": "must be later than since."})
        return data


FILTER_PARAMETERS = [
    OpenApiParameter("generation", int, description="Only passes of this generation."),
    OpenApiParameter("since", OpenApiTypes.DATETIME, description="Passes submitted at or after."),
    OpenApiParameter("until", OpenApiTypes.DATETIME, description="Passes submitted before."),
    OpenApiParameter("bucket", str, enum=["day", "week"], description="Agreement over time per day or week."),
    OpenApiParameter("refresh", bool, default=False, description="Recompute instead of serving the cache."),
]


class DashboardComputes(UserRateThrottle):
    """The dashboard computes one person may start a minute (``STEPMARK_DASHBOARD_COMPUTES_PER_MINUTE``).

    No view's ``throttle_classes``: cached reads are free, so the cache asks it (``budget``)
    only before it computes. The key carries the account's creation time as well as its id, so
    a recreated database's person never inherits the count of another who had the same id.
    """

    scope = "dashboard_compute"

    def get_rate(self):
        return f"{settings.STEPMARK_DASHBOARD_COMPUTES_PER_MINUTE}/min"

    def get_cache_key(self, request, view):
        user = request.user
        return self.cache_format % {"scope": self.scope, "ident": f"{user.pk}:{int(user.date_joined.timestamp())}"}


def compute_budget(request):
    """``budget`` for labeling/stats/cache.py: counts a compute of the caller, or the seconds they must wait."""
    def spend():
        throttle = DashboardComputes()
        return None if throttle.allow_request(request, None) else max(1, math.ceil(throttle.wait()))

    return spend


def cached_dashboard(request, project):
    """``(body bytes, cache meta)`` for the request's filters; raises ValidationError on bad ones."""
    query = DashboardQuerySerializer(data={k: v for k, v in request.query_params.items() if k != "format"})
    query.is_valid(raise_exception=True)
    options = dict(query.validated_data)
    refresh = options.pop("refresh")
    return stats_cache.get_dashboard(
        project, options, lambda: dashboard.build_dashboard(project, **options), refresh=refresh,
        budget=compute_budget(request),
    )


# labeling/stats/cache.py: nothing cached for the filter and the caller's computes are spent (the
# body is the common refusal's, labeling/api/autoschema.py; a busy project is the 503 every operation declares).
COMPUTES_SPENT = OpenApiResponse(description="Too many dashboard computes this minute: Retry-After says when.")


def _json(raw):
    return json.dumps(raw, separators=(",", ":")).encode()


class DashboardView(APIView):
    """Every figure of the lead dashboard for the project (and generation, time window)."""

    permission_classes = [IsLead]

    @extend_schema(
        operation_id="projects_dashboard_retrieve",
        parameters=FILTER_PARAMETERS,
        responses={200: OpenApiTypes.OBJECT, 429: COMPUTES_SPENT},
        description="Agreement (alpha with bootstrap intervals overall, over time and per generation; "
        "first-error agreement), the kappa matrix, per-annotator figures and throughput. `cache` says how "
        "fresh the figures are; `statuses` holds the standing, read live, of each annotator who is not simply active; "
        "`labelers` each annotator's id in the exports (`labeler`).",
    )
    def get(self, request, pk):
        project = project_for(request.user, pk, LEAD)
        body, meta = cached_dashboard(request, project)
        live = {str(k): v for k, v in dashboard.statuses(project).items()}
        annotators = _annotators(body)
        flagged = {str(k): v for k, v in outliers.flags(annotators, outliers.thresholds_of(project)).items()}
        labelers = {str(k): v for k, v in labelers_of(row["id"] for row in annotators).items()}
        # Splice the live parts in front of the cached object: no re-encode of it.
        head = (b'{"cache":' + _json(meta) + b',"statuses":' + _json(live) + b',"flags":' + _json(flagged)
                + b',"labelers":' + _json(labelers)
                + b',"flag_settings":' + _json(FlagSettingsSerializer(project).data) + b",")
        return HttpResponse(head + body[1:], content_type="application/json")


def _annotators(body):
    return json.loads(body)["annotators"]


def labelers_of(ids):
    """``{annotator id: labeler}``: the uuid the exports write as ``labeler``, for a lead to join
    an export to the table. Looked up on each read, not cached: the cached figures need not carry it."""
    return {pk: str(uuid) for pk, uuid in Annotator.objects.filter(pk__in=list(ids)).values_list("pk", "uuid")}


def table_rows(project, body):
    """The annotator table: the cached rows with distribution shares flattened, status and flags added.

    ``flags`` is a list of the flags' words (labeling/stats/outliers.py); the CSV joins them with "; ".
    """
    rows = _annotators(body)
    live = dashboard.statuses(project, [row["id"] for row in rows])
    flagged = outliers.flags(rows, outliers.thresholds_of(project))
    labelers = labelers_of(row["id"] for row in rows)
    table = []
    for row in rows:
        shares = row.pop("distribution")
        row["labeler"] = labelers.get(row["id"])
        row["flags"] = [f"{flag['label']}: {flag['text']}" for flag in flagged.get(row["id"], [])]
        row.update(live.get(row["id"], {"status": None, "status_reason": ""}))
        row.update(share_plus=shares["1"], share_zero=shares["0"], share_minus=shares["-1"], ratings=shares["ratings"])
        table.append({key: row.get(key) for key in TABLE_COLUMNS})
    return table


class AnnotatorTableView(APIView):
    """One row per annotator with every figure the dashboard has on them; ``?format=csv`` for a file."""

    permission_classes = [IsLead]
    content_negotiation_class = IgnoreFormatParameter  # ?format= picks JSON or CSV here

    @extend_schema(
        operation_id="projects_annotators_list",
        parameters=[OpenApiParameter("format", str, enum=["json", "csv"], default="json"), *FILTER_PARAMETERS],
        responses={(200, "application/json"): OpenApiTypes.OBJECT, (200, "text/csv"): OpenApiTypes.STR,
                   429: COMPUTES_SPENT},
    )
    def get(self, request, pk):
        project = project_for(request.user, pk, LEAD)
        wanted = request.query_params.get("format", "json")
        if wanted not in ("json", "csv"):
            raise serializers.ValidationError({"format": ["Use json or csv."]})
        body, meta = cached_dashboard(request, project)
        rows = table_rows(project, body)
        if wanted == "json":
            return HttpResponse(_json({"cache": meta, "columns": TABLE_COLUMNS, "annotators": rows}),
                                content_type="application/json")
        out = io.StringIO()
        writer = csv.DictWriter(out, fieldnames=TABLE_COLUMNS)
        writer.writeheader()
        writer.writerows({k: _csv_safe("; ".join(v) if k == "flags" else v) for k, v in row.items()} for row in rows)
        response = HttpResponse(out.getvalue(), content_type="text/csv; charset=utf-8")
        response["Content-Disposition"] = f'attachment; filename="annotators-project-{project.pk}.csv"'
        return response


def _csv_safe(value):
    # A cell starting with = + - @ is a formula to a spreadsheet; labels come from people.
    if isinstance(value, str) and value[:1] in ("=", "+", "-", "@"):
        return "'" + value
    return value


class PagingSerializer(serializers.Serializer):
    limit = serializers.IntegerField(min_value=1, max_value=200, default=20)
    offset = serializers.IntegerField(min_value=0, max_value=MAX_NUMBER, default=0)


class AnnotatorPassesView(APIView):
    """The drill-down: an annotator's passes, each step's rating beside the gold and the others'."""

    permission_classes = [IsLead]

    @extend_schema(
        operation_id="projects_annotators_passes_list",
        parameters=[OpenApiParameter("limit", int, default=20), OpenApiParameter("offset", int, default=0)],
        responses={200: OpenApiTypes.OBJECT},
    )
    def get(self, request, pk, annotator_id):
        project = project_for(request.user, pk, LEAD)
        annotator = annotator_in(project, annotator_id)
        paging = PagingSerializer(data=request.query_params)
        paging.is_valid(raise_exception=True)
        answer = dashboard.annotator_passes(project, annotator, **paging.validated_data)
        standing = dashboard.statuses(project, [annotator.pk]).get(annotator.pk, {})
        # labeler: the exports' id for them (leads only, as this whole view), to join the two.
        answer["annotator"] = {"id": annotator.pk, "labeler": str(annotator.uuid), "label": str(annotator), **standing}
        return HttpResponse(_json(answer), content_type="application/json")


class FlagSettingsSerializer(serializers.ModelSerializer):
    """The thresholds of the outlier flags (labeling/stats/outliers.py); 0 turns a flag off."""

    class Meta:
        model = Project
        fields = list(outliers.THRESHOLDS)
        # The database's check constraint holds the same ranges; these give the 400 naming the field.
        extra_kwargs = {
            "flag_fast_share": {"min_value": 0, "max_value": 1},
            "flag_gold_margin": {"min_value": 0, "max_value": 1},
            "flag_agreement_margin": {"min_value": 0, "max_value": 2},
            "flag_distribution_margin": {"min_value": 0, "max_value": 1},
        }


@documented("flag_settings", FlagSettingsSerializer)
class FlagSettingsView(LeadSettingsView):
    """The thresholds at which the dashboard flags an annotator as an outlier against the team.

    Flags are computed on every read from the cached figures, so a change shows at the next
    load without a recompute.
    """

    form = FlagSettingsSerializer
