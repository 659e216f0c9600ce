"""Dashboard figures against the agreement module on the same ratings, and the cache's freshness."""
import datetime
import time

import numpy as np
import pytest

from labeling.models import Assignment, GoldScore
from labeling.quality import screening
from labeling.stats import agreement, dashboard
from labeling.stats import cache as stats_cache
from labeling.stats.agreement_data import submitted_ratings
from labeling.work import queue, submission
from tests.factories import T0, make_annotator, make_project, make_solution, rated_pass

pytestmark = pytest.mark.django_db
day = datetime.timedelta(days=1)


@pytest.fixture
def rated():
    """Four annotators over six solutions on two days; dora rates everything +1."""
    project = make_project(overlap=3)
    ann, bob, cy, dora = (make_annotator(n) for n in ("ann", "bob", "cy", "dora"))
    plans = [  # (generation, submit day, {annotator: values})
        (0, 0, {ann: [1, 1, -1], bob: [1, 1, -1], dora: [1, 1, 1, 1]}),
        (0, 0, {ann: [1, -1], bob: [1, 0, -1], cy: [1, -1]}),
        (0, 0, {bob: [0, 1, 1, 1], cy: [1, 1, 1, 1], dora: [1, 1, 1, 1]}),
        (1, 1, {ann: [-1], cy: [-1], dora: [1, 1, 1, 1]}),
        (1, 1, {ann: [1, 1, 1, -1], bob: [1, 1, -1], cy: [1, 1, 1, -1]}),
        (1, 1, {bob: [1, 0, 0, 1], cy: [1, 0, 1, 1]}),
    ]
    for generation, offset, passes in plans:
        solution = make_solution(project, steps=4, generation=generation, alternatives={1: 1})
        for k, (person, values) in enumerate(passes.items()):
            rated_pass(solution, person, values, at=T0 + offset * day + k * datetime.timedelta(minutes=3),
                       alternatives={(1, 1): 0} if len(values) > 1 else None)
    # Left out of agreement: an unfinished pass and a pass without an annotator.
    rated_pass(make_solution(project, generation=1), ann, [1, -1], state=Assignment.ACTIVE)
    rated_pass(make_solution(project, generation=1), None, [1, 1])
    return project, (ann, bob, cy, dora)


def sorted_rows(columns):
    return sorted(zip(*(np.asarray(c).tolist() for c in columns)))


def test_load_columns_reads_the_agreement_loaders_rows(rated):
    project, _ = rated
    for filters in ({}, {"generation": 1}, {"since": T0 + day / 2}, {"until": T0 + day / 2}):
        columns = dashboard.load_columns(project, **filters)
        expected = sorted(submitted_ratings(project, **filters))
        assert expected and sorted_rows(columns[name] for name in dashboard.COLUMNS[:4]) == expected
        # Off PostgreSQL the same columns come through the QuerySet itself.
        portable = dashboard._load_portable(project, **{"generation": None, "since": None, "until": None, **filters})
        assert sorted_rows(portable.values()) == sorted_rows(columns.values())
    columns = dashboard.load_columns(project)
    assert set(columns["day"].tolist()) == {(T0.date() - datetime.date(1970, 1, 1)).days + d for d in (0, 1)}
    assert set(columns["generation"].tolist()) == {0, 1}


def test_figures_match_the_agreement_module(rated):
    project, (ann, bob, cy, dora) = rated
    figures = dashboard.build_dashboard(project, replicates=100)
    table = agreement.rating_table(*zip(*submitted_ratings(project)), domain=dashboard.DOMAIN)  # not load_columns
    assert figures["ratings"] == len(table.rater)
    alpha = figures["agreement"]["alpha"]
    assert alpha["estimate"] == pytest.approx(agreement.krippendorff_alpha(table), abs=1e-4)
    assert alpha["low"] <= alpha["estimate"] <= alpha["high"]
    fe = agreement.first_error_agreement(table)
    assert figures["agreement"]["first_error"]["pairs"] == fe.pairs
    rows = {row["id"]: row for row in figures["annotators"]}
    expected = agreement.per_annotator(table, replicates=100)
    for pk, row in rows.items():
        majority = expected[pk].majority
        assert row["kappa_majority"] == (None if majority is None else pytest.approx(majority.estimate, abs=1e-4))
        if majority is not None:
            assert row["kappa_majority_low"] == pytest.approx(majority.low, abs=1e-4)
            assert row["kappa_majority_high"] == pytest.approx(majority.high, abs=1e-4)
        assert row["majority_items"] == expected[pk].majority_items
        assert row["kappa"] == pytest.approx(expected[pk].mean_kappa, abs=1e-4)
    # Leave-one-out: dora (+1 everywhere) is the one apart from the others' majority.
    assert rows[dora.pk]["kappa_majority"] < min(rows[p.pk]["kappa_majority"] for p in (ann, bob, cy))
    pairs = agreement.cohen_kappa_matrix(table)
    matrix = figures["kappa_matrix"]
    i, j = matrix["annotators"].index(ann.pk), matrix["annotators"].index(bob.pk)
    assert matrix["kappa"][i][j] == matrix["kappa"][j][i] == pytest.approx(pairs[ann.pk][bob.pk].kappa, abs=1e-4)
    assert matrix["shared"][i][j] == pairs[ann.pk][bob.pk].shared
    # Someone who rates everything +1 stands out.
    assert rows[dora.pk]["distribution"] == {"-1": 0.0, "0": 0.0, "1": 1.0, "ratings": 12}
    assert rows[ann.pk]["distribution"]["-1"] > 0
    assert rows[ann.pk]["passes"] == 4  # throughput joined in


def test_agreement_over_time_and_per_generation_partition_items(rated):
    project, _ = rated
    figures = dashboard.build_dashboard(project, replicates=0)
    over_time = figures["agreement"]["over_time"]
    assert [p["period"] for p in over_time] == ["2025-03-03", "2025-03-04"]
    assert sum(p["ratings"] for p in over_time) == figures["ratings"]
    first_day = dashboard.build_dashboard(project, until=T0 + day / 2, replicates=0)
    assert over_time[0]["alpha"]["estimate"] == first_day["agreement"]["alpha"]["estimate"]
    by_generation = figures["agreement"]["by_generation"]
    assert [g["generation"] for g in by_generation] == [0, 1]
    gen1 = dashboard.build_dashboard(project, generation=1, replicates=0)
    assert by_generation[1]["alpha"]["estimate"] == gen1["agreement"]["alpha"]["estimate"]
    weekly = dashboard.build_dashboard(project, bucket="week", replicates=0)["agreement"]["over_time"]
    assert [p["period"] for p in weekly] == ["2025-03-03"]  # a Monday


def test_a_solution_belongs_to_the_day_its_last_pass_came():
    project = make_project(overlap=2)
    ann, bob = make_annotator("ann"), make_annotator("bob")
    solution = make_solution(project, steps=2)
    rated_pass(solution, ann, [1, -1], at=T0)
    rated_pass(solution, bob, [1, 1], at=T0 + day)
    over_time = dashboard.build_dashboard(project, replicates=0)["agreement"]["over_time"]
    assert [(p["period"], p["ratings"]) for p in over_time] == [("2025-03-04", 4)]


def test_undefined_agreement_says_why():
    project = make_project()
    rated_pass(make_solution(project, steps=2), make_annotator("solo"), [1, 1])
    figures = dashboard.build_dashboard(project)
    assert figures["agreement"]["alpha"]["estimate"] is None
    # A sentence for the lead, not "Krippendorff's alpha is undefined: no item to resample" (issue #30).
    assert figures["agreement"]["alpha"]["reason"] == dashboard.NO_OVERLAP
    assert "overlap of at least 2" in dashboard.NO_OVERLAP and "resample" not in dashboard.NO_OVERLAP
    assert figures["agreement"]["first_error"]["share"] is None
    assert figures["annotators"][0]["kappa_majority"] is None
    assert "majority" in figures["annotators"][0]["kappa_majority_reason"]


def test_empty_project_has_a_dashboard():
    figures = dashboard.build_dashboard(make_project())
    assert figures["ratings"] == 0 and figures["annotators"] == [] and figures["kappa_matrix"]["annotators"] == []


def test_gold_scores_are_the_rolling_gold_score(rated):
    from labeling.quality import gold
    project, (ann, bob, cy, dora) = rated
    project.gold_window = 2
    project.save()
    for k, (person, share) in enumerate([(ann, 1.0), (ann, 0.5), (ann, 0.0), (bob, 0.75), (dora, 0.0)]):
        assignment = Assignment.objects.filter(annotator=person).order_by("pk")[k if person == ann else 0]
        GoldScore.objects.create(assignment=assignment, annotator=person, project=project,
                                 submitted_at=T0 + k * day, exact_share=share, within_one_share=1.0,
                                 first_error_same=True, steps_compared=2)
    scores = dashboard.gold_scores(project)
    for person in (ann, bob, dora):
        assert scores[person.pk]["score"] == pytest.approx(gold.rolling_gold_score(person, project))
    assert scores[ann.pk] == {"score": 0.25, "passes": 2}  # the latest two: 0.5 and 0.0
    assert cy.pk not in scores


def test_statuses_come_from_the_project_standing(rated):
    project, (ann, bob, cy, dora) = rated
    screening.pause(dora, project, reason="rolling gold score 0.00 < 0.70")
    assert dashboard.statuses(project) == {dora.pk: {"status": "paused", "status_reason": "rolling gold score 0.00 < 0.70"}}
    live = dashboard.statuses(project, [ann.pk, dora.pk])
    assert live[ann.pk]["status"] == "active" and live[dora.pk]["status"] == "paused"


def test_drill_down_puts_gold_and_the_others_beside_each_rating(rated):
    from labeling.models import GoldRating, Rating

    project, (ann, bob, cy, dora) = rated
    first = Assignment.objects.filter(annotator=ann).order_by("submitted_at").first()
    step = Rating.objects.filter(assignment=first, step__position=2, step__alternative=0).get().step
    GoldRating.objects.create(step=step, value=-1)
    answer = dashboard.annotator_passes(project, ann, limit=10)
    assert answer["count"] == 4
    oldest = answer["passes"][-1]
    assert oldest["id"] == first.pk
    cell = next(s for s in oldest["steps"] if (s["position"], s["alternative"]) == (2, 0))
    assert cell["value"] == -1 and cell["gold"] == -1
    assert sorted((o["label"], o["value"]) for o in cell["others"]) == [("bob", -1), ("dora", 1)]
    assert [s["alternative"] for s in oldest["steps"]].count(1) == 1  # the alternative rated too
    assert dashboard.annotator_passes(project, ann, limit=1, offset=3)["passes"][0]["id"] == first.pk


# The cache -------------------------------------------------------------------------------


def counting(project):
    calls = []

    def compute():
        calls.append(1)
        return dashboard.build_dashboard(project, replicates=0)

    return compute, calls


def submit_one(project, person, django_capture_on_commit_callbacks):
    solution = make_solution(project, steps=2)
    assignment = Assignment.objects.create(project=project, solution=solution, annotator=person,
                                           handed_out_at=T0, lease_expires_at=T0 + 10 * day)
    queue.recount_live_assignments(project)
    with django_capture_on_commit_callbacks(execute=True):
        submission.submit(assignment, finish_reason="solution", now=T0 + day,
                         ratings=[{"position": 0, "value": 1}, {"position": 1, "value": 0}])
    return assignment


def test_a_submit_makes_the_next_read_reflect_it(rated, django_capture_on_commit_callbacks):
    project, (ann, *_) = rated
    compute, calls = counting(project)
    body, meta = stats_cache.get_dashboard(project, {}, compute)
    again, meta = stats_cache.get_dashboard(project, {}, compute)
    assert again == body and meta["from_cache"] and len(calls) == 1
    before = dashboard.build_dashboard(project, replicates=0)["ratings"]
    submit_one(project, ann, django_capture_on_commit_callbacks)
    body, meta = stats_cache.get_dashboard(project, {}, compute)
    assert not meta["from_cache"] and len(calls) == 2
    import json

    assert json.loads(body)["ratings"] == before + 2


def test_the_bump_waits_for_the_commit(rated):
    project, (ann, *_) = rated
    version = stats_cache.version(project)
    rated_pass(make_solution(project), ann, [1])  # inside the test's transaction: not committed
    assert stats_cache.version(project) == version


def test_filters_and_projects_have_their_own_entries(rated):
    project, _ = rated
    other = make_project()
    compute, calls = counting(project)
    stats_cache.get_dashboard(project, {}, compute)
    stats_cache.get_dashboard(project, {"generation": 1}, compute)
    stats_cache.get_dashboard(other, {}, compute)
    assert len(calls) == 3
    stats_cache.bump(other)
    stats_cache.get_dashboard(project, {}, compute)
    assert len(calls) == 3


def test_a_slow_dashboard_is_served_stale_for_a_while_then_recomputed(rated, settings):
    settings.STEPMARK_DASHBOARD_MAX_STALE = 60
    project, _ = rated
    calls = []

    def slow():
        calls.append(1)
        time.sleep(stats_cache.FAST_COMPUTE + 0.05)  # slower than a page load may be
        return {"n": len(calls)}

    now = time.time()
    stats_cache.get_dashboard(project, {}, slow, now=now)
    stats_cache.bump(project)
    body, meta = stats_cache.get_dashboard(project, {}, slow, now=now + 1)
    assert body == b'{"n":1}' and meta["stale"] and meta["behind"] == 1 and len(calls) == 1
    body, meta = stats_cache.get_dashboard(project, {}, slow, now=now + 61)
    assert body == b'{"n":2}' and not meta["stale"]
    body, meta = stats_cache.get_dashboard(project, {}, slow, refresh=True, now=now + 62)
    assert body == b'{"n":3}'


@pytest.mark.django_db(transaction=True)
def test_the_aggregates_on_a_second_connection_give_the_same_figures():
    from django.db import connection, transaction

    project = make_project(overlap=2)
    ann, bob = make_annotator("ann"), make_annotator("bob")
    for k in range(3):
        solution = make_solution(project, steps=3, generation=0)
        rated_pass(solution, ann, [1, 1, -1], at=T0 + k * day)
        rated_pass(solution, bob, [1, 0, -1] if k else [1, 1, 1], at=T0 + k * day)
    now = T0 + 5 * day
    assert not connection.in_atomic_block  # so the aggregates run on a thread of their own
    beside = dashboard.build_dashboard(project, replicates=0, now=now)
    with transaction.atomic():
        inline = dashboard.build_dashboard(project, replicates=0, now=now)
    assert beside == inline and beside["annotators"][0]["passes"] == 3


def test_the_lead_pages_need_the_lead_role(client, rated):
    from django.contrib.auth import get_user_model

    from labeling.access.roles import grant_role

    project, (ann, *_) = rated
    pages = [f"/projects/{project.pk}/dashboard/", f"/projects/{project.pk}/dashboard/annotators/{ann.pk}/"]
    for url in pages:
        assert client.get(url).status_code == 302  # to the login page
    worker = get_user_model().objects.create_user("worker")
    grant_role(worker, "annotator", project)
    client.force_login(worker)
    assert [client.get(url).status_code for url in pages] == [403, 403]
    assert b"dashboard-link" not in client.get("/").content
    lead = get_user_model().objects.create_user("boss")
    grant_role(lead, "lead", project)
    client.force_login(lead)
    answers = [client.get(url) for url in pages]
    assert [a.status_code for a in answers] == [200, 200]
    assert f"/api/projects/{project.pk}/annotators/{ann.pk}/resume/".encode() in answers[1].content
    assert f'href="/projects/{project.pk}/dashboard/"'.encode() in client.get("/").content


@pytest.mark.parametrize("backend", ["redis", "files"])
def test_a_bump_starts_a_missing_counter_above_the_clock_then_counts_up(backend, settings, tmp_path):
    if backend == "files":
        settings.CACHES = {**settings.CACHES, "stats": {
            "BACKEND": "django.core.cache.backends.filebased.FileBasedCache", "LOCATION": str(tmp_path)}}
    from django.core.cache import caches
    from django_redis.cache import RedisCache

    assert isinstance(caches["stats"], RedisCache) == (backend == "redis")
    project = make_project()
    before = time.time_ns()
    first = stats_cache.bump(project)  # no counter yet
    assert first >= before and stats_cache.version(project) == first
    assert stats_cache.bump(project) == first + 1 and stats_cache.bump(project) == first + 2
    assert stats_cache.version(project) == first + 2
