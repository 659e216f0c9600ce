"""A worker killed with SIGKILL mid-task: Redis redelivers the task and the job finishes whole.

The task is acknowledged late, so the killed worker never acknowledged it; after the visibility
timeout (a few seconds here) Redis hands it to the restarted worker. The jobs are idempotent:
scores already written are kept, selection happens once, a checkpoint is trained again from
the start and written atomically, and ratings are never touched.
"""
import json
from pathlib import Path

import pytest

from labeling.data import open_text
from labeling.imports import run_import
from labeling.models import Generation, Rating, Solution
from scoring import runs, tasks
from scoring.models import Checkpoint, GenerationRun, SolutionScore
from tests.e2e.conftest import gsm8k_slice, wait_for
from tests.factories import make_project

pytestmark = [pytest.mark.e2e, pytest.mark.slow]


def test_killed_while_scoring_the_redelivered_run_completes_without_duplicates(worker_factory, tiny_base,
                                                                               data_dir, tmp_path):
    project = make_project(name="fault scoring", generation_size=20, base_model_path=str(tiny_base))
    run_import("gsm8k-examples", gsm8k_slice(data_dir, tmp_path / "pool.jsonl", 250), project)
    pool = runs.candidate_pool(project).count()
    first = worker_factory(STEPMARK_SCORING_BATCH=4).start()
    run = runs.start_generation(project)
    tasks.run_generation.delay(run.pk)

    def midway():
        state, scored, total = GenerationRun.objects.filter(pk=run.pk).values_list("state", "scored", "total").get()
        return state == "scoring" and 0 < scored < total

    wait_for(midway, timeout=300, every=0.02, message="scoring to be under way")
    first.kill()
    run.refresh_from_db()
    assert run.state == "scoring" and 0 < run.scored < run.total == pool
    written = SolutionScore.objects.filter(checkpoint=run.checkpoint).count()
    assert 0 < written < pool

    worker_factory(STEPMARK_SCORING_BATCH=64).start()
    wait_for(lambda: GenerationRun.objects.filter(pk=run.pk, state="done").exists(), timeout=300, every=0.3,
             message="the redelivered run")
    run.refresh_from_db()
    assert run.scored == run.total == pool and run.selected == 20 and run.error == ""
    scores = SolutionScore.objects.filter(checkpoint=run.checkpoint)
    assert scores.count() == scores.values("solution").distinct().count() == pool
    assert Generation.objects.filter(project=project).count() == 1
    ranks = list(Solution.objects.filter(generation=run.generation).order_by("selection_rank")
                 .values_list("selection_rank", flat=True))
    assert ranks == list(range(1, 21))
    # A second delivery of the same task (at-least-once) changes nothing.
    tasks.run_generation.delay(run.pk)
    tasks.retrain_all_due.delay()  # a task queued behind it: when it has run, the first one has too
    wait_for(lambda: not _queued(), timeout=60, every=0.3, message="the queue to drain")
    assert Generation.objects.filter(project=project).count() == 1
    assert Solution.objects.filter(project=project, generation__isnull=False).count() == 20


def _queued():
    import redis

    from annotator.celery import app

    client = redis.Redis.from_url(app.conf.broker_url)
    return client.llen("gpu") + client.llen("default") + client.hlen("unacked")


def test_killed_while_training_the_redelivered_retrain_completes_atomically(worker_factory, tiny_base,
                                                                           data_dir, tmp_path):
    project = make_project(name="fault training", base_model_path=str(tiny_base), retrain_metric="log_loss",
                                     train_settings={"epochs": 3, "max_batch": 4, "log_every": 1})
    records = tmp_path / "prm800k.jsonl"
    with open_text(data_dir / "prm800k" / "phase1_train.reconstructed.jsonl.gz") as source:
        records.write_text("".join(line for _, line in zip(range(20), source)), encoding="utf-8")
    run_import("prm800k", records, project)
    ratings = list(Rating.objects.order_by("pk").values_list("pk", "assignment_id", "step_id", "value", "flagged"))
    assert ratings

    first = worker_factory().start()
    tasks.retrain_if_due.delay(project.pk, force=True)

    def training_under_way():
        checkpoint = Checkpoint.objects.filter(project=project, status="training").first()
        log = checkpoint and checkpoint.metrics.get("training_log")
        if not log or not Path(log).is_file():
            return None
        events = [json.loads(line) for line in Path(log).read_text().splitlines() if line.strip()]
        return checkpoint if any(e["event"] == "train" for e in events) else None

    checkpoint = wait_for(training_under_way, timeout=300, every=0.05, message="a training progress line")
    first.kill()
    checkpoint.refresh_from_db()
    assert checkpoint.status == "training"
    path = Path(checkpoint.path)
    assert not path.exists() or (path / "stepmark_prm.json").is_file()  # never half a checkpoint

    worker_factory().start()
    wait_for(lambda: Checkpoint.objects.filter(pk=checkpoint.pk).exclude(status="training").exists(),
             timeout=300, every=0.5, message="the redelivered retrain")
    checkpoint.refresh_from_db()
    assert checkpoint.status in ("champion", "rejected") and checkpoint.reason
    assert (path / "stepmark_prm.json").is_file() and (path / "prm_head.safetensors").is_file()
    assert not [p for p in path.parent.iterdir() if p.name.startswith(f".{path.name}.")]  # no staging leftovers
    # One initial champion and this checkpoint: the redelivery resumed it, it did not start another.
    assert Checkpoint.objects.filter(project=project).count() == 2
    assert Checkpoint.objects.filter(project=project, is_champion=True).count() == 1
    assert list(Rating.objects.order_by("pk").values_list("pk", "assignment_id", "step_id", "value", "flagged")) == ratings
