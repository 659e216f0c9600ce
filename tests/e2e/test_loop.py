"""The whole loop with a real Celery worker: select, rate over the API, retrain, select again, export.

GSM8K's real model solutions are the candidate pool; the PRM is a tiny random BERT so that
the loop runs in about a minute on a CPU.
"""
import gzip
import json
from pathlib import Path

import pytest
from django.conf import settings
from django.urls import reverse

from labeling.exports import snapshots
from labeling.imports import run_import
from labeling.models import Assignment, Solution
from scoring.models import Checkpoint, GenerationRun, SolutionScore
from tests.e2e.conftest import gsm8k_slice, wait_for
from tests.factories import client_for, make_user, make_project

pytestmark = pytest.mark.e2e

SIZE = 10


def run_generation(researcher, project):
    started = researcher.post(reverse("scoring:project-generations", args=[project.pk]), {}, format="json")
    assert started.status_code == 202, started.content
    url = reverse("scoring:generation-run-detail", args=[started.json()["id"]])
    body = wait_for(lambda: (b := researcher.get(url).json())["state"] in ("done", "failed", "cancelled") and b,
                    timeout=300, every=0.3, message="the generation run")
    assert body["state"] == "done", body["error"]
    return GenerationRun.objects.get(pk=body["id"])


def rate_through_the_api(annotator, project, passes):
    """Rate ``passes`` hand-outs: every step +1, but the last step of a wrong answer -1."""
    for _ in range(passes):
        task = annotator.post(reverse("api:project-next", args=[project.pk]))
        assert task.status_code == 201, task.content
        task = task.json()
        solution = Solution.objects.get(assignments__pk=task["id"])
        last = len(task["steps"]) - 1
        wrong = solution.is_correct is False
        ratings = [{"position": p, "value": -1 if wrong and p == last else 1} for p in range(last + 1)]
        done = annotator.post(reverse("api:assignment-submit", args=[task["id"]]),
                              {"finish_reason": "found_error" if wrong else "solution", "ratings": ratings},
                              format="json")
        assert done.status_code == 200, done.content


def test_the_loop_closes(worker, tiny_base, data_dir, tmp_path):
    project = make_project(
        name="e2e loop", overlap=2, generation_size=SIZE, selection_wrong_share=0.8, base_model_path=str(tiny_base),
        retrain_threshold=2 * SIZE, retrain_metric="log_loss", train_settings={"epochs": 3, "max_batch": 8},
        promotion_min_problems=1,  # one generation holds out a handful of problems; the gate judges them all the same
    )
    run_import("gsm8k-examples", gsm8k_slice(data_dir, tmp_path / "pool.jsonl", 60), project)
    researcher = client_for(make_user("researcher", "researcher"))

    # Generation 1: the initial PRM (the base model with a fresh head) scores 240 solutions.
    first = run_generation(researcher, project)
    initial = first.checkpoint
    assert initial.is_champion and first.total == first.scored == 240 and first.selected == SIZE
    assert first.generation.number == 1
    chosen = set(Solution.objects.filter(generation=first.generation).values_list("pk", flat=True))
    assert Solution.objects.filter(pk__in=chosen, is_correct=False).count() == 8  # 0.8 of the generation

    # Two annotators rate the whole generation (overlap 2) through the labelling API.
    for name in ("ann1", "ann2"):
        rate_through_the_api(client_for(make_user(name, "annotator")), project, SIZE)
    rated = Assignment.objects.filter(project=project, state="submitted")
    assert rated.count() == 2 * SIZE and set(rated.values_list("solution_id", flat=True)) == chosen

    # The retrain is due (K = 2 x SIZE passes): the worker trains, evaluates and promotes.
    assert researcher.post(reverse("scoring:project-retrain", args=[project.pk]), {}, format="json").status_code == 202
    checkpoints_url = reverse("scoring:project-checkpoints", args=[project.pk])
    rows = wait_for(lambda: [r for r in researcher.get(checkpoints_url).json()
                             if r["id"] != initial.pk and r["status"] != "training"],
                    timeout=300, every=0.5, message="the retrained checkpoint")
    new = Checkpoint.objects.get(pk=rows[0]["id"])
    assert new.parent == initial and new.generation == 1 and new.passes == 2 * SIZE
    assert new.reason and new.metrics["heldout"] and new.metrics["champion_heldout"]
    assert new.status == "champion" and new.is_champion, new.reason
    gate = new.metrics["gate"]  # the promotion gate judged it on the paired held-out problems
    assert gate["decision"] == "promote" and gate["problems"] == new.metrics["heldout_problems"] and gate["interval"][1] < 0
    assert (Path(new.path) / "stepmark_prm.json").is_file()
    # The research page's evaluation: the plots' data of both, from the worker through the API.
    report = researcher.get(reverse("scoring:checkpoint-report", args=[new.pk])).json()
    assert report["champion"]["id"] == initial.pk and rows[0]["has_report"] and rows[0]["progress"]["phase"] == "saving"
    assert report["report"]["challenger"]["steps"]["roc"] and report["report"]["champion"]["steps"]["calibration"]["bins"]

    # Generation 2 is scored and selected by the new champion, from what is left of the pool.
    second = run_generation(researcher, project)
    assert second.checkpoint == new and second.generation.number == 2 and second.selected == SIZE
    assert SolutionScore.objects.filter(checkpoint=new).count() == second.total == 240 - SIZE
    assert not chosen & set(Solution.objects.filter(generation=second.generation).values_list("pk", flat=True))

    # Everything rated is in the scheduled PRM800K snapshot, with the generation and the PRM's score.
    from labeling.tasks import export_project_snapshot

    export_project_snapshot.delay(project.pk)
    snapshot = wait_for(lambda: snapshots.list_snapshots(project, settings.STEPMARK_EXPORT_DIR),
                        timeout=120, every=0.3, message="the snapshot")[0]
    with gzip.open(snapshot.path, "rt", encoding="utf-8") as handle:
        records = [json.loads(line) for line in handle]
    assert len(records) == 2 * SIZE
    assert {r["generation"] for r in records} == {1}
    scores = dict(Solution.objects.filter(pk__in=chosen).values_list("verifier_score", "pk"))
    assert {r["question"]["pre_generated_verifier_score"] for r in records} == set(scores)
