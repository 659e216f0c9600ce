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
import time

from django.db import IntegrityError, OperationalError, connections, transaction
from django.test import TransactionTestCase

KEPT = {"django_content_type", "auth_permission"}
VACUUM_AFTER = 5000  # deleted rows in one table
TRIES = 5
# What a request still running in the live server can make of the emptying (see ``empty_tables``):
# a deadlock, or a row it committed that refers to one the emptying deleted.
RACED = {"40P01", "23503"}


def empty_tables(connection):
    tables = [t for t in connection.introspection.django_table_names(only_existing=True, include_views=False)
              if t not in KEPT]
    for attempt in range(1, TRIES + 1):
        try:
            emptied = _delete_all(connection, tables)
            break
        except (OperationalError, IntegrityError) as error:
            # A request the test's page sent last (a draft save a key debounced) may still be running
            # in the live server. Its row locks and these deletes, taken in another order, can
            # deadlock, and PostgreSQL ends one of the two; or it commits a row (a rating) after its
            # table was emptied that refers to a row deleted later (its step), and the foreign key,
            # checked at the commit, refuses. Either way the request has finished by the next try.
            if getattr(error.__cause__, "sqlstate", None) not in RACED or attempt == TRIES:
                raise
            time.sleep(0.1 * attempt)
    with connection.cursor() as cursor:  # autocommit again: VACUUM cannot run in a transaction
        for table in emptied:
            cursor.execute(f"VACUUM {connection.ops.quote_name(table)}")


def _delete_all(connection, tables):
    """Delete every row of ``tables`` in one transaction; the tables left with many dead rows."""
    emptied = []
    with transaction.atomic(using=connection.alias), connection.cursor() as cursor:
        cursor.execute("SET CONSTRAINTS ALL DEFERRED")  # Django's foreign keys are deferrable
        for table in tables:
            cursor.execute(f"DELETE FROM {connection.ops.quote_name(table)}")
            if cursor.rowcount > VACUUM_AFTER:
                emptied.append(table)
    return emptied


def install():
    """Empty by DELETE after every transactional test that asks for nothing else of the flush."""
    django_teardown = TransactionTestCase._fixture_teardown

    def _fixture_teardown(self):
        if self.available_apps is not None or self.serialized_rollback:
            return django_teardown(self)
        for name in self._databases_names(include_mirrors=False):
            empty_tables(connections[name])

    TransactionTestCase._fixture_teardown = _fixture_teardown
