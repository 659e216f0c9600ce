"""The API's one answer to a refused request (settings ``REST_FRAMEWORK["EXCEPTION_HANDLER"]``).

Views do not catch domain refusals: a ``labeling.errors.DomainError`` raised anywhere under a
view becomes ``{"detail": message, "field": field}`` (an import's also names its ``line``) with
the error's status, 400 unless it says otherwise. Everything else is DRF's own answer.
"""
from rest_framework.response import Response
from rest_framework.views import exception_handler as drf_exception_handler
from rest_framework.views import set_rollback

from labeling.errors import DomainError


def exception_handler(exc, context):
    if isinstance(exc, DomainError):
        set_rollback()  # as DRF does for its own errors (under ATOMIC_REQUESTS)
        return Response(exc.as_answer(), status=exc.status)
    return drf_exception_handler(exc, context)

