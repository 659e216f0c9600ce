"""The LLM judge's settings and runs as a researcher reads and changes them (``scoring.judge_api``)."""
import pytest
from django.urls import reverse

from labeling.models import AuditEntry
from scoring.judge_prompt import DEFAULT_PROMPT
from scoring.judge_tasks import run_judge
from scoring.models import JudgeRun, JudgeSettings
from tests.factories import client_for, make_project, make_solution, make_user
from tests.scoring.test_api import broker, queued  # noqa: F401 (the broker fixture)


@pytest.fixture
def project(db):
    return make_project(name="judge api")


@pytest.fixture
def researcher(project):
    return client_for(make_user("judge-res", "researcher"))


def settings_url(project):
    return reverse("scoring:project-judge-settings", args=[project.pk])


def runs_url(project):
    return reverse("scoring:project-judge-runs", args=[project.pk])


def test_the_settings_read_defaults_and_store_what_a_patch_sends_with_an_audit_entry(project, researcher):
    body = researcher.get(settings_url(project)).json()
    assert body["base_url"] == "" and body["prompt_version"] == "prm800k-v1" and body["configured"] is False
    assert body["default_prompt"] == DEFAULT_PROMPT and body["updated_at"] is None
    assert body["key_env_choices"] == ["OPENAI_API_KEY", "STEPMARK_JUDGE_API_KEY"]
    assert not JudgeSettings.objects.exists()  # a GET writes nothing
    answer = researcher.patch(settings_url(project), {
        "base_url": "http://vllm:8000/v1/", "model": "Qwen/Qwen2.5-Math-7B-Instruct", "api_key_env": "OPENAI_API_KEY",
        "concurrency": 16, "rate_limit": 600, "budget": 5000, "prompt_version": "strict.v2",
        "prompt_template": "Problem: {problem}\nSteps:\n{steps}\n"}, format="json")
    assert answer.status_code == 200, answer.json()
    body = answer.json()
    assert body["base_url"] == "http://vllm:8000/v1" and body["configured"] is True and body["updated_at"]
    stored = JudgeSettings.objects.get(project=project)
    assert (stored.model, stored.concurrency, stored.rate_limit, stored.budget, stored.api_key_env) == (
        "Qwen/Qwen2.5-Math-7B-Instruct", 16, 600, 5000, "OPENAI_API_KEY")
    entry = AuditEntry.objects.get(project=project)
    assert entry.after["model"] == "Qwen/Qwen2.5-Math-7B-Instruct" and entry.before["model"] == ""
    researcher.patch(settings_url(project), {"budget": 10}, format="json")
    assert JudgeSettings.objects.get(project=project).concurrency == 16  # what was not sent stays


@pytest.mark.parametrize("sent, field", [
    ({"base_url": "ftp://host/v1"}, "base_url"),
    ({"base_url": "http://user:sk-secret@host/v1"}, "base_url"),
    ({"base_url": "http://host/v1?key=1"}, "base_url"),
    ({"api_key_env": "DJANGO_SECRET_KEY"}, "api_key_env"),
    ({"api_key_env": "DATABASE_URL"}, "api_key_env"),
    ({"prompt_template": "Rate these: {steps}"}, "prompt_template"),
    ({"prompt_version": "v 2"}, "prompt_version"),
    ({"prompt_version": ""}, "prompt_version"),
    ({"concurrency": 0}, "concurrency"), ({"concurrency": 65}, "concurrency"),
    ({"rate_limit": -1}, "rate_limit"), ({"budget": 0}, "budget"), ({"max_attempts": 11}, "max_attempts"),
    ({"timeout_s": 0.5}, "timeout_s"), ({"temperature": 3}, "temperature"),
    ({"api_key": "sk-secret"}, "api_key"), ({"default_prompt": "x"}, "default_prompt"),
])
def test_a_bad_setting_is_refused_naming_its_field_and_nothing_is_stored(project, researcher, sent, field):
    answer = researcher.patch(settings_url(project), {"model": "m", **sent}, format="json")
    assert answer.status_code == 400 and field in answer.json(), answer.json()
    assert not JudgeSettings.objects.exists()


def test_a_run_is_queued_on_the_default_queue_one_open_at_a_time(project, researcher, broker):  # noqa: F811
    solution = make_solution(project, steps=2, generation=0)
    refused = researcher.post(runs_url(project), {"generation": 0}, format="json")
    assert refused.status_code == 400 and "base_url and model" in refused.json()["detail"]
    JudgeSettings.objects.create(project=project, base_url="http://vllm:8000/v1", model="m")
    answer = researcher.post(runs_url(project), {"generation": 0}, format="json")
    assert answer.status_code == 202, answer.json()
    body = answer.json()
    assert body["state"] == "queued" and body["generation"] == 0 and body["result"] is None
    assert queued(broker, queue="default") == [("scoring.judge_tasks.run_judge", body["task_id"], [body["id"]], {})]
    assert queued(broker, queue="gpu") == []
    conflict = researcher.post(runs_url(project), {"solution_ids": [solution.pk]}, format="json")
    assert conflict.status_code == 409 and conflict.json()["run"]["id"] == body["id"]
    JudgeRun.objects.filter(pk=body["id"]).update(state=JudgeRun.DONE, result={"labelled": 2})
    second = researcher.post(runs_url(project), {"solution_ids": [solution.pk, solution.pk]}, format="json")
    assert second.status_code == 202 and second.json()["solution_ids"] == [solution.pk]
    listed = researcher.get(runs_url(project)).json()
    assert [run["id"] for run in listed["results"]] == [second.json()["id"], body["id"]]
    detail = researcher.get(reverse("scoring:judge-run-detail", args=[body["id"]])).json()
    assert detail["state"] == "done" and detail["result"] == {"labelled": 2}


@pytest.mark.parametrize("sent, field", [
    ({}, "generation"), ({"generation": 0, "solution_ids": [1]}, "generation"),
    ({"generation": 7}, "generation"), ({"solution_ids": [999999]}, "solution_ids"),
    ({"solution_ids": ["x"]}, "solution_ids"),
])
def test_what_to_judge_is_checked(project, researcher, broker, sent, field):  # noqa: F811
    make_solution(project, steps=1, generation=0)
    elsewhere = make_solution(make_project(name="elsewhere"), steps=1)
    JudgeSettings.objects.create(project=project, base_url="http://vllm:8000/v1", model="m")
    answer = researcher.post(runs_url(project), sent, format="json")
    assert answer.status_code == 400 and field in str(answer.json()), answer.json()
    other = researcher.post(runs_url(project), {"solution_ids": [elsewhere.pk]}, format="json")
    assert other.status_code == 400 and other.json()["field"] == "solution_ids"
    assert not JudgeRun.objects.exists()


def test_the_task_routes_to_the_default_queue():
    from annotator.celery import app

    assert app.amqp.router.route({}, run_judge.name)["queue"].name == "default"


def test_the_admin_lists_and_shows_judge_settings_and_runs(project, client):
    from django.contrib.auth import get_user_model

    client.force_login(get_user_model().objects.create_superuser("judge-root", password=None))
    judge = JudgeSettings.objects.create(project=project, base_url="http://vllm:8000/v1", model="m")
    run = JudgeRun.objects.create(project=project, generation=0, result={"labelled": 1})
    for model, row in ((JudgeSettings, judge), (JudgeRun, run)):
        name = f"admin:scoring_{model._meta.model_name}"
        assert client.get(reverse(f"{name}_changelist")).status_code == 200
        assert client.get(reverse(f"{name}_change", args=[row.pk])).status_code == 200
