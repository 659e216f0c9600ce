"""The OpenAPI schema at /api/schema/, built once per process and format.

drf-spectacular builds the schema by walking every view on each request, a large share of a
web process's CPU that any signed-in account could ask for again and again (issue #19; the
figures: docs/performance.md#the-openapi-schema-labelingapischemapy). The schema depends only
on the code a process runs (it is public: the same for every caller), so each process keeps the
bytes it rendered, one entry per output format. ``?version=`` and ``?lang=`` are ignored:
Stepmark has one of each, and arbitrary values would be new entries.

What it declares beyond each view's own answers: labeling/api/autoschema.py.
"""
import threading

from django.http import HttpResponse
from drf_spectacular.utils import extend_schema
from drf_spectacular.views import SCHEMA_KWARGS, SpectacularAPIView


class SchemaView(SpectacularAPIView):
    rendered = {}  # renderer class -> (content type, body bytes); at most one per renderer
    _lock = threading.Lock()

    @extend_schema(**SCHEMA_KWARGS)  # the schema documents itself as drf-spectacular's view does
    def get(self, request, *args, **kwargs):
        renderer = request.accepted_renderer
        answer = self.rendered.get(type(renderer))
        if answer is None:
            with self._lock:  # threads of one process build it once
                answer = self.rendered.get(type(renderer)) or self._render(request, renderer)
                self.rendered[type(renderer)] = answer
        content_type, body = answer
        response = HttpResponse(body, content_type=content_type)
        response["Content-Disposition"] = f'inline; filename="{self._get_filename(request, None)}"'
        return response

    def _render(self, request, renderer):
        generator = self.generator_class(urlconf=self.urlconf, api_version=self.api_version, patterns=self.patterns)
        schema = generator.get_schema(request=request, public=self.serve_public)
        charset = f"; charset={renderer.charset}" if renderer.charset else ""
        return renderer.media_type + charset, renderer.render(schema, renderer.media_type, {})
