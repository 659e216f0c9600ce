"""The API's docs page (/api/docs/): Swagger UI under the site's Content-Security-Policy.

drf-spectacular's split view serves the page's start-up script as a file, and the template
(labeling/templates/labeling/api_docs.html) moves its inline style to one: the policy allows
neither inline. Swagger UI's stylesheet draws its icons as ``data:`` SVG images, so this page's
policy also allows images from ``data:`` URLs (an image runs nothing).
"""
from django.conf import settings
from drf_spectacular.views import SpectacularSwaggerSplitView

from annotator.headers import HEADER, policy


class DocsView(SpectacularSwaggerSplitView):
    template_name = "labeling/api_docs.html"

    def finalize_response(self, request, response, *args, **kwargs):
        response = super().finalize_response(request, response, *args, **kwargs)
        directives = settings.SECURE_CSP
        response[HEADER] = policy({**directives, "img-src": [*directives.get("img-src", []), "data:"]})
        return response
