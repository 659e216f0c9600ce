"""Ratings live in PostgreSQL: a Redis outage must not fail a submit or lose what it stored."""
import pytest
from django.test import override_settings

from labeling.models import Assignment, Rating
from labeling.work import queue, submission
from tests.factories import later, make_annotator, make_project, make_solution

UNREACHABLE_STATS_CACHE = {
    "default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"},
    # Port 1 on loopback: nothing listens, every call fails at once with a connection error.
    "stats": {"BACKEND": "django_redis.cache.RedisCache", "LOCATION": "redis://127.0.0.1:1/0"},
}


@pytest.mark.django_db(transaction=True)
def test_a_submit_is_stored_and_succeeds_while_the_stats_cache_is_down():
    project = make_project()
    make_solution(project, steps=2)
    assignment = queue.next_assignment(make_annotator(), project, now=later(0))
    with override_settings(CACHES=UNREACHABLE_STATS_CACHE):
        submission.submit(
            assignment,
            finish_reason="solution",
            ratings=[{"position": 0, "value": 1}, {"position": 1, "value": 0}],
            submit_key="k1",
            now=later(5),
        )
    stored = Assignment.objects.get(pk=assignment.pk)
    assert stored.state == Assignment.SUBMITTED
    assert sorted(Rating.objects.filter(assignment=stored).values_list("value", flat=True)) == [0, 1]
