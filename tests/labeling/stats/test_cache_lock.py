"""The dashboard's compute lock: one compute of a project at a time, and a lock that outlives no one."""
import threading

import pytest
import redis

from labeling.stats import cache as stats_cache
from tests.factories import make_project

pytestmark = pytest.mark.django_db


def test_two_computes_of_a_project_at_once_run_once(monkeypatch):
    project = make_project()
    started, finish, calls, answers = threading.Event(), threading.Event(), [], []

    def slow():
        calls.append(1)
        started.set()
        assert finish.wait(30)  # a guard against a hang, not a measurement
        return {"n": len(calls)}

    first = threading.Thread(target=lambda: answers.append(stats_cache.get_dashboard(project, {}, slow)))
    first.start()
    try:
        assert started.wait(30)
        monkeypatch.setattr(stats_cache, "WAIT_SECONDS", 0)  # nothing cached yet: refused at once, not after 10 s
        with pytest.raises(stats_cache.Refused) as refused:
            stats_cache.get_dashboard(project, {}, slow, refresh=True)
        assert refused.value.status == 503
    finally:
        finish.set()
        first.join(30)
    assert len(calls) == 1 and answers[0][1]["from_cache"] is False
    body, meta = stats_cache.get_dashboard(project, {}, slow)  # the first's figures, and the lock is free again
    assert body == b'{"n":1}' and meta["from_cache"] and len(calls) == 1
    assert stats_cache.get_dashboard(project, {}, slow, refresh=True)[0] == b'{"n":2}'


def test_the_lock_expires_by_itself(redis_url):
    lock = stats_cache.compute_lock(make_project())
    assert lock.acquire(blocking=False)
    try:
        assert 0 < redis.Redis.from_url(redis_url).pttl(lock.name) <= stats_cache.LOCK_TIMEOUT * 1000
    finally:
        lock.release()


def test_a_compute_whose_lock_expired_leaves_the_next_holders_lock_alone(redis_url):
    project = make_project()
    admin, taken = redis.Redis.from_url(redis_url), []

    def outlasting_its_lock():
        lock = stats_cache.compute_lock(project)
        admin.delete(lock.name)  # LOCK_TIMEOUT passed: the lock expired under this compute ...
        taken.append(lock)
        assert lock.acquire(blocking=False)  # ... and another process took it
        return {}

    stats_cache.get_dashboard(project, {}, outlasting_its_lock)
    assert not stats_cache.compute_lock(project).acquire(blocking=False)  # still the other's
    taken[0].release()


def test_the_file_cache_locks_in_memory(settings, tmp_path):
    settings.CACHES = {**settings.CACHES, "stats": {
        "BACKEND": "django.core.cache.backends.filebased.FileBasedCache", "LOCATION": str(tmp_path)}}
    project = make_project()
    lock = stats_cache.compute_lock(project)
    assert lock.acquire(blocking=False)
    assert not stats_cache.compute_lock(project).acquire(blocking=False)
    other = stats_cache.compute_lock(make_project())
    assert other.acquire(blocking=False)  # each project its own
    other.release()
    lock.release()
    assert stats_cache.get_dashboard(project, {}, lambda: {"n": 1})[0] == b'{"n":1}'
