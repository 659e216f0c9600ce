"""PostgreSQL advisory locks the jobs hold on what they work on (generation runs, retrains, import jobs).

A lock belongs to the database session, so it goes away with a worker that is killed; a
redelivered copy of a job that arrives while the first is still alive (its visibility timeout
passed, annotator/settings.py) finds the lock taken and steps aside.
"""
import contextlib

from django.db import connection

# Namespaces: the first key of pg_try_advisory_lock(int, int); the second is the row's id.
GENERATION_LOCK, RETRAIN_LOCK, CHAMPION_LOCK, IMPORT_JOB_LOCK = 0x5347, 0x5352, 0x5343, 0x5349
SHARD_LOCK = 0x5353  # a generation run's shard, held while a worker scores it (scoring/shards.py)


@contextlib.contextmanager
def advisory_lock(namespace, key, *, wait=False):
    """Hold a session-level PostgreSQL advisory lock; yields whether it was acquired.

    Elsewhere (SQLite in the demo, one worker) it always yields True.
    """
    if connection.vendor != "postgresql":
        yield True
        return
    with connection.cursor() as cursor:
        if wait:
            cursor.execute("SELECT pg_advisory_lock(%s, %s)", [namespace, key])
            acquired = True
        else:
            cursor.execute("SELECT pg_try_advisory_lock(%s, %s)", [namespace, key])
            acquired = cursor.fetchone()[0]
    try:
        yield acquired
    finally:
        if acquired:
            with connection.cursor() as cursor:
                cursor.execute("SELECT pg_advisory_unlock(%s, %s)", [namespace, key])
