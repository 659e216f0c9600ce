"""The researcher's generation and checkpoint API: who may call it, what it answers, what it queues.

Enqueued tasks go to the real Redis broker (the tests' broker database, ``E2E_REDIS_DB``), where
the tests read them back; nothing consumes them here: the end-to-end tests run the worker.
"""
import base64
import json

import pytest
from django.urls import reverse

from labeling.models import Project
from scoring.models import Checkpoint, GenerationRun
from tests.factories import client_for, make_user, make_project


@pytest.fixture(autouse=True)
def broker(settings, redis_url):
    # Tasks published by the views land in a Redis database of their own, flushed after.
    import redis

    from annotator.celery import app

    from tests.conftest import broker_db_url, use_broker

    url = broker_db_url(redis_url)
    saved = app.conf.broker_url, app.conf.broker_transport_options
    redis.Redis.from_url(url).flushdb()
    use_broker(app, url)
    yield url
    redis.Redis.from_url(url).flushdb()
    use_broker(app, *saved)


def queued(broker, queue="gpu"):
    """The messages waiting in ``queue`` on the Redis broker, oldest first: ``(task name, id, args, kwargs)``.

    Kombu keeps a queue as a Redis list of JSON envelopes, the task's arguments base64-encoded
    in the body (Celery's message protocol 2: ``[args, kwargs, embed]``).
    """
    import redis

    found = []
    for raw in reversed(redis.Redis.from_url(broker).lrange(queue, 0, -1)):  # LPUSH: newest first
        envelope = json.loads(raw)
        args, kwargs, _ = json.loads(base64.b64decode(envelope["body"]))
        found.append((envelope["headers"]["task"], envelope["headers"]["id"], args, kwargs))
    return found


@pytest.fixture
def people(db, project):
    return {"researcher": client_for(make_user("res", "researcher")), "lead": client_for(make_user("lead", "lead")),
            "annotator": client_for(make_user("ann", "annotator"))}


@pytest.fixture
def project(db):
    return make_project(name="api loop", generation_size=5)


def test_start_lists_and_reads_a_run(people, project, broker):
    client = people["researcher"]
    answer = client.post(reverse("scoring:project-generations", args=[project.pk]), {"size": 3}, format="json")
    assert answer.status_code == 202
    body = answer.json()
    assert body["state"] == "queued" and body["size"] == 3 and body["task_id"]
    run = GenerationRun.objects.get(pk=body["id"])
    assert run.task_id == body["task_id"]
    assert queued(broker) == [("scoring.tasks.run_generation", run.task_id, [run.pk], {})]
    again = client.post(reverse("scoring:project-generations", args=[project.pk]), {}, format="json")
    assert again.status_code == 409 and again.json()["run"]["id"] == run.pk
    assert len(queued(broker)) == 1  # the refused second run queued nothing
    listed = client.get(reverse("scoring:project-generations", args=[project.pk])).json()
    assert listed["count"] == 1 and [r["id"] for r in listed["results"]] == [run.pk]
    GenerationRun.objects.filter(pk=run.pk).update(state="scoring", scored=5, total=20)
    detail = client.get(reverse("scoring:generation-run-detail", args=[run.pk])).json()
    assert detail["progress"] == 0.25 and detail["generation"] is None


def test_a_run_shows_the_strategy_it_was_started_with(people, project, broker):
    mix = {"convincing_wrong": 0.5, "uncertainty": 0.5}
    type(project).objects.filter(pk=project.pk).update(selection_strategy="mixture", selection_mix=mix)
    client = people["researcher"]
    body = client.post(reverse("scoring:project-generations", args=[project.pk]), {}, format="json").json()
    assert (body["strategy"], body["selection_mix"]) == ("mixture", mix)
    type(project).objects.filter(pk=project.pk).update(selection_strategy="random", selection_mix={})
    listed = client.get(reverse("scoring:project-generations", args=[project.pk])).json()["results"]
    assert (listed[0]["strategy"], listed[0]["selection_mix"]) == ("mixture", mix)


def test_cancel_a_run_once(people, project):
    run = GenerationRun.objects.create(project=project, size=3)
    url = reverse("scoring:generation-run-cancel", args=[run.pk])
    assert people["researcher"].post(url).json()["state"] == "cancelled"
    refused = people["researcher"].post(url)
    assert refused.status_code == 409 and "cancelled" in refused.json()["detail"]


def test_checkpoints_show_status_reason_metrics_and_lineage(people, project):
    first = Checkpoint.objects.create(project=project, status="champion", is_champion=True, reason="Initial PRM.")
    second = Checkpoint.objects.create(project=project, parent=first, status="rejected", reason="does not beat",
                                       metrics={"heldout": {"step_auroc": 0.6}}, generation=1, passes=40)
    rows = people["researcher"].get(reverse("scoring:project-checkpoints", args=[project.pk])).json()
    assert [r["id"] for r in rows] == [second.pk, first.pk]
    assert rows[0]["parent"] == first.pk and rows[0]["reason"] == "does not beat"
    assert rows[0]["metrics"]["heldout"]["step_auroc"] == 0.6 and rows[1]["is_champion"]


def test_retrain_is_queued_with_force(people, project, broker):
    url = reverse("scoring:project-retrain", args=[project.pk])
    forced = people["researcher"].post(url, {"force": True}, format="json")
    assert forced.status_code == 202 and forced.json()["force"] is True
    plain = people["researcher"].post(url, {}, format="json")
    assert plain.status_code == 202 and plain.json()["force"] is False
    assert queued(broker) == [("scoring.tasks.retrain_if_due", forced.json()["task_id"], [project.pk], {"force": True}),
                              ("scoring.tasks.retrain_if_due", plain.json()["task_id"], [project.pk], {"force": False})]


@pytest.mark.parametrize("who", ["lead", "annotator"])
def test_only_researchers(people, project, who, broker):
    client = people[who]
    assert client.post(reverse("scoring:project-generations", args=[project.pk]), {}, format="json").status_code == 403
    assert client.get(reverse("scoring:project-checkpoints", args=[project.pk])).status_code == 403
    assert client.post(reverse("scoring:project-retrain", args=[project.pk]), {}, format="json").status_code == 403
    assert not GenerationRun.objects.exists() and queued(broker) == []


def test_unknown_ids_are_404_for_researchers(people):
    assert people["researcher"].get(reverse("scoring:generation-run-detail", args=[999999])).status_code == 404
    assert people["researcher"].post(reverse("scoring:project-generations", args=[999999]), {},
                                     format="json").status_code == 404


def test_a_scoring_run_gives_its_rate_and_time_left(people, project):
    from datetime import timedelta

    from django.utils import timezone

    # An interrupted pass had scored 100; this one scored 300 more in (at least) 100 s.
    run = GenerationRun.objects.create(project=project, size=5, state=GenerationRun.SCORING, total=1000, scored=400,
                                       scored_at_start=100, scoring_started_at=timezone.now() - timedelta(seconds=100))
    body = people["researcher"].get(reverse("scoring:generation-run-detail", args=[run.pk])).json()
    assert body["state"] == "scoring" and body["progress"] == 0.4
    assert 2.9 < body["rate"] <= 3.0  # 300 in a little over 100 s
    assert body["eta_s"] == pytest.approx(600 / body["rate"])
    GenerationRun.objects.filter(pk=run.pk).update(state=GenerationRun.SELECTING)
    body = people["researcher"].get(reverse("scoring:generation-run-detail", args=[run.pk])).json()
    assert body["state"] == "selecting" and body["rate"] is None and body["eta_s"] is None
    queued = GenerationRun.objects.create(project=project, size=5)
    body = people["researcher"].get(reverse("scoring:generation-run-detail", args=[queued.pk])).json()
    assert body["state"] == "queued" and body["rate"] is None and body["eta_s"] is None


def test_a_run_in_shards_gives_its_progress_summed_over_them(people, project):
    from datetime import timedelta

    from django.utils import timezone

    from scoring.models import ScoringShard

    run = GenerationRun.objects.create(project=project, size=5, state=GenerationRun.SCORING, total=1, scored=1,
                                       scoring_started_at=timezone.now() - timedelta(seconds=10))
    for index, (state, scored) in enumerate([("done", 100), ("claimed", 40), ("claimed", 10), ("pending", 0)]):
        ScoringShard.objects.create(run=run, index=index, first_id=index * 100 + 1, last_id=index * 100 + 100,
                                    size=100, scored=scored, state=state)
    body = people["researcher"].get(reverse("scoring:generation-run-detail", args=[run.pk])).json()
    assert body["shards"] == {"shards": 4, "done": 1, "claimed": 2, "scored": 150, "total": 400}
    assert body["progress"] == 150 / 400 and body["rate"] > 0  # the shards' sum, not the run row's own counts
    assert body["eta_s"] == pytest.approx(250 / body["rate"])


def test_a_checkpoint_shows_its_retrain_progress_and_its_report_beside_the_champions(people, project):
    from tests.scoring.sample_report import sample_report

    champion = Checkpoint.objects.create(project=project, status=Checkpoint.CHAMPION, is_champion=True)
    training = Checkpoint.objects.create(project=project, parent=champion, status=Checkpoint.TRAINING, progress={
        "phase": "training", "step": 40, "total_steps": 100, "loss": 0.41, "eta_s": 90.0})
    judged = Checkpoint.objects.create(project=project, parent=champion, status=Checkpoint.REJECTED,
                                       reason="step_auroc 0.7 does not beat", report=sample_report(champion.pk))
    rows = {c["id"]: c for c in people["researcher"].get(reverse("scoring:project-checkpoints", args=[project.pk])).json()}
    assert rows[training.pk]["progress"]["phase"] == "training" and rows[training.pk]["progress"]["step"] == 40
    assert rows[judged.pk]["has_report"] is True and rows[champion.pk]["has_report"] is False
    assert "report" not in rows[judged.pk]  # the list stays small; the plots' data comes one checkpoint at a time

    body = people["researcher"].get(reverse("scoring:checkpoint-report", args=[judged.pk])).json()
    assert body["checkpoint"]["id"] == judged.pk and body["checkpoint"]["reason"] == "step_auroc 0.7 does not beat"
    assert body["champion"]["id"] == champion.pk and body["champion"]["is_champion"] is True
    report = body["report"]
    for side in ("challenger", "champion"):
        assert set(report[side]) == {"steps", "best-of-n", "processbench"}
        assert report[side]["steps"]["roc"][0] == [0.0, 0.0] and report[side]["steps"]["roc"][-1] == [1.0, 1.0]
        assert len(report[side]["steps"]["calibration"]["bins"]) == 10
        assert report[side]["best-of-n"]["ns"] == [1, 2, 4]
    assert report["challenger"]["steps"]["auroc"] > report["champion"]["steps"]["auroc"]
    # A checkpoint without a report (the initial one) answers an empty report, not an error.
    empty = people["researcher"].get(reverse("scoring:checkpoint-report", args=[champion.pk])).json()
    assert empty["report"] == {} and empty["champion"] is None


@pytest.mark.parametrize("who, code", [("lead", 403), ("annotator", 403)])
def test_only_researchers_read_a_report(people, project, who, code):
    checkpoint = Checkpoint.objects.create(project=project, status=Checkpoint.REJECTED, report={"metric": "log_loss"})
    assert people[who].get(reverse("scoring:checkpoint-report", args=[checkpoint.pk])).status_code == code
    from labeling.access.roles import RESEARCHER, grant_role

    outsider = make_user("outsider", projects=[])
    grant_role(outsider, RESEARCHER, make_project(name="elsewhere"))  # a researcher, of another project
    outsider = client_for(outsider)
    assert outsider.get(reverse("scoring:checkpoint-report", args=[checkpoint.pk])).status_code == 404
    assert people["researcher"].get(reverse("scoring:checkpoint-report", args=[999999])).status_code == 404


def test_the_runs_list_is_paged_like_every_list(people, project):
    ids = [GenerationRun.objects.create(project=project, size=1, state="done").pk for _ in range(3)]
    url = reverse("scoring:project-generations", args=[project.pk])
    first = people["researcher"].get(url, {"limit": 2}).json()
    assert first["count"] == 3 and [r["id"] for r in first["results"]] == ids[:0:-1] and first["next"]
    rest = people["researcher"].get(first["next"]).json()
    assert [r["id"] for r in rest["results"]] == ids[:1] and rest["next"] is None
    refused = people["researcher"].get(url, {"limit": 0})
    assert refused.status_code == 400 and refused.json()["field"] == "limit"
