"""The API's one answer to a refused request (settings ``REST_FRAMEWORK["EXCEPTION_HANDLER"]``).

Views do not catch domain refusals: a ``labeling.errors.DomainError`` raised anywhere under a
view becomes ``{"detail": message, "field": field}`` with the error's status, 400 unless it
says otherwise; bad input in a file (``formats.errors.FormatError``, an import's) becomes a 400
that also names its ``line``. Django's refusals of a body it will not read
(over ``DATA_UPLOAD_MAX_MEMORY_SIZE``, too many fields or files), which it would answer with a
bare HTML 400, get the same shape: 413 and 400; so does a body its parser cannot read (DRF's
``ParseError``, e.g. malformed JSON), naming the field ``body``. Everything else is DRF's own
answer.
"""
from django.conf import settings
from django.core.exceptions import RequestDataTooBig, TooManyFieldsSent, TooManyFilesSent
from rest_framework.exceptions import ParseError
from rest_framework.response import Response
from rest_framework.views import exception_handler as drf_exception_handler
from rest_framework.views import set_rollback

from formats.errors import FormatError
from labeling.errors import DomainError

from .limits import too_large


def exception_handler(exc, context):
    if isinstance(exc, RequestDataTooBig):
        request = context.get("request")
        size = int((request.META.get("CONTENT_LENGTH") or 0) if request is not None else 0)
        exc = too_large(size, settings.DATA_UPLOAD_MAX_MEMORY_SIZE)
    elif isinstance(exc, (TooManyFieldsSent, TooManyFilesSent)):
        exc = DomainError(str(exc))
    elif isinstance(exc, ParseError):
        exc = DomainError(str(exc.detail), field="body")
    if isinstance(exc, (DomainError, FormatError)):
        set_rollback()  # as DRF does for its own errors (under ATOMIC_REQUESTS)
        retry_after = getattr(exc, "retry_after", None)  # a 429 or 503 says when to ask again
        return Response(exc.as_answer(), status=exc.status,
                        headers={"Retry-After": str(retry_after)} if retry_after else None)
    return drf_exception_handler(exc, context)
