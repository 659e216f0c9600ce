"""Model instances from hand-written SQL, for the annotator loop's fixed-shape reads.

On the loop's hot path the ORM spends several times more CPU building a statement than the
database spends answering it (bench/annotator_loop.py). ``fetch`` runs a written statement
and turns each row into model instances with the conversions the ORM would apply (SQLite
hands back naive datetimes and 0/1, JSON may arrive as text), so the instances are the
same as the ORM's. Fields not selected are deferred: reading one loads it, as with
``only()``.

    sql = f"SELECT {columns(Project, 'p')} FROM labeling_project p WHERE p.id = %s"
    rows = fetch(sql, [pk], Project)  # [(project,), ...]
"""
from django.db import DEFAULT_DB_ALIAS, connections

_PLANS = {}


def columns(model, alias, fields=None):
    """The select list of ``model``'s concrete columns (or of ``fields``, attribute names) under ``alias``."""
    return ", ".join(f"{alias}.{f.column}" for f in _fields(model, fields))


def fetch(sql, params, *parts, extra=0):
    """Rows of ``sql`` as tuples: one instance per part, then ``extra`` raw trailing values.

    A part is a model (all concrete columns, as ``columns`` lists them) or ``(model, fields)``.
    The statement selects the parts' columns in that order, then the extra values.
    """
    # The connection itself, not the ``connection`` proxy: each attribute read through the
    # proxy is a thread-local lookup, and on the loop's first statement they added up to a
    # tenth of the request's Python time.
    db = connections[DEFAULT_DB_ALIAS]
    plans = [_plan(db, part) for part in parts]
    with db.cursor() as cursor:
        cursor.execute(sql, params)
        rows = cursor.fetchall()
    out = []
    for row in rows:
        built, start = [], 0
        for model, names, converters in plans:
            values = list(row[start:start + len(names)])
            for i, chain, col in converters:
                for convert in chain:
                    values[i] = convert(values[i], col, db)
            built.append(model.from_db(db.alias, names, values))
            start += len(names)
        out.append((*built, *row[start:start + extra]))
    return out


def fetch_one(sql, params, *parts, extra=0):
    """The first row of ``fetch``, or None."""
    rows = fetch(sql, params, *parts, extra=extra)
    return rows[0] if rows else None


def _fields(model, fields):
    concrete = list(model._meta.concrete_fields)
    if fields is None:
        return concrete
    # In the model's own order: Model.from_db takes a subset of values in that order.
    wanted = {model._meta.get_field(name) for name in fields}
    return [f for f in concrete if f in wanted]


def _plan(db, part):
    model, fields = part if isinstance(part, tuple) else (part, None)
    key = (db.vendor, model, tuple(fields) if fields else None)
    plan = _PLANS.get(key)
    if plan is None:
        chosen = _fields(model, fields)
        converters = []
        for i, field in enumerate(chosen):
            col = field.get_col(model._meta.db_table)
            chain = db.ops.get_db_converters(col) + col.get_db_converters(db)
            if chain:
                converters.append((i, chain, col))
        plan = _PLANS[key] = (model, [f.attname for f in chosen], converters)
    return plan
