"""Throughput figures, aggregated in PostgreSQL, on passes with known times."""
import datetime

import pytest

from labeling.models import Assignment
from labeling.stats import throughput
from tests.factories import T0, make_annotator, make_project, make_solution, rated_pass

pytestmark = pytest.mark.django_db
minutes = lambda n: datetime.timedelta(minutes=n)  # noqa: E731


@pytest.fixture
def worked():
    """Ann: three passes on day one (10:00, 10:05, 12:00) and one on day two; Bob: one pass."""
    project = make_project(overlap=2)
    ann, bob = make_annotator("ann"), make_annotator("bob")
    solutions = [make_solution(project, steps=4, alternatives={0: 1}) for _ in range(5)]
    rated_pass(solutions[0], ann, [1, 1, -1], at=T0 + minutes(60), seconds=60)  # 3 steps, 20 s each
    # 4 ratings: three steps and one alternative; a shown-but-unrated step does not count.
    rated_pass(solutions[1], ann, [1, 0, 1, None], at=T0 + minutes(65), seconds=120, alternatives={(0, 1): -1})
    rated_pass(solutions[2], ann, [-1], at=T0 + minutes(180), seconds=30)  # 1 step, 30 s
    rated_pass(solutions[3], ann, [1, 1, 1, 1], at=T0 + datetime.timedelta(days=1), seconds=40)
    rated_pass(solutions[4], bob, [1, 1], at=T0 + minutes(61), seconds=50)
    # Work in progress is not throughput.
    rated_pass(solutions[4], make_annotator("cy"), [1], state=Assignment.ACTIVE)
    return project, ann, bob


def test_per_annotator_and_per_day(worked):
    project, ann, bob = worked
    figures = throughput.annotator_throughput(project)
    assert set(figures) == {ann.pk, bob.pk}
    day_one, day_two = figures[ann.pk]["days"]
    assert day_one["day"] == "2025-03-03" and day_two["day"] == "2025-03-04"
    assert (day_one["passes"], day_one["steps"]) == (3, 8)
    assert day_one["median_step_seconds"] == 30.0  # of 20, 30, 30
    assert day_one["median_pass_seconds"] == 60.0  # of 30, 60, 120
    # 10:00 opens a session (its own 60 s), 10:05 is 5 min later (300 s), 12:00 opens another (30 s).
    assert day_one["active_hours"] == pytest.approx(390 / 3600, abs=1e-3)
    assert (day_two["passes"], day_two["steps"], day_two["active_hours"]) == (1, 4, pytest.approx(40 / 3600, abs=1e-3))
    whole = figures[ann.pk]
    assert (whole["passes"], whole["steps"]) == (4, 12)
    assert whole["median_step_seconds"] == 25.0  # of 10, 20, 30, 30: the mean of the middle two
    assert whole["median_pass_seconds"] == 50.0  # of 30, 40, 60, 120
    assert figures[bob.pk]["median_step_seconds"] == 25.0


def test_window_filters_passes(worked):
    project, ann, bob = worked
    figures = throughput.annotator_throughput(project, since=T0 + datetime.timedelta(hours=12))
    assert set(figures) == {ann.pk}
    assert figures[ann.pk]["passes"] == 1
    until = throughput.annotator_throughput(project, until=T0 + minutes(62))
    assert {pk: f["passes"] for pk, f in until.items()} == {ann.pk: 1, bob.pk: 1}


def test_daily_totals_sum_the_annotators(worked):
    project, _, _ = worked
    days = throughput.daily_totals(throughput.annotator_throughput(project))
    assert [(d["day"], d["passes"], d["steps"], d["annotators"]) for d in days] == [
        ("2025-03-03", 4, 10, 2), ("2025-03-04", 1, 4, 1)]


def test_queue_depth_counts_open_slots_per_generation():
    project = make_project(overlap=2)
    people = [make_annotator(f"p{i}") for i in range(3)]
    full, half, empty = (make_solution(project, generation=0) for _ in range(3))
    later = make_solution(project, generation=1)
    make_solution(project, generation=1, is_gold=True)  # gold is served to everyone: no slots
    rated_pass(full, people[0], [1])
    rated_pass(full, people[1], [1])
    rated_pass(half, people[0], [1], state=Assignment.ACTIVE)
    rated_pass(empty, people[2], [1], state=Assignment.EXPIRED)  # an expired lease frees the slot
    rated_pass(later, people[0], [1])
    depth = {row["generation"]: row for row in throughput.queue_depth(project)}
    assert depth[0] == {"generation": 0, "solutions": 3, "open": 2, "remaining_slots": 3}
    assert depth[1] == {"generation": 1, "solutions": 1, "open": 1, "remaining_slots": 1}


def test_eta_of_the_current_generation():
    project = make_project(overlap=2)
    a, b, idle = make_annotator("a"), make_annotator("b"), make_annotator("idle")
    now = T0 + datetime.timedelta(days=10)
    old = make_solution(project, generation=0)
    rated_pass(old, idle, [1], at=now - datetime.timedelta(days=3), seconds=300)
    current = [make_solution(project, generation=1) for _ in range(3)]
    rated_pass(current[0], a, [1, 1], at=now - datetime.timedelta(hours=2), seconds=100)
    rated_pass(current[0], b, [1, 1], at=now - datetime.timedelta(hours=1), seconds=200)
    figures = throughput.project_throughput(project, now=now)
    eta = figures["eta"]
    assert eta["generation"] == 1 and eta["remaining_slots"] == 4
    assert eta["median_pass_seconds"] == 200.0  # of 100, 200, 300 over the last 7 days
    assert eta["active_annotators"] == 2  # idle submitted 3 days ago
    assert eta["seconds"] == 4 * 200 / 2
    assert figures["done_today"] == {"passes": 2, "steps": 4}


def test_eta_is_none_when_nobody_is_working():
    project = make_project()
    make_solution(project, generation=0)
    eta = throughput.project_throughput(project)["eta"]
    assert eta["remaining_slots"] == 1 and eta["seconds"] is None
    assert eta["reason"] == "nobody submitted a timed pass in the last 7 days"


def test_no_eta_from_a_median_pass_of_zero_seconds():
    """Issue #30: a median of 0 s per pass (imported or unmeasured passes) promised "65 slots ≈ 8 s left"."""
    project = make_project(overlap=2)
    a, b = make_annotator("a"), make_annotator("b")
    now = T0 + datetime.timedelta(days=10)
    current = [make_solution(project, generation=1) for _ in range(3)]
    rated_pass(current[0], a, [1, 1], at=now - datetime.timedelta(hours=2), seconds=0)
    rated_pass(current[0], b, [1, 1], at=now - datetime.timedelta(hours=1), seconds=throughput.MIN_PACE_SECONDS - 1)
    rated_pass(current[1], b, [1, 1], at=now - datetime.timedelta(hours=1), seconds=0)
    eta = throughput.project_throughput(project, now=now)["eta"]
    assert eta["remaining_slots"] == 3 and eta["median_pass_seconds"] == 0.0 and eta["active_annotators"] == 2
    assert eta["seconds"] is None
    assert eta["reason"] == f"the median pass of the last 7 days took 0.0 s, under {throughput.MIN_PACE_SECONDS} s: " \
                            "too short to estimate from"
    rated_pass(current[1], a, [1, 1], at=now - datetime.timedelta(hours=1), seconds=60)
    rated_pass(current[2], a, [1, 1], at=now - datetime.timedelta(hours=1), seconds=60)
    rated_pass(current[2], b, [1, 1], at=now - datetime.timedelta(hours=1), seconds=60)
    eta = throughput.project_throughput(project, now=now)["eta"]  # a real pace now: 60 s
    assert (eta["seconds"], eta["reason"]) == (0, None)
