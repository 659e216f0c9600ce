"""The answer to a URL under /api/ that names no route (``handler404`` in annotator/urls.py).

DRF answers the 404s of its views in JSON; a path no route matches (``/api/assignments/-1/``:
``<int:pk>`` takes no sign; a misspelt path) never reaches one, and Django answered its HTML
page. A client of the API reads JSON: the same ``{"detail"}`` as a row that does not exist.
The pages keep Django's page.
"""
from django.http import JsonResponse
from django.views import defaults

from labeling.access.projects import NO_SUCH_ROW


def not_found(request, exception):
    if request.path.startswith("/api/"):
        return JsonResponse({"detail": NO_SUCH_ROW}, status=404, json_dumps_params={"separators": (",", ":")})
    return defaults.page_not_found(request, exception)
