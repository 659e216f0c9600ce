"""A retrain through a real Celery worker, trained by two processes (gloo) that the worker launches
with accelerate, fine-tuning the champion: the checkpoint, its lineage and its progress."""
import json
from pathlib import Path

import pytest
from django.urls import reverse

from labeling.imports import run_import
from scoring import jobs, runs
from scoring.models import Checkpoint
from tests.e2e.conftest import gsm8k_slice, wait_for
from tests.factories import client_for, make_project, make_user
from tests.scoring.test_jobs import rate_everything

pytestmark = pytest.mark.e2e


def test_a_worker_retrains_on_two_processes_from_the_champion(worker, tiny_base, data_dir, tmp_path):
    project = make_project(
        name="e2e two processes", overlap=2, generation_size=8, selection_wrong_share=0.75, base_model_path=str(tiny_base),
        retrain_threshold=0, retrain_metric="log_loss",
        train_settings={"processes": 2, "start_from": "champion", "max_steps": 4, "epochs": 20, "log_every": 1, "max_batch": 2,
                        "val_fraction": 0.2, "eval_every": 2},
    )
    run_import("gsm8k-examples", gsm8k_slice(data_dir, tmp_path / "pool.jsonl", 12), project)
    first = jobs.run_generation(runs.start_generation(project).pk)  # here: the champion, and a generation to rate
    rate_everything(project)
    researcher = client_for(make_user("researcher", "researcher"))
    assert researcher.post(reverse("scoring:project-retrain", args=[project.pk]), {"force": True}, format="json").status_code == 202
    new = wait_for(lambda: Checkpoint.objects.filter(project=project, status__in=["champion", "rejected", "failed"])
                   .exclude(pk=first.checkpoint_id).first(), timeout=300, every=0.5, message="the retrained checkpoint")
    assert new.status in ("champion", "rejected"), new.reason
    assert new.metrics["train"]["processes"] == 2 and new.metrics["train"]["steps"] == 4
    assert new.metrics["start_from"] == "champion" and new.metrics["init_checkpoint_id"] == first.checkpoint_id
    meta = json.loads((Path(new.path) / "stepmark_prm.json").read_text())
    # The directory keeps the checkpoint's own figures; the gate's judgment against the champion
    # (``metrics.gate``) is the project's, on the row.
    assert meta["lineage"]["init_checkpoint"] == first.checkpoint.path
    assert meta["metrics"] == {key: value for key, value in new.metrics.items() if key != "gate"}
    assert new.progress["phase"] == "saving"
    log = [json.loads(line) for line in Path(new.metrics["training_log"]).read_text().splitlines()]
    assert log[0]["event"] == "start" and log[0]["processes"] == 2
    assert [e["step"] for e in log if e["event"] == "train"] == [1, 2, 3, 4]
    assert not Path(new.path + ".trainer").exists()
