"""Fresh planner statistics after a bulk write (PostgreSQL).

PostgreSQL plans from statistics that ANALYZE gathers; autovacuum gathers them some time after a
table changes, or never where it is off. Until then a freshly filled table looks empty and the
planner picks sequential scans: a freshly imported project ran the annotator loop at less than
half the speed it reached after ``VACUUM ANALYZE``
(docs/performance.md#database-settings-the-loop-depends-on). So imports (``labeling.imports.run_import``) and other bulk writes (a generation's selection)
end by analysing the tables they filled. ANALYZE reads a sample of each table (30,000 rows at
the default statistics target), so it costs about the same whatever the table's size.
"""
from django.db import connection


def analyze(*models):
    """ANALYZE the tables of ``models`` on PostgreSQL; nothing elsewhere (SQLite plans without)."""
    if connection.vendor != "postgresql" or not models:
        return
    tables = ", ".join(connection.ops.quote_name(model._meta.db_table) for model in models)
    with connection.cursor() as cursor:
        cursor.execute(f"ANALYZE {tables}")
