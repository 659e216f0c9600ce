"""tests/flush.py: a transactional test's database is emptied even while a request still holds rows."""
import threading
import time

import psycopg
import pytest
from django.contrib.auth.models import User
from django.db import connection

from labeling.models import Annotator, Project, Rating, Step
from labeling.work import queue
from tests import flush
from tests.factories import make_project, make_solution, make_user


@pytest.mark.django_db(transaction=True)
def test_emptying_waits_out_a_deadlock_with_a_request_still_running(monkeypatch):
    # As a live server's last request can: it holds a row of one table, and then wants a row of
    # another that the emptying has already deleted. PostgreSQL ends one transaction of the two.
    user, project = make_user("ann", "annotator"), make_project()
    tables = connection.introspection.django_table_names(only_existing=True, include_views=False)
    (first, first_pk), (later, later_pk) = sorted(
        [("auth_user", user.pk), ("labeling_project", project.pk)], key=lambda t: tables.index(t[0]))
    attempts = []
    real = flush._delete_all
    monkeypatch.setattr(flush, "_delete_all", lambda *args: attempts.append(1) or real(*args))

    request = _connect()
    failures = []
    try:
        request.execute(f"UPDATE {later} SET id = id WHERE id = %s", [later_pk])  # holds the later row
        emptying = threading.Thread(target=lambda: _run(flush.empty_tables, connection.alias, failures))
        emptying.start()
        time.sleep(0.3)  # the emptying has deleted the first table's rows and waits for the later row
        # Waiting since before this statement, the emptying is the one that finds the deadlock
        # (after PostgreSQL's deadlock_timeout) and is ended: it tries again once this commits.
        request.execute(f"UPDATE {first} SET id = id WHERE id = %s", [first_pk])
        request.commit()
        emptying.join(30)
    finally:
        request.close()
    assert not emptying.is_alive() and failures == []
    assert len(attempts) == 2
    assert not User.objects.exists() and not Project.objects.exists()


@pytest.mark.django_db(transaction=True)
def test_emptying_tries_again_when_a_request_commits_a_rating_of_a_step_it_deletes(monkeypatch):
    # As a draft save still running in the live server can: its rating is committed after the
    # ratings were emptied, and refers to a step the emptying deletes after them; the foreign key,
    # checked when the emptying commits, refuses.
    project = make_project()
    step = Step.objects.get(solution=make_solution(project, steps=1))
    task = queue.next_assignment(Annotator.objects.create(), project)
    listed = connection.introspection.django_table_names
    monkeypatch.setattr(connection.introspection, "django_table_names",  # the ratings first
                        lambda *args, **kwargs: sorted(listed(*args, **kwargs), key=lambda t: t != "labeling_rating"))
    attempts = []
    real = flush._delete_all
    monkeypatch.setattr(flush, "_delete_all", lambda *args: attempts.append(1) or real(*args))
    request = _connect()

    def save_lands(execute, sql, params, many, context):
        done = execute(sql, params, many, context)
        if sql == 'DELETE FROM "labeling_rating"' and len(attempts) == 1:
            request.execute("INSERT INTO labeling_rating (assignment_id, step_id, value, chosen, rated_at)"
                            " VALUES (%s, %s, 1, false, now())", [task.pk, step.pk])
            request.commit()
        return done

    try:
        with connection.execute_wrapper(save_lands):
            flush.empty_tables(connection)
    finally:
        request.close()
    assert len(attempts) == 2
    assert not Rating.objects.exists() and not Step.objects.exists()


def _connect():
    settings = connection.settings_dict
    return psycopg.connect(host=settings["HOST"], port=settings["PORT"] or 5432, user=settings["USER"],
                           dbname=settings["NAME"])


def _run(empty_tables, alias, failures):
    from django.db import connections

    try:
        empty_tables(connections[alias])
    except Exception as error:  # reported by the test, which runs in another thread
        failures.append(error)
    finally:
        connections.close_all()
