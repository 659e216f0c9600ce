"""The annotator loop stays cheap and its payload whole: queries per request, the payload after a change.

bench/annotator_loop.py measures the loop under load; these tests pin its cost in statements,
so that a change which adds queries to ``next`` or ``submit`` (or makes them grow with an
annotator's history) fails here instead of quietly costing throughput. The bounds are the
counts of the ordinary case (ordinary work, no gold due, no screening), with token
authentication as a real client uses it.
"""
import pytest
from django.db import connection
from django.db.models.sql.compiler import SQLCompiler, SQLDeleteCompiler, SQLInsertCompiler, SQLUpdateCompiler
from django.urls import reverse
from rest_framework.test import APIClient

from labeling.api.work_serializers import present
from labeling.models import Annotator, Assignment, Step
from labeling.work import queue, submission
from tests.factories import make_project, make_solution, make_user, token_client

pytestmark = pytest.mark.django_db


def reread(assignment):
    return present(Assignment.objects.select_related("project", "solution__problem").get(pk=assignment.pk))


def test_the_payload_carries_what_was_submitted():
    project = make_project(instructions="Rate **every** step.", allow_alternatives=True, allow_human_steps=True)
    make_solution(project, steps=3, alternatives={1: 1})
    task = queue.next_assignment(Annotator.objects.create(), project)
    submission.save_draft(task, [{"position": 0, "value": 1, "flagged": True}, {"position": 1, "value": -1},
                                {"position": 1, "alternative": 1, "value": -1},
                                {"position": 1, "human_text": "my step", "value": 1}])
    submission.submit(task, finish_reason="give_up", note="enough", client_elapsed_ms=1234.5)
    Assignment.objects.filter(pk=task.pk).update(submitted_at=task.submitted_at.replace(microsecond=123456))
    payload = reread(task)
    assert payload["submitted_at"].endswith(".123456Z")  # DRF keeps microseconds
    assert isinstance(payload["total_time"], int) and payload["finish_reason"] == "give_up"
    assert payload["project"]["instructions_html"] == "<p>Rate <strong>every</strong> step.</p>"
    assert [r["flagged"] for r in payload["ratings"]] == [True, False, False, False]
    assert any(a["source"] == Step.HUMAN for s in payload["steps"] for a in s["alternatives"])


def test_the_payload_after_a_save_or_submit_is_what_a_fresh_read_gives():
    """A save or submit answers from the ratings it just wrote, without reading them back."""
    project = make_project(stop_at_first_error=False, allow_alternatives=True, allow_human_steps=True)
    make_solution(project, steps=3, alternatives={1: 1})
    task = queue.next_assignment(Annotator.objects.create(), project)
    saves = [
        [{"position": 0, "value": 1, "flagged": True}, {"position": 1, "value": -1}],
        [{"position": 1, "alternative": 1, "value": -1}, {"position": 1, "human_text": "my step", "value": 0}],
        [{"position": 0, "value": None}, {"position": 1, "human_text": "my better step"}],  # undo, rewrite
        [{"position": 0, "value": 0}, {"position": 1, "human_text": None}],  # withdraw the own step
    ]
    for items in saves:
        saved = submission.save_draft(task, items)
        assert saved.sheet is not None
        assert present(saved) == reread(task)
    done = submission.submit(task, finish_reason="give_up", note="enough",
                            ratings=[{"position": 2, "value": None}, {"position": 0, "flagged": False, "value": 1}])
    payload = present(done)
    assert payload == reread(task)
    assert [(r["position"], r["alternative"], r["value"], r["flagged"]) for r in payload["ratings"]] == [
        (0, 0, 1, False), (1, 0, -1, False), (1, 1, -1, False)]


def test_a_fresh_payload_has_no_ratings():
    project = make_project()
    make_solution(project, steps=2)
    fresh = present(queue.next_assignment(Annotator.objects.create(), project))
    assert fresh["ratings"] == [] and fresh["submitted_at"] is None and len(fresh["steps"]) == 2


# Queries per request --------------------------------------------------------------------


@pytest.fixture
def loop_project():
    project = make_project(overlap=3)
    for _ in range(4):
        make_solution(project, steps=3, alternatives={1: 1})
    return project


def count_queries(django_assert_max_num_queries, limit, call):
    with django_assert_max_num_queries(limit) as captured:
        answer = call()
    return answer, [q["sql"] for q in captured.captured_queries if "SAVEPOINT" not in q["sql"]]


def test_next_and_submit_run_a_fixed_small_number_of_queries(loop_project, django_assert_max_num_queries):
    # token with user and annotator, roles (the permission's and the project's), project; then
    # annotator lock with standing, own work, lapsed leases, generations, the claim with its
    # problem, live count, insert, counter; the steps (a fresh hand-out has no ratings to read)
    next_limit = 12
    client = token_client(make_user("loop", "annotator"))
    # A token's first use is written down (then at most once a minute): counted here is every other request.
    assert client.get(reverse("api:me")).status_code == 200
    take = lambda: client.post(reverse("api:project-next", args=[loop_project.pk]))  # noqa: E731
    answer, next_queries = count_queries(django_assert_max_num_queries, 30, take)
    assert answer.status_code == 201
    task = answer.json()
    assert len(next_queries) <= next_limit, "\n".join(next_queries)

    body = {"finish_reason": "solution", "submit_key": "k1",
            "ratings": [{"position": p, "value": 1} for p in range(3)] + [{"position": 1, "alternative": 1, "value": 0}]}
    submit = lambda: client.post(reverse("api:assignment-submit", args=[task["id"]]), body, format="json")  # noqa: E731
    answer, submit_queries = count_queries(django_assert_max_num_queries, 20, submit)
    assert answer.status_code == 200, answer.content
    # token with user and annotator, roles, the own assignment with project, solution and problem;
    # solution lock, reload, the steps with their ratings; the ratings' upsert, the assignment's
    # update; the response is built from the ratings just written
    assert len(submit_queries) <= 8, "\n".join(submit_queries)
    assert len(answer.json()["ratings"]) == 4

    # The same number for the next task: nothing grows with the annotator's history.
    answer, again = count_queries(django_assert_max_num_queries, 30, take)
    assert answer.status_code == 201 and len(again) <= next_limit


def compiled_statements(monkeypatch):
    """Every statement Django compiles from here on (its SQL's first words), nested ones apart."""
    compiled, depth = [], [0]

    def counting(original):
        def as_sql(self, *args, **kwargs):
            depth[0] += 1
            try:
                result = original(self, *args, **kwargs)
            finally:
                depth[0] -= 1
            if depth[0] == 0:
                sql = result[0][0] if isinstance(result, list) else result[0]
                compiled.append(" ".join(sql.split()[:3]))
            return result
        return as_sql

    for compiler in (SQLCompiler, SQLInsertCompiler, SQLUpdateCompiler, SQLDeleteCompiler):
        monkeypatch.setattr(compiler, "as_sql", counting(compiler.__dict__["as_sql"]))
    return compiled


def test_the_loop_compiles_only_its_writes_once_its_statements_are_prepared(loop_project, monkeypatch):
    """After a first loop, a loop's reads and its counter update run as prepared statements
    (labeling/models/prepared.py): Django compiles only the hand-out's INSERT, the ratings' upsert
    and the submit's UPDATE. A statement added to the loop outside ``prepared`` shows here."""
    client = token_client(make_user("loop", "annotator"))
    body = {"finish_reason": "solution", "ratings": [{"position": p, "value": 1} for p in range(3)]
            + [{"position": 1, "alternative": 1, "value": 0}]}

    def loop():
        task = client.post(reverse("api:project-next", args=[loop_project.pk]))
        assert task.status_code == 201
        done = client.post(reverse("api:assignment-submit", args=[task.json()["id"]]), body, format="json")
        assert done.status_code == 200, done.content

    assert client.get(reverse("api:me")).status_code == 200  # the token's first use is written down
    loop()  # compiles and keeps the statements
    compiled = compiled_statements(monkeypatch)
    loop()
    assert sorted(compiled) == sorted(['INSERT INTO "labeling_assignment"', 'INSERT INTO "labeling_rating"',
                                       'UPDATE "labeling_assignment" SET']), compiled


def test_the_own_work_read_goes_by_annotator_however_old_the_statistics():
    """A project's statistics may predate its work (a new project until the next ANALYZE): the read
    of the annotator's own unfinished work must still go by annotator, not walk every assignment of
    the project, a few more with each hand-out."""
    others = Annotator.objects.bulk_create([Annotator() for _ in range(60)])

    def passes(project):
        solutions = [make_solution(project, steps=1) for _ in range(4)]
        Assignment.objects.bulk_create([
            Assignment(project=project, solution=solution, annotator=annotator, state=Assignment.SUBMITTED,
                       finish_reason="solution") for solution in solutions for annotator in others])

    passes(make_project())
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE labeling_assignment")  # the new project has no work yet
    project = make_project()
    passes(project)
    make_solution(project, steps=2)
    me = Annotator.objects.create()
    task = queue.next_assignment(me, project)
    reads = []

    def explain(execute, sql, params, many, context):
        if sql.startswith('SELECT') and 'FROM "labeling_assignment" INNER JOIN "labeling_solution"' in sql:
            context["cursor"].execute(f"EXPLAIN (ANALYZE, FORMAT JSON) {sql}", params)
            reads.append(context["cursor"].fetchone()[0][0]["Plan"])
        return execute(sql, params, many, context)

    with connection.execute_wrapper(explain):
        assert queue.next_assignment(me, project) == task  # resumed
    assert len(reads) == 1
    scans = [node for node in _nodes(reads[0]) if node.get("Relation Name") == "labeling_assignment"]
    assert scans and all(n["Actual Rows"] + n.get("Rows Removed by Filter", 0) <= 2 for n in scans), scans


def _nodes(plan):
    yield plan
    for child in plan.get("Plans", []):
        yield from _nodes(child)


def session_client(user):
    client = APIClient()
    client.force_login(user)
    return client


@pytest.mark.parametrize("login", [token_client, session_client], ids=["token", "session"])
def test_nobody_reaches_another_persons_assignment(loop_project, login):
    """The views' first reads (project, own assignment) refuse the same under either authentication."""
    mine, theirs = login(make_user("mine", "annotator")), login(make_user("theirs", "annotator"))
    assert mine.post(reverse("api:project-next", args=[loop_project.pk + 999])).status_code == 404
    task = mine.post(reverse("api:project-next", args=[loop_project.pk])).json()
    body = {"finish_reason": "solution", "ratings": [{"position": p, "value": 1} for p in range(3)]
            + [{"position": 1, "alternative": 1, "value": 0}]}
    for method, name, data in [("get", "api:assignment-detail", None), ("put", "api:assignment-draft", body),
                               ("post", "api:assignment-submit", body)]:
        url = reverse(name, args=[task["id"]])
        assert getattr(theirs, method)(url, data, format="json").status_code == 404, name
        assert getattr(mine, method)(reverse(name, args=[task["id"] + 999]), data, format="json").status_code == 404
    assert Assignment.objects.get(pk=task["id"]).state == Assignment.ACTIVE
    assert not Assignment.objects.get(pk=task["id"]).ratings.exists()
    # The owner's own reads see the whole assignment.
    own = mine.get(reverse("api:assignment-detail", args=[task["id"]])).json()
    assert own == task | {"lease_expires_at": own["lease_expires_at"]}
    assert mine.post(reverse("api:assignment-submit", args=[task["id"]]), body, format="json").status_code == 200


def test_a_revoked_role_applies_at_the_next_request(loop_project):
    from labeling.access.roles import ANNOTATOR, grant_role, revoke_role

    user = make_user("revoked", "annotator", projects=[loop_project])
    client = token_client(user)
    url = reverse("api:project-next", args=[loop_project.pk])
    taken = client.post(url)
    assert taken.status_code == 201
    elsewhere = make_project()
    grant_role(user, ANNOTATOR, elsewhere)
    revoke_role(user, ANNOTATOR, loop_project)  # what a lead's "remove" does
    assert client.post(url).status_code == 404  # no member: the project does not exist for them
    assert client.get(reverse("api:assignment-detail", args=[taken.json()["id"]])).status_code == 404
    revoke_role(user, ANNOTATOR, elsewhere)
    assert client.post(url).status_code == 403  # no annotator role anywhere: refused before any lookup


def test_a_role_granted_without_an_annotator_row_gets_one_at_the_first_task(loop_project):
    from labeling.models import Membership

    user = make_user("by-hand")
    Membership.objects.create(user=user, project=loop_project, role="annotator")  # as the admin would, without grant_role
    assert not Annotator.objects.filter(user=user).exists()
    answer = token_client(user).post(reverse("api:project-next", args=[loop_project.pk]))
    assert answer.status_code == 201
    assert Assignment.objects.get(pk=answer.json()["id"]).annotator == Annotator.objects.get(user=user)


def test_the_loop_answers_json_and_takes_json(loop_project):
    client = token_client(make_user("picky", "annotator"))
    # A client that accepts only HTML gets no work it cannot read (DRF's negotiation, before the view).
    assert client.post(reverse("api:project-next", args=[loop_project.pk]), HTTP_ACCEPT="text/html").status_code == 406
    assert not Assignment.objects.exists()
    answer = client.post(reverse("api:project-next", args=[loop_project.pk]))
    assert answer.status_code == 201 and answer["Content-Type"] == "application/json"
    task = answer.json()
    url = reverse("api:assignment-submit", args=[task["id"]])
    answer = client.post(url, {"finish_reason": "give_up"}, format="json")
    assert answer.status_code == 400 and answer.json()["field"] == "note"
    # The body's parser is still DRF's choice: a form-encoded submit is refused as such.
    answer = client.post(url, "finish_reason=give_up", content_type="application/x-www-form-urlencoded")
    assert answer.status_code == 415
