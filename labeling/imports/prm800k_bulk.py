"""Fast inserts for large imports: ids handed out ahead, rows written in bulk.

On PostgreSQL rows go through ``COPY ... FROM STDIN`` (psycopg 3) with ids taken from the
tables' sequences beforehand, so rows can point at each other before any is written. On
SQLite (the demo) the same rows go through ``bulk_create``; the import holds SQLite's only
write lock, so ids simply continue from the table's largest.

Callers give the columns they know; every other column of the table gets its model default
(``auto_now_add`` columns get the import's start time), so a column added to a model later
does not break imports.
"""
import contextlib
import json

from django.db import models
from django.utils import timezone

ID_BLOCK = 8192


class BulkWriter:
    def __init__(self, connection):
        self.connection = connection
        self.postgres = connection.vendor == "postgresql"
        self.now = timezone.now()
        self._pools = {}

    @contextlib.contextmanager
    def raw_cursor(self):
        """The driver's cursor, past Django's debug wrapper (which would log every COPY row)."""
        cursor = self.connection.cursor().cursor
        try:
            yield cursor
        finally:
            cursor.close()

    def new_id(self, model):
        pool = self._pools.get(model)
        if pool is None:
            pool = self._pools[model] = _IdPool(self, model)
        return pool.take()

    def write(self, model, columns, rows):
        """Insert ``rows`` (tuples in the order of ``columns``, ids included)."""
        if not rows:
            return
        extra_columns, extra_values = self._defaults(model, columns)
        if self.postgres:
            self._copy(model, columns + extra_columns, extra_values, rows)
        else:
            objs = [model(**dict(zip(columns, row)), **dict(zip(extra_columns, extra_values))) for row in rows]
            model.objects.bulk_create(objs, batch_size=500)

    def _copy(self, model, columns, extra_values, rows):
        json_at = [
            i for i, name in enumerate(columns) if isinstance(model._meta.get_field(_field_name(model, name)), models.JSONField)
        ]
        sql = f'COPY {model._meta.db_table} ({", ".join(columns)}) FROM STDIN'
        with self.raw_cursor() as cursor, cursor.copy(sql) as copy:
            write_row = copy.write_row
            if json_at:
                for row in rows:
                    row = list(row + extra_values)
                    for i in json_at:
                        if row[i] is not None:
                            row[i] = json.dumps(row[i], ensure_ascii=False)
                    write_row(row)
            elif extra_values:
                for row in rows:
                    write_row(row + extra_values)
            else:
                for row in rows:
                    write_row(row)

    def _defaults(self, model, columns):
        names, values = [], []
        for f in model._meta.concrete_fields:
            if f.attname in columns or f.primary_key:
                continue
            names.append(f.attname)
            if getattr(f, "auto_now", False) or getattr(f, "auto_now_add", False):
                values.append(self.now)
            else:
                values.append(f.get_default())
        return tuple(names), tuple(values)


class _IdPool:
    def __init__(self, writer, model):
        self.writer, self.model = writer, model
        self.ids, self.next_sqlite = [], None

    def take(self):
        if not self.ids:
            self._refill()
        return self.ids.pop()

    def _refill(self):
        table = self.model._meta.db_table
        with self.writer.raw_cursor() as cursor:
            if self.writer.postgres:
                cursor.execute(
                    "SELECT nextval(pg_get_serial_sequence(%s, 'id')) FROM generate_series(1, %s)", [table, ID_BLOCK]
                )
                ids = sorted(row[0] for row in cursor.fetchall())
            else:
                if self.next_sqlite is None:
                    cursor.execute(f"SELECT COALESCE(MAX(id), 0) + 1 FROM {table}")
                    self.next_sqlite = cursor.fetchone()[0]
                ids = list(range(self.next_sqlite, self.next_sqlite + ID_BLOCK))
                self.next_sqlite += ID_BLOCK
        # pop() takes from the end: keep the smallest last so ids grow in hand-out order.
        self.ids = ids[::-1]


def _field_name(model, attname):
    for f in model._meta.concrete_fields:
        if f.attname == attname:
            return f.name
    raise LookupError(attname)
