"""``/favicon.ico``: browsers ask for it on every page whatever the page links, and a 404 there
filled the logs (issue #30). Public, like the login page: the icon says nothing about anyone.
nginx (deploy/nginx.conf) passes every path to Django, so this one answer serves both."""
from pathlib import Path

from django.http import HttpResponse
from django.views.decorators.cache import cache_control
from django.views.decorators.http import require_safe

ICON = (Path(__file__).parent / "favicon.ico").read_bytes()


@require_safe
@cache_control(public=True, max_age=7 * 24 * 3600)
def favicon(request):
    return HttpResponse(ICON, content_type="image/x-icon")
