"""The OpenAPI schema is true: a bounded schemathesis run against the API (issue #26, item 6).

Each operation of the schema (drf-spectacular's, with the refusals of labeling/api/autoschema.py)
gets a few generated requests, schema-conforming and not, sent through Django's WSGI handler
in this process (the test's PostgreSQL and Redis), as an annotator, a lead and a researcher of
a project holding one of each row a URL can name. Each request is sent as generated (its ids
mostly name nothing) and again naming that project's real rows, so the 2xx answers are checked
too. Every answer must be no 5xx, of a declared status, with a declared content type, and its
body must match the schema. The examples are drawn deterministically (``derandomize``): the run
is the same each time, and a new answer that breaks the schema fails it.
"""
import collections
import json
import os
import secrets

import pytest
import schemathesis
from django.core.handlers.wsgi import WSGIHandler
from django.core.signals import request_finished, request_started
from django.db import close_old_connections, transaction
from django.test import override_settings
from drf_spectacular.generators import SchemaGenerator
from drf_spectacular.renderers import OpenApiJsonRenderer
from hypothesis import HealthCheck, given, settings
from schemathesis import GenerationMode
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from labeling.access.roles import RESEARCHER, grant_role
from labeling.access.tokens import issue
from tests.conftest import FAST_HASHERS
from tests.factories import WORLD_ROW_OF, make_user, make_world
from tests.scoring.test_api import broker  # noqa: F401  (autouse: queued jobs go to a flushed Redis database)

# Per operation and generation mode; each is sent up to 6 times (3 roles, generated and real ids).
# A deeper run: STEPMARK_SCHEMA_FUZZ_EXAMPLES=50 (the suite's run stays within about 30 s of CPU).
EXAMPLES = int(os.environ.get("STEPMARK_SCHEMA_FUZZ_EXAMPLES", "2"))
# A private client address of this run's own: the token endpoint's throttle and the login
# lockouts count per address, and other tests sign in from 127.0.0.1.
ADDRESS = f"10.{secrets.randbelow(256)}.{secrets.randbelow(256)}.{secrets.randbelow(254) + 1}"
CHECKS = [not_a_server_error, status_code_conformance, content_type_conformance, response_schema_conformance]
SENT = collections.Counter()
STATUSES = collections.Counter()


def openapi():
    """The schema /api/schema/ serves, as JSON data."""
    schema = SchemaGenerator().get_schema(request=None, public=True)
    return json.loads(OpenApiJsonRenderer().render(schema, renderer_context={}))


SCHEMA = schemathesis.openapi.from_dict(openapi())
OPERATIONS = [result.ok() for result in SCHEMA.get_all_operations()]


def application():
    """Django's WSGI handler, counting requests, on the test's database connection: as Django's
    test client does, a request's end does not close the connection (and its transaction)."""
    handler = WSGIHandler()

    def app(environ, start_response):
        SENT["requests"] += 1
        return handler(environ, start_response)

    return app


APP = application()


@pytest.fixture(autouse=True)
def one_connection():
    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    yield
    request_started.connect(close_old_connections)
    request_finished.connect(close_old_connections)


@pytest.fixture(scope="module", autouse=True)
def report(request):
    """The run's figures on the terminal after the module (outside pytest's output capture)."""
    yield
    plugins = request.config.pluginmanager
    reporter, capture = plugins.get_plugin("terminalreporter"), plugins.get_plugin("capturemanager")
    if reporter is None or capture is None:
        return
    with capture.global_and_fixture_disabled():
        reporter.write_line("")
        reporter.write_line(f"schema fuzz: {SENT['operations']} operations, {SENT['cases']} generated cases, "
                            f"{SENT['requests']} requests; answers by status: {dict(sorted(STATUSES.items()))}")


@pytest.fixture(scope="module")
def made(django_db_setup, django_db_blocker):
    """The world, its researcher and the three tokens, made once for the module's tests (a fifth of
    its time when each made its own) in a transaction of the module's that each test's own (a
    savepoint inside it) rolls back to, and that is rolled back after the last of them: what one
    test's requests change, the next never sees."""
    with django_db_blocker.unblock(), override_settings(PASSWORD_HASHERS=FAST_HASHERS), transaction.atomic():
        project, ids = make_world("fuzz")
        researcher = make_user("fuzz-researcher", projects=[])
        grant_role(researcher, RESEARCHER, project)
        people = {"annotator": ids["worker"], "lead": project.memberships.get(role="lead").user, "researcher": researcher}
        tokens = {role: issue(user) for role, user in people.items()}
        yield ids, {role: (key, token.pk) for role, (key, token) in tokens.items()}
        transaction.set_rollback(True)


@pytest.fixture
def world(db, export_dir, settings, tmp_path, made):
    settings.STEPMARK_IMPORT_DIR = tmp_path / "imports"  # the uploads the import operations keep
    return made


def real_ids(case, ids, token_id):
    """The case's path parameters naming the world's rows (the others as generated); None: it has none."""
    head = case.operation.path.removeprefix("/api/").split("/")[0]
    real = {"id": ids.get(WORLD_ROW_OF.get(head)), "annotator_id": ids["annotator"], "membership_id": ids["membership"],
            "token_id": token_id}
    if case.path_parameters is None:
        return None
    return {name: real.get(name) or value for name, value in case.path_parameters.items()}


def check(case, key):
    # buffered: the answer is read and closed as a server does (Django's request_finished, the
    # upload's temporary file).
    response = case.call(app=APP, headers={"Authorization": f"Token {key}"}, buffered=True,
                         environ_base={"REMOTE_ADDR": ADDRESS})
    STATUSES[response.status_code] += 1
    case.validate_response(response, checks=CHECKS)


def takes_input(operation):
    """Whether the operation has parameters or a body: only then can a request break its schema."""
    return bool(operation.path_parameters or operation.query or operation.body)


RUNS = [(operation, mode) for operation in OPERATIONS for mode in GenerationMode
        if mode is GenerationMode.POSITIVE or takes_input(operation)]


@pytest.mark.slow
@pytest.mark.parametrize("operation, mode", RUNS, ids=[f"{op.label} {mode.value}" for op, mode in RUNS])
def test_every_answer_is_declared_and_matches_the_schema(world, operation, mode):
    ids, tokens = world
    SENT["operations"] += mode is GenerationMode.POSITIVE

    @settings(max_examples=EXAMPLES, deadline=None, derandomize=True, database=None,
              suppress_health_check=list(HealthCheck))
    @given(case=operation.as_strategy(generation_mode=mode))
    def run(case):
        SENT["cases"] += 1
        generated = case.path_parameters
        for key, token_id in tokens.values():
            case.path_parameters = generated
            check(case, key)
            named = real_ids(case, ids, token_id)
            if named != generated:
                case.path_parameters = named
                check(case, key)

    run()
