"""System checks of the database Stepmark runs on (``manage.py check --database default``, and
``manage.py migrate``, which runs them for the database it migrates).
"""
from django.core.checks import Tags, Warning, register
from django.db import connections

AUTOVACUUM_OFF = "stepmark.W001"


@register(Tags.database)
def check_autovacuum(app_configs=None, databases=None, **kwargs):
    """Warn when PostgreSQL's autovacuum is off.

    Every hand-out and submit leaves dead index entries behind, and a table that grew from
    empty keeps the statistics (and each connection the sequential-scan plans) of when it
    was small until it is analysed again, which bench/annotator_loop.py found to cost the
    loop's database nearly twice the CPU (docs/performance.md has the figures).
    """
    problems = []
    for alias in databases or ():
        connection = connections[alias]
        if connection.vendor != "postgresql":
            continue
        with connection.cursor() as cursor:
            cursor.execute("SELECT current_setting('autovacuum')")
            if cursor.fetchone()[0] != "on":
                problems.append(Warning(
                    f"PostgreSQL runs with autovacuum off (database {alias!r}).",
                    hint="Turn it on (autovacuum = on in postgresql.conf, its default): the queue's tables "
                         "bloat and their query plans go stale without it.",
                    id=AUTOVACUUM_OFF,
                ))
    return problems
