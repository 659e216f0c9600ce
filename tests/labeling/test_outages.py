"""Outages answered cleanly (labeling/outages.py), against the real PostgreSQL and Redis.

Connections are cut without touching the machine's services: PostgreSQL's backends are ended
with ``pg_terminate_backend``; Redis and PostgreSQL are "away" by pointing the settings at a
port that refuses, or at a listener that accepts and never answers a byte. A real gunicorn
(production settings) serves where the per-request machinery matters: Django's test client
leaves out the connection checks that run between requests.
"""
import http.client
import logging
import re
import threading

import psycopg
import pytest
from django.db import connection
from django.urls import reverse
from django_redis import get_redis_connection

from bench._server import free_port, gunicorn
from labeling import outages
from labeling.access.tokens import issue
from labeling.diagrams.tasks import draw_project_diagrams
from labeling.imports import jobs as import_jobs
from labeling.imports.jobs import run_import_job
from labeling.locks import IMPORT_JOB_LOCK
from labeling.models import ImportJob
from labeling.tasks import export_project_snapshot
from tests.conftest import database_url, silent_port
from tests.factories import PASSWORD, client_for, make_project, make_solution, make_user, token_client


@pytest.fixture(autouse=True)
def no_outage_yet():
    outages._down.clear()
    yield
    outages._down.clear()


@pytest.fixture
def redis_at(settings):
    """``redis_at(port)`` points both caches at 127.0.0.1:port, keeping their options (the
    timeouts); ``redis_at(None)`` points them back at the real Redis."""
    real = settings.CACHES

    def point(port):
        settings.CACHES = real if port is None else {
            name: {**cache, "LOCATION": f"redis://127.0.0.1:{port}/0"} for name, cache in real.items()}
        if port is None:
            # django-redis keeps one pool per address for the process: the real Redis's pool
            # still holds the connections of before. A restart would have closed them.
            for name in real:
                get_redis_connection(name).connection_pool.disconnect()

    return point


def outage_lines(caplog):
    return [r.getMessage() for r in caplog.records if r.name == "labeling.outages"]


def tracebacks(caplog):
    """Records with a traceback, and Django's per-request error lines."""
    return [r.getMessage() for r in caplog.records if r.exc_info or r.name == "django.request"]


def assert_503(answer, service="Redis"):
    assert answer.status_code == 503, answer.content
    assert answer["Content-Type"] == "application/json"
    assert answer["Retry-After"] == str(outages.RETRY_AFTER)
    assert answer.json() == {"detail": f"{service} is not answering; try again in a few seconds.", "field": None}


def terminate_backends(keep=()):
    """End the sessions of the test database but those of ``keep`` (pids), as a PostgreSQL restart does;
    the pids ended (an earlier test's connection not yet closed may be among them)."""
    with psycopg.connect(database_url(), autocommit=True) as admin:
        return [pid for pid, ended in admin.execute(
            "SELECT pid, pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database()"
            " AND pid <> pg_backend_pid() AND pid <> ALL(%s)", [list(keep)]).fetchall() if ended]


def own_pid():
    """The backend of this process's Django connection."""
    connection.ensure_connection()
    return connection.connection.info.backend_pid


def test_a_statements_own_error_is_not_an_outage(db):
    from django.db import OperationalError, transaction

    with pytest.raises(OperationalError) as cancelled, transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("SET LOCAL statement_timeout = 1")
        cursor.execute("SELECT pg_sleep(1)")  # QueryCanceled (57014): PostgreSQL answered
    assert outages.service_of(cancelled.value) is None and outages.note(cancelled.value) is None
    assert outages._down == {}


# Redis away: /api/ answers a JSON 503, the log has one line -------------------------------------------


def test_while_redis_refuses_the_api_answers_503_logs_one_line_and_recovers(transactional_db, redis_at, caplog):
    caplog.set_level(logging.INFO)
    project = make_project(name="outage")
    make_solution(project, steps=2)
    lead, researcher = client_for(make_user("lead", "lead")), client_for(make_user("res", "researcher"))
    annotator = token_client(make_user("ann", "annotator"))
    dashboard = reverse("api:project-dashboard", args=[project.pk])
    redis_at(free_port())  # nobody listens there: every connection is refused

    for _ in range(3):  # the routes that answered Django's HTML 500 in the restart test
        assert_503(lead.get(dashboard))
        assert_503(lead.get(reverse("api:project-annotators", args=[project.pk])))
        assert_503(researcher.get(reverse("api:project-snapshots", args=[project.pk])))
        assert_503(client_for(None).post(reverse("api:auth-token"), {"username": "lead", "password": PASSWORD}))
    # The annotator loop needs no Redis: the submit is stored, and its dashboard bump only noted.
    handed = annotator.post(reverse("api:project-next", args=[project.pk]))
    assert handed.status_code == 201, handed.content
    task = handed.json()
    ratings = [{"position": p, "alternative": 0, "value": 1} for p in (0, 1)]
    done = annotator.post(reverse("api:assignment-submit", args=[task["id"]]),
                          {"finish_reason": "solution", "ratings": ratings}, format="json")
    assert done.status_code == 200, done.content

    [line] = outage_lines(caplog)
    assert line.startswith("Redis is unavailable (ConnectionError: ") and "Connection refused" in line
    assert tracebacks(caplog) == []

    caplog.clear()
    redis_at(None)
    assert lead.get(dashboard).status_code == 200
    [line] = outage_lines(caplog)
    assert re.fullmatch(r"Redis is back after [0-9.]+ s \(met 1[34] times meanwhile\)", line)


def test_a_redis_that_never_answers_costs_a_request_its_timeout_not_a_hang(transactional_db, redis_at, settings,
                                                                           caplog):
    project = make_project(name="silent")
    lead = client_for(make_user("lead", "lead"))
    answers = []
    with silent_port() as port:
        redis_at(port)
        request = threading.Thread(target=lambda: answers.append(
            lead.get(reverse("api:project-dashboard", args=[project.pk]))), daemon=True)
        request.start()
        # A guard against a hang, not a measurement: the cache gives up after its socket timeout.
        request.join(timeout=settings.REDIS_TIMEOUT * 3 + 10)
    assert not request.is_alive(), "the request hung on a Redis that never answers"
    assert_503(answers[0])
    [line] = outage_lines(caplog)
    assert line.startswith("Redis is unavailable (TimeoutError: ")


# PostgreSQL: a dead connection is replaced, an unreachable server is a 503 ---------------------------


@pytest.fixture
def token(transactional_db):
    return issue(make_user("ann", "annotator"))[0]


def get(port, path, headers):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    conn.request("GET", path, headers=headers)
    response = conn.getresponse()
    return response.status, dict(response.getheaders()), response.read()


def test_after_its_backends_are_terminated_gunicorn_answers_the_next_requests(token):
    auth = {"Authorization": f"Token {token}"}
    with gunicorn(database_url(), workers=1, threads=0, ready_path="/accounts/login/") as (port, _):
        assert get(port, "/api/me/", auth)[0] == 200  # the worker now holds a persistent connection
        assert len(terminate_backends(keep=[own_pid()])) >= 1
        # Each of these was a 500 on the dead connection (CONN_MAX_AGE without health checks).
        assert [get(port, "/api/me/", auth)[0] for _ in range(3)] == [200, 200, 200]


def test_while_postgresql_is_away_api_and_pages_answer_503_and_the_log_has_one_line(transactional_db, tmp_path):
    log = tmp_path / "gunicorn.log"
    down = database_url().rsplit("@", 1)[0] + f"@127.0.0.1:{free_port()}/nothing"  # a refused connection
    with gunicorn(down, workers=1, threads=0, ready_path="/accounts/login/", log_path=log) as (port, _):
        for _ in range(3):
            status, headers, body = get(port, "/api/projects/", {"Authorization": "Token abc"})
            assert (status, headers["Retry-After"], headers["Content-Type"]) == (503, "5", "application/json")
            assert body == b'{"detail": "The database is not answering; try again in a few seconds.", "field": null}'
            # A page: the session is read from the database.
            status, headers, body = get(port, "/", {"Cookie": f"sessionid={'a' * 32}"})
            assert (status, headers["Retry-After"], headers["Content-Type"]) == (503, "5", "text/html; charset=utf-8")
            assert b"The database is not answering" in body
    text = log.read_text()
    [line] = [line for line in text.splitlines() if "unavailable" in line]
    assert line.startswith("The database is unavailable (OperationalError: ")
    assert "Traceback" not in text and "Service Unavailable" not in text


# One-shot jobs retry on an outage ---------------------------------------------------------------------


def problems_job(project, folder):
    """A queued import job of one MATH problem."""
    upload = folder / "problems.jsonl"
    upload.write_text('{"problem": "1+1?", "solution": "$1+1=\\\\boxed{2}$", "answer": "2"}\n')
    return ImportJob.objects.create(project=project, format="problems", path=str(upload), file_name=upload.name,
                                    bytes_total=upload.stat().st_size)


@pytest.mark.parametrize("job", ["diagrams", "snapshot", "import"])
def test_a_one_shot_job_whose_connection_was_terminated_runs_again_and_succeeds(job, transactional_db, eager,
                                                                                export_dir, tmp_path):
    project = make_project(name="one shot")
    job_id = problems_job(project, tmp_path).pk
    queue = {"diagrams": lambda: draw_project_diagrams.delay(project.pk),
             "snapshot": lambda: export_project_snapshot.delay(project.pk),
             "import": lambda: run_import_job.delay(job_id)}[job]
    dead = own_pid()
    assert dead in terminate_backends()  # the job's first query meets the dead connection
    result = queue()  # eager: the retry runs inline
    assert result.successful(), result.traceback
    assert connection.connection.info.backend_pid != dead
    if job == "snapshot":
        assert [path.name for path in export_dir.rglob("*.jsonl.gz")] == [result.get()]
    else:
        assert result.get() == {"diagrams": {"diagrams": 0, "drawn": 0, "failed": 0}, "import": ImportJob.DONE}[job]


def test_the_retry_schedule_is_bounded_and_stays_under_the_visibility_timeout(settings):
    from celery.utils.time import get_exponential_backoff_interval

    task = draw_project_diagrams
    waits = [get_exponential_backoff_interval(task.retry_backoff, n, task.retry_backoff_max, task.retry_jitter)
             for n in range(task.max_retries)]
    assert waits == [2, 4, 8, 16, 32, 64, 120, 120]
    assert max(waits) < settings.CELERY_BROKER_TRANSPORT_OPTIONS["visibility_timeout"]


def test_a_second_delivery_of_a_running_import_job_steps_aside(transactional_db, tmp_path, settings):
    settings.STEPMARK_IMPORT_DIR = tmp_path
    job = problems_job(make_project(name="import"), tmp_path)
    upload = tmp_path / "problems.jsonl"
    with psycopg.connect(database_url(), autocommit=True) as first_worker:
        first_worker.execute("SELECT pg_advisory_lock(%s, %s)", [IMPORT_JOB_LOCK, job.pk])
        assert import_jobs.run(job.pk) == ImportJob.QUEUED
        assert upload.exists()
        # unlock before closing: a closed connection's backend lets go of its locks only when
        # it has finished exiting, after the client has moved on (CI stop 37 ran into that)
        first_worker.execute("SELECT pg_advisory_unlock(%s, %s)", [IMPORT_JOB_LOCK, job.pk])
    assert import_jobs.run(job.pk) == ImportJob.DONE, ImportJob.objects.get(pk=job.pk).error


def test_a_redis_connection_the_server_closed_is_replaced_without_an_error(transactional_db, redis_url):
    import redis

    project = make_project(name="redis restart")
    lead = client_for(make_user("lead", "lead"))
    dashboard = reverse("api:project-dashboard", args=[project.pk])
    assert lead.get(dashboard).status_code == 200  # the caches' pools now hold open connections
    admin = redis.Redis.from_url(redis_url)
    db = admin.connection_pool.connection_kwargs.get("db", 0)
    mine = admin.client_id()
    # Close this test database's other connections, as a Redis restart does (other databases' clients are left alone).
    ids = [c["id"] for c in admin.client_list() if int(c["db"]) == db and int(c["id"]) != mine]
    assert ids and all(admin.client_kill_filter(_id=i) == 1 for i in ids)
    assert [lead.get(dashboard).status_code for _ in range(3)] == [200, 200, 200]


def test_a_job_the_queue_could_not_take_is_failed_not_left_queued(transactional_db, settings, tmp_path):
    """An import job and a generation run are made before their job is queued: with the job queue
    away the request answers 503 and the row says why, instead of waiting "queued" for ever."""
    from celery import current_app
    from django.core.files.uploadedfile import SimpleUploadedFile

    from scoring.models import GenerationRun
    from tests.conftest import use_broker

    settings.STEPMARK_IMPORT_DIR = tmp_path / "imports"
    project = make_project(name="queue away")
    make_solution(project)
    researcher = make_user("res", "researcher")
    client = client_for(researcher)
    saved = current_app.conf.broker_url, current_app.conf.broker_transport_options
    use_broker(current_app, f"redis://127.0.0.1:{free_port()}/0", settings.CELERY_BROKER_TRANSPORT_OPTIONS)
    try:
        upload = SimpleUploadedFile("problems.jsonl", b'{"problem": "1+1?", "answer": "2"}\n')
        imported = client.post(reverse("api:project-import", args=[project.pk]),
                               {"file": upload, "format": "problems"}, format="multipart")
        generated = client.post(reverse("scoring:project-generations", args=[project.pk]), {}, format="json")
    finally:
        use_broker(current_app, *saved)
    for answer in (imported, generated):
        assert_503(answer, service="The job queue")
    job = ImportJob.objects.get()
    assert (job.state, job.error.startswith("could not queue the job")) == (ImportJob.FAILED, True)
    assert not list((tmp_path / "imports").iterdir())  # the upload is not kept for a job that never runs
    run = GenerationRun.objects.get()
    assert (run.state, run.error.startswith("could not queue the job")) == (GenerationRun.FAILED, True)
