"""What one request may cost (issue #19, item 2).

Found: an annotator's draft of 85,000 copies of one rating (2.4 MB) took 1.7 s, and twelve at
once stalled every other annotator; a lead's ``?refresh=1`` or new ``since=`` recomputed the
dashboard each time, twelve at once, each new filter stored for a day; the schema was rebuilt
on every request for anyone signed in; a body over the limit got Django's bare HTML 400; and
``[`` x 1000 was a 500 on every JSON endpoint, the anonymous token endpoint included. Here, in
process against the real PostgreSQL and Redis. (Import lines and malformed input:
test_malformed_input.py; the cost of a 100 MB single-line upload: ``python -m bench.long_line``.)
"""
import json
import time

import pytest
import redis
from django.core.cache import caches
from django.test import Client
from rest_framework.test import APIClient

from labeling.models import Assignment, Rating
from labeling.stats import cache as stats_cache
from tests.factories import make_project, make_solution, make_user, token_client

pytestmark = pytest.mark.django_db


def handed(client, project):
    answer = client.post(f"/api/projects/{project.pk}/next/")
    assert answer.status_code == 201, answer.content
    return answer.json()["id"]


def send(client, kind, assignment_id, ratings):
    """A draft save or a submit carrying ``ratings``."""
    if kind == "draft":
        return client.patch(f"/api/assignments/{assignment_id}/draft/", {"ratings": ratings}, format="json")
    return client.post(f"/api/assignments/{assignment_id}/submit/", {"finish_reason": "solution", "ratings": ratings},
                       format="json")


@pytest.fixture
def ann():
    return token_client(make_user("ann", "annotator"))


# The ratings of one request ----------------------------------------------------------------


@pytest.mark.parametrize("kind", ["draft", "submit"])
def test_a_step_named_twice_is_refused_naming_the_second_item(ann, kind):
    project = make_project()
    make_solution(project, steps=3)
    assignment = handed(ann, project)
    ratings = [{"position": 0, "value": 1}, {"position": 1, "value": 1}, {"position": 0, "value": -1}]
    answer = send(ann, kind, assignment, ratings)
    assert answer.status_code == 400
    assert answer.json() == {"detail": "ratings[0] already names step 1, alternative 0: name each step once.",
                             "field": "ratings[2]"}
    assert not Rating.objects.filter(assignment_id=assignment).exists()
    assert Assignment.objects.get(pk=assignment).state == Assignment.ACTIVE


@pytest.mark.parametrize("kind", ["draft", "submit"])
def test_85000_copies_of_one_rating_are_refused_whole_before_any_item_is_read(ann, kind):
    project = make_project()
    make_solution(project, steps=3)
    assignment = handed(ann, project)
    # The first item is malformed: refused by the list's length, the answer names the list, not it.
    ratings = [{"position": "first"}] + [{"position": 0, "value": 1}] * 85_000
    answer = send(ann, kind, assignment, ratings)
    assert answer.status_code == 400
    assert answer.json() == {"detail": "ratings holds 85,001 items, but this solution has 3 steps you may rate: "
                                       "name each step once.", "field": "ratings"}
    assert not Rating.objects.filter(assignment_id=assignment).exists()


def test_the_bound_counts_every_alternative_and_an_own_step_per_position(ann):
    # Phase 1 with alternatives and own steps: 2 positions, 40 alternatives at position 0, so
    # 42 steps and 2 own steps at most. 44 items pass the size check (and are then judged by
    # the rules, item by item); 45 are refused whole.
    project = make_project(stop_at_first_error=False, allow_alternatives=True, allow_human_steps=True)
    make_solution(project, steps=2, alternatives={0: 40})
    assignment = handed(ann, project)
    most = [{"position": 0, "alternative": a, "value": -1} for a in range(41)] + [{"position": 1, "value": 1}]
    most += [{"position": p, "text": f"mine {p}", "value": 1} for p in range(2)]
    judged = send(ann, "draft", assignment, most).json()
    assert judged == {"detail": "Write your own step 2 only after rating every completion there -1.",
                      "field": "ratings[43]"}
    refused = send(ann, "draft", assignment, most + [{"position": 1, "value": 0}]).json()
    assert refused == {"detail": "ratings holds 45 items, but this solution has 44 steps you may rate: "
                                 "name each step once.", "field": "ratings"}


# Bodies ---------------------------------------------------------------------------------------


def test_a_json_body_over_the_limit_gets_a_json_413(ann, settings):
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 10_000
    project = make_project()
    make_solution(project, steps=2)
    assignment = handed(ann, project)
    answer = ann.post(f"/api/assignments/{assignment}/submit/",
                      {"finish_reason": "give_up", "note": "x" * 20_000}, format="json")
    assert answer.status_code == 413
    assert answer["Content-Type"] == "application/json"
    detail = answer.json()["detail"]
    assert detail.startswith("The request body is 20,") and detail.endswith("at most 10,000 are taken here.")


def test_a_form_body_over_the_limit_gets_a_json_413_not_djangos_html_400(db, settings):
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 10_000
    answer = Client().post("/api/auth/token/", {"username": "ann", "password": "x" * 20_000})
    assert answer.status_code == 413
    assert answer["Content-Type"] == "application/json"
    assert answer.json()["field"] is None and "at most 10,000" in answer.json()["detail"]


def test_an_upload_over_its_limit_gets_a_json_413_before_it_is_read(db, settings):
    settings.STEPMARK_MAX_UPLOAD_BYTES = 50_000
    researcher = token_client(make_user("res", "researcher"))
    project = make_project()
    big = b'{"problem": "p", "solution": "s"}\n' * 2000
    from django.core.files.uploadedfile import SimpleUploadedFile

    answer = researcher.post(f"/api/projects/{project.pk}/imports/",
                             {"format": "problems", "file": SimpleUploadedFile("big.jsonl", big)}, format="multipart")
    assert answer.status_code == 413
    assert "at most 50,000" in answer.json()["detail"]


# JSON nesting ---------------------------------------------------------------------------------

DEEP = {
    "1000 unclosed brackets": "[" * 1000,  # the finding: 2 KB
    "33 levels, valid": '{"ratings": ' + "[" * 32 + "]" * 32 + "}",
}


def json_endpoints(annotator, project, assignment):
    """(client, method, path) of JSON endpoints of each kind: anonymous, annotator's loop, lead's."""
    lead = APIClient()
    lead.force_authenticate(make_user("lead", "lead"))
    return [
        (APIClient(), "post", "/api/auth/token/"),
        (annotator, "patch", f"/api/assignments/{assignment}/draft/"),
        (annotator, "post", f"/api/assignments/{assignment}/submit/"),
        (lead, "patch", f"/api/projects/{project.pk}/quality-settings/"),
    ]


@pytest.mark.parametrize("body", DEEP.values(), ids=DEEP.keys())
def test_deep_json_is_a_400_on_every_json_endpoint(ann, body):
    project = make_project()
    make_solution(project, steps=2)
    assignment = handed(ann, project)
    for client, method, path in json_endpoints(ann, project, assignment):
        answer = getattr(client, method)(path, body, content_type="application/json")
        assert answer.status_code == 400, path
        assert answer.json() == {"detail": "The JSON body is nested deeper than 32 levels.", "field": None}, path


def test_json_as_deep_as_the_limit_reaches_the_view(ann):
    project = make_project()
    make_solution(project, steps=2)
    assignment = handed(ann, project)
    # 32 levels, with more openers than 32 (so the middleware parses it): the view's own refusal.
    body = '{"ratings": [' + "[" * 30 + "]" * 30 + '], "other": [{}, {}, {}]}'
    answer = ann.patch(f"/api/assignments/{assignment}/draft/", body, content_type="application/json")
    assert answer.status_code == 400 and answer.json()["field"] == "ratings[0]"


# The dashboard --------------------------------------------------------------------------------


@pytest.fixture
def lead_and_project(db):
    lead = APIClient()
    lead.force_authenticate(make_user("lead", "lead"))
    return lead, make_project()


def dashboard(client, project, **query):
    return client.get(f"/api/projects/{project.pk}/dashboard/", query)


def test_a_refresh_while_the_project_is_computed_serves_the_cached_figures(lead_and_project):
    lead, project = lead_and_project
    assert dashboard(lead, project).json()["cache"]["from_cache"] is False
    held = stats_cache.compute_lock(project)  # another process computes this project now
    assert held.acquire(blocking=False)
    try:
        answers = [dashboard(lead, project, refresh=1) for _ in range(3)]
    finally:
        held.release()
    assert [a.status_code for a in answers] == [200] * 3
    assert all(a.json()["cache"]["from_cache"] for a in answers)
    assert dashboard(lead, project, refresh=1).json()["cache"]["from_cache"] is False  # lock released


def test_with_nothing_cached_a_read_waits_for_the_running_compute_then_503(lead_and_project, monkeypatch):
    lead, project = lead_and_project
    monkeypatch.setattr(stats_cache, "WAIT_SECONDS", 0.3)
    held = stats_cache.compute_lock(project)
    assert held.acquire(blocking=False)
    try:
        answer = dashboard(lead, project, since="2025-01-01T00:00:00Z")
    finally:
        held.release()
    assert answer.status_code == 503 and answer["Retry-After"]
    assert answer.json()["detail"] == "The dashboard is being computed; try again shortly."


def test_each_person_may_start_only_so_many_computes_a_minute(lead_and_project, settings):
    settings.STEPMARK_DASHBOARD_COMPUTES_PER_MINUTE = 2
    lead, project = lead_and_project
    days = [f"2025-01-0{d}T00:00:00Z" for d in range(1, 5)]
    answers = [dashboard(lead, project, since=day) for day in days[:3]]
    assert [a.status_code for a in answers] == [200, 200, 429]
    assert 1 <= int(answers[2]["Retry-After"]) <= 60
    assert answers[2].json()["detail"].startswith("You started 2 dashboard computes this minute, the most allowed")
    assert dashboard(lead, project, since=days[0]).status_code == 200  # cached: free
    assert dashboard(lead, project, since=days[1], refresh=1).json()["cache"]["from_cache"] is True  # over: cached
    colleague = APIClient()
    colleague.force_authenticate(make_user("lead2", "lead"))
    assert dashboard(colleague, project, since=days[3]).status_code == 200


def test_filtered_entries_are_few_small_and_short_lived(lead_and_project, monkeypatch, redis_url):
    lead, project = lead_and_project
    monkeypatch.setattr(stats_cache, "FILTERED_ENTRIES", 2)
    cache = caches["stats"]
    filters = [{"since": f"2025-01-0{d}T00:00:00Z"} for d in range(1, 4)]
    dashboard(lead, project)
    for query in filters:
        assert dashboard(lead, project, **query).status_code == 200
    kept = [query for query in [{}, *filters] if cache.get(stats_cache._entry_key(project, parsed(query)))]
    assert kept == [{}, *filters[1:]]  # the oldest filter went
    ttl = redis.Redis.from_url(redis_url).ttl(cache.make_key(stats_cache._entry_key(project, parsed(filters[2]))))
    assert 0 < ttl <= stats_cache.FILTERED_TIMEOUT
    monkeypatch.setattr(stats_cache, "FILTERED_BYTES", 10)  # every body is larger: served, not kept
    query = {"since": "2025-02-01T00:00:00Z"}
    assert dashboard(lead, project, **query).status_code == 200
    assert cache.get(stats_cache._entry_key(project, parsed(query))) is None


def parsed(query):
    """The filter as the API hands it to the cache (labeling/api/dashboard.py's serializer)."""
    from labeling.api.dashboard import DashboardQuerySerializer

    form = DashboardQuerySerializer(data=query)
    assert form.is_valid()
    return {k: v for k, v in form.validated_data.items() if k != "refresh"}


# The schema -----------------------------------------------------------------------------------


def test_the_schema_is_built_once_per_process_and_format(db):
    from labeling.api.schema import SchemaView

    SchemaView.rendered.clear()
    client = APIClient()
    client.force_authenticate(make_user("ann", "annotator"))
    first = client.get("/api/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json")
    assert first.status_code == 200 and "/api/auth/token/" in json.loads(first.content)["paths"]
    assert len(SchemaView.rendered) == 1
    (renderer, (content_type, _)), = SchemaView.rendered.items()
    SchemaView.rendered[renderer] = (content_type, b'{"kept": true}')  # what the process holds is what it serves
    again = client.get("/api/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json")
    assert again.content == b'{"kept": true}'
    SchemaView.rendered.clear()
