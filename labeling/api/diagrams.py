"""A drawn [asy] diagram as SVG, for the pages' ``<img>`` (frontend/src/diagram.js).

``GET /api/projects/{id}/diagrams/{sha256}.svg``: anyone who may see the project
(labeling/access/projects.py) gets the diagrams of its text. The body is the SVG the worker
drew and sanitised (labeling/diagrams/), sent with a Content-Security-Policy that runs and loads
nothing, should someone open it as a page. The address names the code, so a drawing never
changes under it: the browser keeps it.
"""
import re

from django.http import Http404, HttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework.views import APIView

from labeling.access.permissions import HasAnyRole
from labeling.access.projects import project_for
from labeling.models import Diagram

CSP = "default-src 'none'; style-src 'unsafe-inline'; sandbox"
_HASH = re.compile(r"[0-9a-f]{64}")
RETRY_SECONDS = 5


class DiagramView(APIView):
    """The drawing of one diagram of the project, by the sha256 of its code."""

    permission_classes = [HasAnyRole]

    @extend_schema(
        operation_id="projects_diagram_svg",
        responses={
            (200, "image/svg+xml"): OpenApiResponse(OpenApiTypes.STR, description="The sanitised SVG."),
            202: OpenApiResponse(description="Not drawn yet: the import's job is still drawing it (Retry-After)."),
            404: OpenApiResponse(description="No such project for you, no such diagram in it, or it could not be drawn."),
        },
    )
    def get(self, request, pk, sha256):
        project = project_for(request.user, pk)
        if not _HASH.fullmatch(sha256):
            raise Http404("a diagram is named by the sha256 of its code: 64 lowercase hex digits")
        diagram = Diagram.objects.filter(sha256=sha256, projects=project).only("status", "svg").first()
        if diagram is None or diagram.status == Diagram.FAILED:
            raise Http404("no drawing of this diagram in this project")
        if diagram.status == Diagram.PENDING:
            response = HttpResponse(status=202, headers={"Retry-After": str(RETRY_SECONDS)})
            response["Cache-Control"] = "no-store"
            return response
        response = HttpResponse(diagram.svg, content_type="image/svg+xml; charset=utf-8")
        response["Content-Security-Policy"] = CSP
        response["X-Content-Type-Options"] = "nosniff"
        # Private: the permission is checked on every first fetch. Immutable: the address names the code.
        response["Cache-Control"] = "private, max-age=31536000, immutable"
        response["ETag"] = f'"{sha256}"'
        return response
