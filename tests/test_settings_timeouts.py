"""Every client of a backing service gives up in bounded time (annotator/settings.py).

A PostgreSQL or a broker that accepts connections and never answers (packets dropped, a
half-open connection; here a listener nobody serves) must cost a request or a job the client's
timeout, not hold it for ever. The Redis caches' timeout is tested through the API in
tests/labeling/test_outages.py. The thread's join is a guard against a hang, not a measurement.
"""
import os
import subprocess
import sys
import threading

from django.db import OperationalError, connection, connections
from kombu.exceptions import OperationalError as BrokerError

from labeling import outages
from tests.conftest import ROOT, silent_port, use_broker


def error_of(call, *, guard):
    """The exception ``call()`` raises in a thread, which must end within ``guard`` seconds."""
    raised = []

    def run():
        try:
            call()
        except Exception as exc:  # noqa: BLE001 (the test looks at it)
            raised.append(exc)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(timeout=guard)
    assert not thread.is_alive(), "the client hung on a server that never answers"
    assert raised, "the call succeeded against a server that never answers"
    return raised[0]


def test_a_database_that_never_answers_fails_the_connection_after_connect_timeout(db, settings):
    options = settings.DATABASES["default"]["OPTIONS"]
    assert options["keepalives"] == 1 and options["tcp_user_timeout"] == 20_000  # a dead link found in ~20 s
    with silent_port() as port:
        silent = type(connections["default"])({**connection.settings_dict, "PORT": str(port)}, alias="silent")
        error = error_of(silent.ensure_connection, guard=options["connect_timeout"] * 3 + 10)
    assert isinstance(error, OperationalError), error
    assert outages.service_of(error) == outages.DATABASE


def test_a_broker_that_never_answers_refuses_the_job_after_its_socket_timeout(settings):
    from annotator.celery import app
    from labeling.tasks import export_all_snapshots

    saved = app.conf.broker_url, app.conf.broker_transport_options
    with silent_port() as port:
        use_broker(app, f"redis://127.0.0.1:{port}/0", settings.CELERY_BROKER_TRANSPORT_OPTIONS)
        try:
            error = error_of(export_all_snapshots.delay, guard=settings.REDIS_TIMEOUT * 4 + 10)
        finally:
            use_broker(app, *saved)
    assert isinstance(error, BrokerError), error
    assert outages.service_of(error) == outages.BROKER


def test_a_dead_workers_job_is_delivered_again_after_ten_minutes_by_default():
    env = {k: v for k, v in os.environ.items() if k != "STEPMARK_VISIBILITY_TIMEOUT"}
    env.update(STEPMARK_BROKER="redis", DJANGO_SETTINGS_MODULE="annotator.settings")
    shown = subprocess.run([sys.executable, "-c", "from django.conf import settings;"
                            " print(settings.CELERY_BROKER_TRANSPORT_OPTIONS['visibility_timeout'])"],
                           cwd=ROOT, env=env, capture_output=True, text=True, check=True)
    assert shown.stdout.strip() == "600.0"  # kombu's default was an hour
