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
# Off by default: the database checks every foreign key of an import, as it does everywhere
# else; skipping them saves about a fifth of a large import (docs/performance.md). See
# BulkWriter.row_triggers_off; tests cover both ways.
SKIP_ROW_TRIGGERS = False


class BulkWriter:
    def __init__(self, connection):
        self.connection = connection
        self.postgres = connection.vendor == "postgresql"
        self.now = timezone.now()

    @contextlib.contextmanager
    def raw_cursor(self):
        """The driver's cursor, past Django's debug wrapper (which would log every COPY row)."""
        cursor = self.connection.cursor().cursor
        try:
            yield cursor
        finally:
            cursor.close()

    def ids(self, model):
        """An endless iterator of fresh ids for ``model``, fetched in blocks."""
        pool = _IdPool(self, model)
        while True:
            yield from pool.block()

    @contextlib.contextmanager
    def row_triggers_off(self):
        """Skip PostgreSQL's per-row foreign-key triggers for this transaction, where allowed.

        Checking each of a million new rows against its parent costs a trigger call per row at
        commit (about a third of a large import). The import builds every reference itself
        from ids it looked up or handed out, and locks the pre-existing parents it points at
        (``FOR KEY SHARE``, what the triggers would have done), so the checks add nothing.
        Only a superuser may turn them off; otherwise this does nothing. On an exception the
        setting ends with the transaction that ``run_import`` rolls back.
        """
        if not (self.postgres and SKIP_ROW_TRIGGERS):
            yield False
            return
        with self.raw_cursor() as cursor:
            cursor.execute("SELECT current_setting('is_superuser'), current_setting('session_replication_role')")
            superuser, previous = cursor.fetchone()
            if superuser == "on":
                cursor.execute("SELECT set_config('session_replication_role', 'replica', true)")
        if superuser != "on":
            yield False
            return
        yield True
        with self.raw_cursor() as cursor:
            cursor.execute("SELECT set_config('session_replication_role', %s, true)", [previous])

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
        self.next_sqlite, self.sequence = None, None

    def block(self):
        table = self.model._meta.db_table
        with self.writer.raw_cursor() as cursor:
            if self.writer.postgres:
                if self.sequence is None:
                    cursor.execute("SELECT pg_get_serial_sequence(%s, 'id')", [table])
                    self.sequence = cursor.fetchone()[0]
                cursor.execute("SELECT nextval(%s::regclass) FROM generate_series(1, %s)", [self.sequence, ID_BLOCK])
                ids = sorted(row[0] for row in cursor.fetchall())
            else:
                if self.next_sqlite is None:
                    cursor.execute(f"SELECT COALESCE(MAX(id), 0) + 1 FROM {table}")
                    self.next_sqlite = cursor.fetchone()[0]
                ids = list(range(self.next_sqlite, self.next_sqlite + ID_BLOCK))
                self.next_sqlite += ID_BLOCK
        return ids


def _field_name(model, attname):
    for f in model._meta.concrete_fields:
        if f.attname == attname:
            return f.name
    raise LookupError(attname)
