"""The API's paging of lists (settings ``REST_FRAMEWORK["DEFAULT_PAGINATION_CLASS"]``): ``?limit=&offset=``.

DRF's ``LimitOffsetPagination`` takes any integer and ignores what is not one: ``limit`` of
9223372036854775808 or a 20-digit ``offset`` went on to PostgreSQL, which cannot hold them in
a bigint (a 500). Here both are checked like any other input: a whole number in range, or a
400 naming the parameter. ``limit`` is at most ``MAX_LIMIT``; ``offset`` at most
``MAX_NUMBER``, the largest whole number any query parameter here carries (far beyond any
table, within every database's integers; the dashboard's ``generation`` and ``offset`` too).
``page`` pages an ``APIView``'s list the same way as the viewsets' lists.
"""
from rest_framework.pagination import LimitOffsetPagination

from labeling.errors import DomainError

MAX_LIMIT = 1000
MAX_NUMBER = 2 ** 31 - 1


def whole_number(params, name, *, default, low, high):
    """The query parameter ``name`` as an int in [low, high], ``default`` when absent; else a 400 naming it."""
    raw = params.get(name)
    if raw is None or raw == "":
        return default
    # A digit count first: int() of thousands of digits is refused by Python itself (and costs).
    if not (raw.isascii() and raw.isdigit() and len(raw) <= 12) or not low <= int(raw) <= high:
        raise DomainError(f"{name} must be a whole number from {low} to {high}.", field=name)
    return int(raw)


class BoundedPaging(LimitOffsetPagination):
    max_limit = MAX_LIMIT

    def get_limit(self, request):
        return whole_number(request.query_params, self.limit_query_param, default=self.default_limit,
                            low=1, high=self.max_limit)

    def get_offset(self, request):
        return whole_number(request.query_params, self.offset_query_param, default=0, low=0, high=MAX_NUMBER)


def page(view, request, rows, serialize):
    """``rows`` (a queryset or list) paged by ``?limit=&offset=`` as every list of the API:
    ``{count, next, previous, results}``, ``results`` being ``serialize(the page's rows)``.
    The view sets ``pagination_class = BoundedPaging`` so that its schema says so too."""
    paging = view.pagination_class()
    rows = paging.paginate_queryset(rows, request, view)
    return paging.get_paginated_response(serialize(rows))
