"""A lead's settings form over the API: read it, change what was sent (validated by the form's
serializer, saved and logged by ``labeling.project_settings.change_settings``)."""
from drf_spectacular.utils import extend_schema, extend_schema_view
from rest_framework.response import Response
from rest_framework.views import APIView

from labeling.access.permissions import IsLead
from labeling.access.projects import project_for
from labeling.access.roles import LEAD
from labeling.project_settings import change_settings


class LeadSettingsView(APIView):
    """GET the form's fields of a project; PATCH some of them. ``form``: the form's serializer."""

    permission_classes = [IsLead]
    form = None

    def get(self, request, pk):
        return Response(self.form(project_for(request.user, pk, LEAD)).data)

    def patch(self, request, pk):
        project = project_for(request.user, pk, LEAD)
        form = self.form(project, data=request.data, partial=True)
        form.is_valid(raise_exception=True)
        change_settings(project, form.validated_data, request.user)
        return Response(self.form(project).data)


def documented(name, form):
    """The schema of a ``LeadSettingsView`` subclass: ``projects_<name>_retrieve`` and ``_partial_update``."""
    return extend_schema_view(
        get=extend_schema(operation_id=f"projects_{name}_retrieve", responses=form),
        patch=extend_schema(operation_id=f"projects_{name}_partial_update", request=form, responses=form),
    )
