"""The labelling tables' indexes on PostgreSQL: every foreign key can be looked up, none twice.

The hot rows (assignments, solutions, ratings) are written on every hand-out and submit, and
each index of a row is written with it, so an index that only repeats the leading columns of
another is pure cost (migrations 0009 and 0010 dropped those). A foreign key without any
index leading with it makes every delete of the referenced row scan the whole table.
Partial indexes and those with another operator class (``varchar_pattern_ops`` for LIKE)
serve other queries and count as neither.
"""
import pytest
from django.db import connection

pytestmark = pytest.mark.django_db

_INDEXES = """
    SELECT t.relname, i.relname, ix.indpred IS NOT NULL OR NOT bool_and(o.opcdefault), ix.indisunique,
           array_agg(a.attname ORDER BY k.ord)
      FROM pg_index ix
      JOIN pg_class t ON t.oid = ix.indrelid
      JOIN pg_class i ON i.oid = ix.indexrelid
      JOIN pg_namespace n ON n.oid = t.relnamespace AND n.nspname = current_schema()
      CROSS JOIN LATERAL unnest(ix.indkey) WITH ORDINALITY AS k(attnum, ord)
      JOIN pg_attribute a ON a.attrelid = t.oid AND a.attnum = k.attnum
      JOIN pg_opclass o ON o.oid = ix.indclass[k.ord - 1]
     WHERE t.relname LIKE 'labeling\\_%%'
     GROUP BY t.relname, i.relname, ix.indpred, ix.indisunique
"""

_FOREIGN_KEYS = """
    SELECT t.relname, a.attname
      FROM pg_constraint c
      JOIN pg_class t ON t.oid = c.conrelid
      JOIN pg_namespace n ON n.oid = t.relnamespace AND n.nspname = current_schema()
      JOIN pg_attribute a ON a.attrelid = t.oid AND a.attnum = c.conkey[1]
     WHERE c.contype = 'f' AND t.relname LIKE 'labeling\\_%%'
"""


def _rows(sql):
    assert connection.vendor == "postgresql"
    with connection.cursor() as cursor:
        cursor.execute(sql)
        return cursor.fetchall()


def test_every_foreign_key_leads_an_index():
    led = {(table, columns[0]) for table, _, partial, _, columns in _rows(_INDEXES) if not partial}
    missing = sorted(key for key in _rows(_FOREIGN_KEYS) if tuple(key) not in led)
    assert missing == []


def test_no_index_repeats_the_leading_columns_of_another():
    indexes = _rows(_INDEXES)
    repeated = [
        (table, name, other)
        for table, name, partial, unique, columns in indexes if not partial and not unique
        for other_table, other, other_partial, _, other_columns in indexes
        if other_table == table and other != name and not other_partial
        and len(other_columns) >= len(columns) and other_columns[:len(columns)] == columns
    ]
    assert repeated == []
