"""How a transactional test leaves the database: every table emptied with DELETE, not Django's flush.

About 300 tests run with ``transactional_db`` (live servers, browsers, Celery workers, other
processes that must see committed rows), and Django empties the database after each of them.
Its flush TRUNCATEs every table, which gives each of about 50 tables and their indexes new
files, then writes the content types and permissions again (``post_migrate``): about 0.3 s a
test on the 2-core machine, over a minute and a half of the suite. Deleting the few rows a test
wrote takes about 0.02 s. The content types and permissions, which only migrations write, stay
as they are; a table left with many dead rows is vacuumed (the test PostgreSQL may run without
autovacuum). Sequences are not reset, as Django's flush does not reset them either.
"""
from django.db import connections, transaction
from django.test import TransactionTestCase

KEPT = {"django_content_type", "auth_permission"}
VACUUM_AFTER = 5000  # deleted rows in one table


def empty_tables(connection):
    tables = [t for t in connection.introspection.django_table_names(only_existing=True, include_views=False)
              if t not in KEPT]
    emptied = []
    with transaction.atomic(using=connection.alias), connection.cursor() as cursor:
        cursor.execute("SET CONSTRAINTS ALL DEFERRED")  # Django's foreign keys are deferrable
        for table in tables:
            cursor.execute(f"DELETE FROM {connection.ops.quote_name(table)}")
            if cursor.rowcount > VACUUM_AFTER:
                emptied.append(table)
    with connection.cursor() as cursor:  # autocommit again: VACUUM cannot run in a transaction
        for table in emptied:
            cursor.execute(f"VACUUM {connection.ops.quote_name(table)}")


def install():
    """Empty by DELETE after every transactional test that asks for nothing else of the flush."""
    django_teardown = TransactionTestCase._fixture_teardown

    def _fixture_teardown(self):
        if self.available_apps is not None or self.serialized_rollback:
            return django_teardown(self)
        for name in self._databases_names(include_mirrors=False):
            empty_tables(connections[name])

    TransactionTestCase._fixture_teardown = _fixture_teardown
