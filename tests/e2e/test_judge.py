"""A judge run through the API and a real Celery worker: the worker registers the task, reads the
key from its own environment and stores the labels the local OpenAI-compatible server gave."""
import pytest
from django.urls import reverse

from labeling.models import StepLabel
from scoring.models import JudgeSettings
from tests.e2e.conftest import wait_for
from tests.factories import client_for, make_project, make_solution, make_user
from tests.openai_server import ScriptedServer, ok

pytestmark = pytest.mark.e2e


def test_a_worker_judges_a_generation_with_the_key_of_its_environment(worker_factory):
    project = make_project(name="e2e judge")
    solutions = [make_solution(project, steps=2, generation=0, problem=f"E2E judge {i}") for i in range(3)]
    researcher = client_for(make_user("researcher", "researcher"))
    with ScriptedServer({"E2E judge 1": [ok([1, -1])]}) as server:
        JudgeSettings.objects.create(project=project, base_url=server.url, model="m", rate_limit=0,
                                     api_key_env="STEPMARK_JUDGE_API_KEY")
        worker_factory(STEPMARK_JUDGE_API_KEY="sk-worker-only").start()
        answer = researcher.post(reverse("scoring:project-judge-runs", args=[project.pk]), {"generation": 0},
                                 format="json")
        assert answer.status_code == 202, answer.content
        url = reverse("scoring:judge-run-detail", args=[answer.json()["id"]])
        done = wait_for(lambda: (b := researcher.get(url).json())["state"] not in ("queued", "running") and b,
                        timeout=120, every=0.2, message="the judge run")
        assert done["state"] == "done", done
        assert done["result"]["labelled"] == 6 and done["result"]["requests"] == 3
        assert {auth for auth, _ in server.requests} == {"Bearer sk-worker-only"}
        values = list(StepLabel.objects.filter(step__solution=solutions[1]).order_by("step__position")
                      .values_list("value", flat=True))
        assert values == [1, -1]
