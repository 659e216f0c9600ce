"""Machine labels over the API: a project's label sources (a PRM, a judge, rollouts, a file) and their counts.

The labels themselves (``StepLabel``) sit beside people's ratings and never mix with them
(labeling/models/machine.py); this list lets leads and researchers see what came in, from where.
"""
from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.views import APIView

from labeling.access.permissions import LeadOrResearcher
from labeling.access.projects import project_for
from labeling.access.roles import LEAD, RESEARCHER
from labeling.models import LabelSource
from labeling.stats.machine_labels import label_sources

from .paging import BoundedPaging, page


class LabelSourceSerializer(serializers.ModelSerializer):
    kind = serializers.ChoiceField(choices=LabelSource.KINDS,
                                   help_text="prm, judge, rollouts (Monte Carlo estimates) or import.")
    details = serializers.DictField(help_text="The provenance: for an imported file its file, format and "
                                              "import_job_id, and the rollouts per step where known.")
    labels = serializers.IntegerField(source="labels_count", help_text="Step labels the source holds.")
    positive = serializers.IntegerField(help_text="Labels of value +1.")
    neutral = serializers.IntegerField(help_text="Labels of value 0.")
    negative = serializers.IntegerField(help_text="Labels of value -1.")
    without_value = serializers.IntegerField(help_text="Labels without a value (unparseable, refused, an error).")
    solutions = serializers.IntegerField(help_text="Distinct solutions with a label from the source.")

    class Meta:
        model = LabelSource
        fields = ["id", "kind", "name", "details", "created_at", "labels", "positive", "neutral", "negative",
                  "without_value", "solutions"]


class LabelSourceListView(APIView):
    """The project's machine-label sources, newest first, paged, each with its label counts."""

    permission_classes = [LeadOrResearcher]
    pagination_class = BoundedPaging

    @extend_schema(operation_id="projects_label_sources_list", responses={200: LabelSourceSerializer(many=True)})
    def get(self, request, pk):
        project = project_for(request.user, pk, LEAD, RESEARCHER)
        return page(self, request, label_sources(project), lambda rows: LabelSourceSerializer(rows, many=True).data)
