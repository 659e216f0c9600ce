"""What one API request may send: its body's size and its JSON's depth (``RequestLimits``, a middleware).

Why a middleware: the limits must hold on every endpoint under /api/, whatever parsers its
view declares (DRF's token view brings its own) and before any of them reads the body, so a
refused request costs no parse. Each refusal is the API's one error shape,
``{"detail", "field"}`` (``labeling.errors.DomainError``):

- a body longer than its limit: 413. JSON and form bodies may hold ``DATA_UPLOAD_MAX_MEMORY_SIZE``
  bytes (Django reads them whole into memory); a multipart upload (the import endpoint streams
  its file to disk) ``STEPMARK_MAX_UPLOAD_BYTES``. The limit is read from ``Content-Length``,
  before the body is.
- JSON nested deeper than ``STEPMARK_MAX_JSON_DEPTH`` (labeling/nesting.py): 400. Python's
  parser recurses, so ``[[[[...`` a thousand deep would otherwise end in a RecursionError (a
  500) on any endpoint, the anonymous token endpoint included. Counting brackets settles nearly
  every body (no more openers than the limit, no deeper than it); only one with more is parsed
  here first.

Django's own refusal of a form body over the limit (``RequestDataTooBig``, a bare HTML 400) is
answered as the same 413 by labeling/api/errors.py.
"""
import json

from django.conf import settings
from django.http import JsonResponse

from labeling import nesting
from labeling.errors import DomainError

API_PREFIX = "/api/"


def body_limit(content_type):
    """Bytes a body of ``content_type`` may hold (None: no limit)."""
    if content_type.startswith("multipart/"):
        return settings.STEPMARK_MAX_UPLOAD_BYTES
    return settings.DATA_UPLOAD_MAX_MEMORY_SIZE


def too_large(size, limit):
    """The 413 refusal of a body of ``size`` bytes."""
    return DomainError(f"The request body is {size:,} bytes; at most {limit:,} are taken here.", status=413)


class RequestLimits:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        if request.path_info.startswith(API_PREFIX):
            refusal = self.refusal(request)
            if refusal is not None:
                return JsonResponse(refusal.as_answer(), status=refusal.status)
        return self.get_response(request)

    def refusal(self, request):
        try:
            size = int(request.META.get("CONTENT_LENGTH") or 0)
        except ValueError:
            return DomainError("Content-Length must be a number of bytes.")
        if size <= 0:
            return None
        content_type = request.content_type or ""
        limit = body_limit(content_type)
        if limit is not None and size > limit:
            return too_large(size, limit)
        if content_type == "application/json" or content_type.endswith("+json"):
            depth = nesting.max_depth()
            if json_deeper_than(request.body, depth):
                return DomainError(f"The JSON body is nested deeper than {depth} levels.")
        return None


def json_deeper_than(body, limit):
    """True when the JSON text ``body`` nests arrays and objects more than ``limit`` deep.

    Invalid JSON is left to the view's parser, which answers its own 400.
    """
    if body.count(b"[") + body.count(b"{") <= limit:  # C speed; an upper bound of the depth
        return False
    try:
        data = json.loads(body)
    except RecursionError:  # deeper than Python's parser goes: far deeper than the limit
        return True
    except ValueError:
        return False
    return nesting.deeper_than(data, limit)
