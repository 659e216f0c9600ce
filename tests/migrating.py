"""Data-migration tests: migrate the test database to a point, and back to the newest afterwards."""
import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor


def migrate(targets):
    """Migrate to ``targets`` (``[(app, migration)]``); the historical apps there."""
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(targets)
    return executor.loader.project_state(targets).apps


def newest():
    """The newest migration of every app: the schema today's code (models, imports) reads."""
    return MigrationExecutor(connection).loader.graph.leaf_nodes()


@pytest.fixture
def at_the_newest_migrations_afterwards(transactional_db):
    yield
    migrate(newest())  # whatever the test did
