"""``prepared``: an ORM statement compiled once per process and run again with new values.

The annotator loop runs the same twenty statements on every request with new values, and in
Django building and compiling a small statement is about five sixths of its Python
(docs/performance.md). A function decorated with ``prepared`` builds its queryset with the ORM
as any other; the first call for a shape of arguments compiles it, later calls substitute their
values into that SQL and read the rows back through the compiler Django made, so a statement is
written once, in the ORM, and compiled once. SQLAlchemy keeps such a cache of compiled
statements; django-prepared-queries did it for Django before 2.2.

What counts as an argument: the function's positional arguments, ints, strings and datetimes,
whose values the compiled SQL takes as parameters; ``None`` and booleans are part of the shape
(``generation_id=None`` compiles to ``IS NULL``), so each value of theirs is compiled on its own.
Everything else the function reads is frozen into the SQL at its first call: it must not read
the clock, a setting that changes or the database. The first compile checks this: it builds
the statement twice with different stand-in values and refuses (``NotPreparable``) a statement
whose SQL changes with them or that carries a value derived from an argument (``icontains``'s
``%value%``, a list's length), so a mistake fails in the tests, not in production.

Only PostgreSQL's statements are kept: SQLite (the demo) converts datetimes into strings before
they are bound, so there every call builds and compiles its statement as Django does.
"""
import copy
import datetime
import functools

from django.db import connections, transaction
from django.db.models import QuerySet
from django.db.models.sql.constants import ROW_COUNT
from django.db.models.sql.subqueries import UpdateQuery
from django.db.transaction import TransactionManagementError

# Stand-in values, two sets. The ints fit every integer column, the smallest included: Django
# compiles a comparison with a value out of its column's range to no condition at all.
_PROBE_INT = (29_989, 31_013)
_PROBE_TIME = (datetime.datetime(1901, 3, 5, 7, 11, 13, 170_000, tzinfo=datetime.timezone.utc),
               datetime.datetime(1902, 4, 6, 8, 12, 14, 190_000, tzinfo=datetime.timezone.utc))


class NotPreparable(TypeError):
    """A statement whose SQL or parameters depend on its arguments in a way substitution cannot follow."""


def prepared(build):
    """Decorate ``build(*args) -> QuerySet``: calling it returns the queryset's rows as a list.

    Example::

        @prepared
        def memberships(user_id):
            return Membership.objects.filter(user_id=user_id).values_list("project_id", "role")

        memberships(user.pk)   # [(3, "lead"), ...], compiled at the first call only
    """
    return _Prepared(build, _select)


def first(rows):
    """The first of a prepared statement's rows, or None (for a lookup by a unique key, ``[:1]``)."""
    return rows[0] if rows else None


def prepared_update(build):
    """Decorate ``build(*args) -> (QuerySet, {field: value})``: calling it runs the UPDATE and
    returns the number of rows it changed, as ``queryset.update(**values)`` would (no signals:
    ``update()`` sends none either)."""
    return _Prepared(build, _update)


class _Prepared:
    def __init__(self, build, kind):
        self.build, self.kind = build, kind
        self.compiled = {}  # shape of the arguments -> _Statement, or None: build and run each time
        functools.update_wrapper(self, build)

    def __call__(self, *args):
        shape = tuple(_shape(value) for value in args)
        try:
            statement = self.compiled[shape]
        except KeyError:
            statement = self.compiled[shape] = self._compile(args)
        return statement.run(args) if statement is not None else self.kind.plain(self.build(*args))

    def _compile(self, args):
        """The statement for the shape of ``args``, or None where statements are not kept (not PostgreSQL)."""
        first = self.kind.compiler(self.build(*_probes(args, 0)))
        if first.connection.vendor != "postgresql":
            return None
        second = self.kind.compiler(self.build(*_probes(args, 1)))
        (sql, params), (other_sql, other_params) = first.as_sql(), second.as_sql()
        if sql != other_sql or len(params) != len(other_params):
            raise NotPreparable(f"{self.build.__qualname__}: its SQL changes with the values of its arguments.")
        slots = []
        for value, other in zip(params, other_params):
            slots.append(_slot(self.build.__qualname__, value, other, _probes(args, 0), _probes(args, 1)))
        return _Statement(self.kind, first, sql, slots)


class _Statement:
    """One compiled statement: its SQL, where each argument goes in its parameters, its compiler."""

    def __init__(self, kind, compiler, sql, slots):
        self.kind, self.template, self.sql, self.slots = kind, compiler, sql, slots
        self.locks = bool(getattr(compiler.query, "select_for_update", False))
        # How each column's value is read back (a JSON field's decoding, ...) depends on the
        # columns alone: worked out once, not for every run as the compiler would.
        converters = kind.converters(compiler)
        self.converters = lambda expressions: converters

    def run(self, args):
        compiler = copy.copy(self.template)
        compiler.connection = connections[compiler.using]
        if self.locks and compiler.connection.get_autocommit():
            # What Django's compiler says when it compiles a lock outside a transaction.
            raise TransactionManagementError("select_for_update cannot be used outside of a transaction.")
        params = tuple(slot.bind(args) for slot in self.slots)
        compiled = (self.sql, params)
        compiler.as_sql = lambda *_, **__: compiled
        compiler.get_converters = self.converters
        return self.kind.run(compiler)


class _Constant:
    __slots__ = ("value",)

    def __init__(self, value):
        self.value = value

    def bind(self, args):
        return self.value


class _Argument:
    __slots__ = ("index", "wrap")

    def __init__(self, index, wrap):
        self.index, self.wrap = index, wrap

    def bind(self, args):
        value = args[self.index]
        return value if self.wrap is None else self.wrap(value)


def _slot(name, value, other, first_probes, second_probes):
    """Where a parameter comes from: an argument (``_Argument``) or the statement itself (``_Constant``)."""
    for i, (a, b) in enumerate(zip(first_probes, second_probes)):
        if a is not b and isinstance(value, type(a)) and value == a:
            if not (type(other) is type(value) and other == b):
                raise NotPreparable(f"{name}: argument {i} is bound differently in its two compiles.")
            # The backend may bind a subtype (psycopg's Int4 for an integer column's new value).
            return _Argument(i, None if type(value) is type(a) else type(value))
    if type(value) is not type(other) or value != other:
        raise NotPreparable(f"{name}: a parameter ({value!r}) is derived from an argument, "
                            f"or from something other than its arguments that changed between two compiles.")
    return _Constant(value)


def _shape(value):
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, (int, str, datetime.datetime)):
        return type(value)
    raise NotPreparable(f"A prepared statement takes ints, strings, datetimes, booleans and None, not {type(value).__name__}.")


def _probes(args, n):
    """The ``n``-th set of stand-ins for ``args``: distinct per argument and per set."""
    probes = []
    for i, value in enumerate(args):
        if value is None or isinstance(value, bool):
            probes.append(value)
        elif isinstance(value, int):
            probes.append(_PROBE_INT[n] + i)
        elif isinstance(value, str):
            probes.append(f"\x1fstepmark-probe-{n}-{i}")
        else:
            probes.append(_PROBE_TIME[n] + datetime.timedelta(seconds=i))
    return probes


class _Select:
    """A SELECT: its rows come back through the queryset's own iterable (models, values, flat)."""

    @staticmethod
    def compiler(queryset):
        if queryset._prefetch_related_lookups:
            # Their statements run after the rows are read, by the queryset itself (_fetch_all).
            raise NotPreparable("A prepared statement is one statement: prefetch_related() is not kept.")
        compiler = queryset.query.get_compiler(using=queryset.db)
        compiler.queryset = queryset
        return compiler

    @staticmethod
    def plain(queryset):
        return list(queryset)

    @staticmethod
    def converters(compiler):
        return compiler.get_converters([column for column, *_ in compiler.select[:compiler.col_count]])

    @staticmethod
    def run(compiler):
        # A new queryset object sharing the compiled one's state (copy.copy would run the query:
        # a QuerySet's __getstate__ fetches its rows), with a query that hands over the compiler.
        template = compiler.queryset
        queryset = QuerySet.__new__(type(template))
        queryset.__dict__.update(template.__dict__, _query=_CompiledQuery(template._query, compiler))
        return list(queryset._iterable_class(queryset))


class _CompiledQuery:
    """A query that hands its iterable one compiler, already compiled; the rest is the query's."""

    def __init__(self, query, compiler):
        self._query, self._compiler = query, compiler

    def get_compiler(self, using=None, connection=None, elide_empty=True):
        return self._compiler

    def __getattr__(self, name):
        return getattr(self._query, name)


class _Update:
    """An UPDATE, built as ``QuerySet.update`` builds it."""

    @staticmethod
    def compiler(built):
        queryset, values = built
        queryset._for_write = True
        query = queryset.query.chain(UpdateQuery)
        query.add_update_values(values)
        query.order_by, query.annotations = (), {}
        return query.get_compiler(using=queryset.db)

    @staticmethod
    def plain(built):
        queryset, values = built
        return queryset.update(**values)

    @staticmethod
    def converters(compiler):
        return {}  # an UPDATE reads no rows

    @staticmethod
    def run(compiler):
        with transaction.mark_for_rollback_on_error(using=compiler.using):
            return compiler.execute_sql(ROW_COUNT)


_select, _update = _Select(), _Update()
