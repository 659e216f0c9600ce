"""A registered PRM through a real Celery worker: validated there, made the champion, scoring a generation.

The PRM is a tiny random model in the exact Qwen2.5-Math-PRM layout (tests/scoring/prm/factories.py);
GSM8K's model solutions are the pool.
"""
import pytest
from django.urls import reverse

from labeling.imports import run_import
from scoring.models import Checkpoint, SolutionScore
from tests.e2e.conftest import gsm8k_slice, wait_for
from tests.e2e.test_loop import run_generation
from tests.factories import client_for, make_project, make_user
from tests.scoring.prm.factories import build_qwen_prm, build_token_classification

pytestmark = pytest.mark.e2e

TEXTS = ["Natalia sold clips to 48 of her friends in April.", "The answer is 72."]


def test_a_registered_qwen_prm_is_validated_by_the_worker_and_scores_a_generation(worker, data_dir, tmp_path):
    project = make_project(name="e2e registry", generation_size=6, selection_wrong_share=0.5)
    run_import("gsm8k-examples", gsm8k_slice(data_dir, tmp_path / "pool.jsonl", 10), project)
    researcher = client_for(make_user("researcher", "researcher"))
    url = reverse("scoring:project-checkpoints", args=[project.pk])
    build_qwen_prm(tmp_path / "qwen", TEXTS)
    build_token_classification(tmp_path / "no_extra0", TEXTS, step_token=None)

    def settled(pk):
        return wait_for(lambda: next((c for c in researcher.get(url).json() if c["id"] == pk and c["status"] != "validating"),
                                     None), timeout=120, every=0.3, message=f"the validation of checkpoint {pk}")

    # A directory whose files pass but whose tokenizer lacks the step token: the worker says so.
    bad = researcher.post(url, {"path": str(tmp_path / "no_extra0"), "layout": "qwen-prm"}, format="json")
    assert bad.status_code == 202, bad.content
    shown = settled(bad.json()["id"])
    assert shown["status"] == "invalid" and "no single token for the step separator '<extra_0>'" in shown["reason"]

    good = researcher.post(url, {"path": str(tmp_path / "qwen"), "champion": True}, format="json")
    assert good.status_code == 202 and good.json()["layout"] == "qwen-prm"
    shown = settled(good.json()["id"])
    assert shown["status"] == "champion" and shown["is_champion"], shown["reason"]
    assert shown["metrics"]["validation"]["step_token"] == "<extra_0>" and "smoke example scored" in shown["reason"]

    # The first generation is scored by it: no untrained head is built.
    run = run_generation(researcher, project)
    assert run.checkpoint_id == good.json()["id"] and run.selected == 6
    assert SolutionScore.objects.filter(checkpoint_id=run.checkpoint_id).count() == run.total == 40
    assert list(Checkpoint.objects.filter(project=project).order_by("pk").values_list("layout", "status")) == [
        ("qwen-prm", "invalid"), ("qwen-prm", "champion")]
