"""``unique_or_none``: the row a unique lookup finds, read without the ORDER BY ``first()`` adds."""


def unique_or_none(queryset):
    """The one row of ``queryset`` (a lookup by a unique key), or None.

    ``first()`` orders an unordered query by its primary key, and compiling that ORDER BY was
    about a quarter of a one-row statement's Python in the annotator loop (docs/performance.md);
    a lookup by a unique key has one row at most, so it is read as it comes.
    """
    return next(iter(queryset.order_by()[:1]), None)
