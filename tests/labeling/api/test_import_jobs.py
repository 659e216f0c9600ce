"""Imports as jobs through the API: raw model outputs with their options, the preview, bad options,
the job's live progress, cancel and failure (all or nothing), the formats the form offers.

The job runs inline here (Celery's eager mode, run when the request's transaction would commit);
tests/e2e/test_import_job.py runs it in a real worker.
"""
import io
import json

import pytest
from django.core.cache import caches
from django.test import TestCase
from django.urls import reverse

from labeling.imports import jobs
from labeling.models import ImportJob, Problem, Solution
from tests.factories import client_for, make_project, make_user, raw_completions


@pytest.fixture(autouse=True)
def import_dir(settings, tmp_path, eager):
    settings.STEPMARK_IMPORT_DIR = tmp_path / "imports"
    return settings.STEPMARK_IMPORT_DIR


def file_of(data, name):
    file = io.BytesIO(data)
    file.name = name
    return file


def post(client, project, data, *, name="outputs.jsonl", format="completions", route="api:project-import",
         run=True, **fields):
    """POST a multipart upload; with ``run`` the queued job runs as the request commits."""
    body = {"file": file_of(data, name), "format": format, **fields}
    with TestCase.captureOnCommitCallbacks(execute=run):
        return client.post(reverse(route, args=[project.pk]), body, format="multipart")


def job_of(client, answer):
    assert answer.status_code == 202, answer.content
    return client.get(answer["Location"]).json()


def test_raw_completions_are_split_by_the_chosen_option_and_graded(clients, project, import_dir):
    client = clients["researcher"]
    job = job_of(client, post(client, project, raw_completions(6), split="lines", generator="my-model"))
    assert job["state"] == "done" and job["options"] == {"split": "lines", "generator": "my-model"}
    assert job["result"]["created"] == 6 and job["result"]["details"]["graded"] == 6
    assert job["progress"]["lines_read"] == 6 and job["progress"]["fraction"] == 1.0
    assert job["file_name"] == "outputs.jsonl" and job["error"] is None and job["finished_at"]
    solutions = Solution.objects.filter(project=project)
    assert {s.generator for s in solutions} == {"my-model"}
    # split=lines: each of the completion's three non-blank lines is a step
    assert {s.steps.count() for s in solutions} == {3}
    assert sorted(s.is_correct for s in solutions) == [False, False, True, True, True, True]
    assert list(import_dir.iterdir()) == []


def test_the_preview_shows_the_first_five_records_split_and_stores_nothing(clients, project):
    answer = post(clients["researcher"], project, raw_completions(8), route="api:project-import-preview",
                  split="regex", pattern=r"\n\n(?=So )")
    assert answer.status_code == 200, answer.content
    body = answer.json()
    assert body["file"] == "outputs.jsonl" and [r["line"] for r in body["records"]] == [1, 2, 3, 4, 5]
    first = body["records"][0]
    assert first["problem"] == "What is $2 + 3$?" and first["generator"] == "tiny-llm"
    (solution,) = first["solutions"]
    assert solution["field"] == "completion"
    assert solution["steps"] == ["We add the two numbers.\n\nFirst, $2 + 3 = 5$.", "So the answer is $\\boxed{5}$."]
    assert solution["final_answer"] == "5"
    assert not Problem.objects.filter(project=project).exists() and not ImportJob.objects.exists()


def test_the_preview_grades_each_answer_against_the_ground_truth_it_would_get(clients, project):
    # Records 0-2 carry their ground truth (the third adds wrongly); the fourth carries none and
    # takes that of the project's problem of its text, the fifth has none anywhere.
    Problem.objects.create(project=project, problem="What is $1 + 1$?", ground_truth_answer="2")
    data = raw_completions(3) + "".join(json.dumps({"problem": text, "completion": f"So it is $\\boxed{{{answer}}}$."}) + "\n"
                                        for text, answer in (("What is $1 + 1$?", "2"), ("Name it.", "x"))).encode()
    answer = post(clients["researcher"], project, data, route="api:project-import-preview")
    assert answer.status_code == 200, answer.content
    records = answer.json()["records"]
    assert [r["ground_truth_answer"] for r in records] == ["5", "7", "9", "2", None]
    assert [(s["final_answer"], s["is_correct"]) for r in records for s in r["solutions"]] == [
        ("5", True), ("7", True), ("10", False), ("2", True), ("x", None)]
    assert Problem.objects.filter(project=project).count() == 1 and not ImportJob.objects.exists()


def test_the_history_lists_the_projects_jobs_with_their_outcomes_newest_first_paged(clients, project):
    client = clients["researcher"]
    done = job_of(client, post(client, project, raw_completions(4), name="good.jsonl"))
    bad = raw_completions(1) + json.dumps({"problem": "x", "completion": " "}).encode() + b"\n"
    failed = job_of(client, post(client, project, bad, name="bad.jsonl"))
    url = reverse("api:project-import", args=[project.pk])
    history = client.get(url).json()
    assert history["count"] == 2 and [j["id"] for j in history["results"]] == [failed["id"], done["id"]]
    newest, oldest = history["results"]
    assert (newest["state"], newest["file_name"], newest["format"]) == ("failed", "bad.jsonl", "completions")
    assert (newest["error"]["line"], newest["error"]["field"]) == (2, "completion") and newest["result"] is None
    assert oldest["state"] == "done" and (oldest["result"]["created"], oldest["result"]["unit"]) == (4, "solutions")
    assert {j["requested_by"] for j in history["results"]} == {"res"}
    assert all(j["created_at"] and j["finished_at"] for j in history["results"])
    second_page = client.get(url, {"limit": 1, "offset": 1}).json()
    assert [j["id"] for j in second_page["results"]] == [done["id"]] and second_page["previous"]
    assert client.get(url, {"limit": 0}).status_code == 400


@pytest.mark.parametrize("role", ["lead", "annotator", "nobody"])
def test_the_history_is_the_projects_researchers_only(clients, project, role):
    job_of(clients["researcher"], post(clients["researcher"], project, raw_completions(1)))
    assert clients[role].get(reverse("api:project-import", args=[project.pk])).status_code in (403, 404)
    assert clients["anonymous"].get(reverse("api:project-import", args=[project.pk])).status_code in (401, 403)


def test_a_researcher_of_another_project_sees_neither_this_history_nor_its_jobs(clients, project):
    job = job_of(clients["researcher"], post(clients["researcher"], project, raw_completions(1)))
    other = make_project(name="other")
    outsider = client_for(make_user("olga", "researcher", projects=[other]))
    assert outsider.get(reverse("api:project-import", args=[project.pk])).status_code in (403, 404)
    assert outsider.get(job["url"]).status_code in (403, 404)
    theirs = outsider.get(reverse("api:project-import", args=[other.pk]))
    assert theirs.status_code == 200 and theirs.json()["count"] == 0


def test_a_preview_of_a_bad_record_names_its_line_and_field(clients, project):
    data = raw_completions(2) + json.dumps({"problem": "x", "completion": "   "}).encode() + b"\n"
    answer = post(clients["researcher"], project, data, name="mine.jsonl", route="api:project-import-preview")
    assert answer.status_code == 400
    assert (answer.json()["line"], answer.json()["field"]) == (3, "completion")
    assert answer.json()["detail"].startswith("mine.jsonl:3: field 'completion'")


@pytest.mark.parametrize("fields, field", [
    ({"split": "regex"}, "pattern"),
    ({"split": "regex", "pattern": "(Step)"}, "pattern"),
    ({"split": "regex", "pattern": "["}, "pattern"),
    ({"pattern": "x"}, "pattern"),
    ({"split": "words"}, "split"),
    ({"format": "prm800k", "split": "lines"}, "split"),
    ({"format": "openai-batch"}, "requests"),
    ({"generator": "x" * 201}, "generator"),
])
@pytest.mark.parametrize("route", ["api:project-import", "api:project-import-preview"])
def test_bad_options_are_a_400_naming_the_field_and_queue_nothing(clients, project, import_dir, fields, field, route):
    answer = post(clients["researcher"], project, raw_completions(2), route=route, **fields)
    assert answer.status_code == 400, answer.content
    body = answer.json()
    assert body.get("field") == field or field in body, body
    assert not ImportJob.objects.exists()
    assert not import_dir.exists() or list(import_dir.iterdir()) == []


def test_openai_batch_takes_its_input_file_as_a_second_upload(clients, project):
    # platform.openai.com/docs/api-reference/batch/request-input and .../request-output
    problem = "What is $2 + 3$?"
    requests = "".join(json.dumps({"custom_id": f"request-{i}", "method": "POST", "url": "/v1/chat/completions",
                                   "body": {"model": "gpt-4o-mini",
                                            "messages": [{"role": "user", "content": problem}]}}) + "\n"
                       for i in (1, 2)).encode()
    output = "".join(json.dumps({
        "id": f"batch_req_{i}", "custom_id": f"request-{i}", "error": None,
        "response": {"status_code": 200, "request_id": f"req_{i}", "body": {
            "id": "chatcmpl-1", "object": "chat.completion", "model": "gpt-4o-mini",
            "choices": [{"index": 0, "finish_reason": "stop",
                         "message": {"role": "assistant", "content": f"Add.\n\n$\\boxed{{{4 + i}}}$"}}]}},
    }) + "\n" for i in (1, 2)).encode()
    client = clients["researcher"]
    job = job_of(client, post(client, project, output, name="batch_output.jsonl", format="openai-batch",
                              requests=file_of(requests, "batch_input.jsonl")))
    assert job["state"] == "done" and job["result"]["created"] == 2
    assert Problem.objects.get(project=project).problem == problem


def test_the_same_completions_as_openai_chat_then_as_vllm_are_stored_once(clients, project):
    # 28 completions: 7 problems with 4 samples each, as an OpenAI chat run (n=4, the model named in
    # every response) and as a vLLM run (RequestOutputs, no model name anywhere in the file).
    problems = [f"What is ${a} + {a + 1}$?" for a in range(7)]
    samples = {p: [f"Sample {k}: we add.\n\nSo the answer is $\\boxed{{{2 * a + 1 + (k == 3)}}}$."
                   for k in range(4)] for a, p in enumerate(problems)}
    chat = "".join(json.dumps({
        "request": {"model": "gpt-4o", "n": 4, "messages": [{"role": "user", "content": p}]},
        "response": {"id": "chatcmpl-1", "object": "chat.completion", "model": "gpt-4o-2024-08-06",
                     "choices": [{"index": k, "finish_reason": "stop", "message": {"role": "assistant", "content": t}}
                                 for k, t in enumerate(samples[p])]},
    }) + "\n" for p in problems).encode()
    vllm = json.dumps([{"request_id": str(i), "prompt": p, "finished": True,
                        "outputs": [{"index": k, "text": t, "finish_reason": "stop"} for k, t in enumerate(samples[p])]}
                       for i, p in enumerate(problems)]).encode()
    client = clients["researcher"]
    first = job_of(client, post(client, project, chat, name="chat.jsonl", format="openai-chat"))
    assert {k: first["result"][k] for k in ("records", "created", "skipped", "unit")} == \
        {"records": 7, "created": 28, "skipped": 0, "unit": "solutions"}  # solutions, not the 7 records

    # The form's model field left empty: refused before any job, naming the field.
    refused = post(client, project, vllm, name="vllm.json", format="vllm", generator="")
    assert refused.status_code == 400
    assert refused.json()["field"] == "generator" and "is required" in refused.json()["detail"]
    assert ImportJob.objects.filter(project=project).count() == 1

    # Named (even otherwise than the first import did), it adds nothing, and the result says so.
    again = job_of(client, post(client, project, vllm, name="vllm.json", format="vllm", generator="gpt-4o"))
    assert {k: again["result"][k] for k in ("records", "created", "skipped", "unit")} == \
        {"records": 7, "created": 0, "skipped": 28, "unit": "solutions"}
    assert again["result"]["details"]["solutions"] == 0
    solutions = Solution.objects.filter(project=project)
    assert solutions.count() == 28 and {s.generator for s in solutions} == {"gpt-4o-2024-08-06"}


def test_a_bad_line_late_in_the_file_stores_nothing(clients, project, monkeypatch):
    monkeypatch.setattr(jobs, "CHECK_EVERY", 10)
    data = raw_completions(40) + b'{"problem": "x", "completion": "y", "colour": "red"}\n'
    client = clients["researcher"]
    job = job_of(client, post(client, project, data, name="late.jsonl"))
    assert job["state"] == "failed" and job["result"] is None
    error = job["error"]
    assert (error["file"], error["line"], error["field"]) == ("late.jsonl", 41, "colour")
    assert error["message"].startswith("late.jsonl:41: field 'colour'")
    assert not Solution.objects.filter(project=project).exists() and not Problem.objects.exists()


def test_a_running_job_shows_its_live_counts_and_an_eta(clients, project, monkeypatch):
    monkeypatch.setattr(jobs, "CHECK_EVERY", 10)
    client = clients["researcher"]
    seen = []
    check = jobs.JobProgress.check

    def polled(progress):  # the page's poll, asked while the worker is between two chunks
        check(progress)
        seen.append(client.get(reverse("api:import-job", args=[progress.job.pk])).json())

    monkeypatch.setattr(jobs.JobProgress, "check", polled)
    job = job_of(client, post(client, project, raw_completions(35)))
    assert job["state"] == "done"
    running = [s for s in seen if s["state"] == "running"]
    assert [s["progress"]["lines_read"] for s in running] == [10, 20, 30, 35]  # 35: the last check, at the end
    assert all(0 < s["progress"]["bytes_read"] <= job["bytes_total"] for s in running)
    assert running[0]["progress"]["eta_s"] is not None or running[0]["progress"]["fraction"] == 1
    assert caches["stats"].get(jobs.live_key(job["id"])) is None  # the live counts go with the job


def test_cancel_in_the_middle_stores_nothing(clients, project, monkeypatch):
    monkeypatch.setattr(jobs, "CHECK_EVERY", 10)
    client = clients["researcher"]
    check = jobs.JobProgress.check

    def cancel_at_20(progress):
        if progress.lines == 20:
            assert client.post(reverse("api:import-job-cancel", args=[progress.job.pk])).json()["state"] == "cancelled"
        check(progress)

    monkeypatch.setattr(jobs.JobProgress, "check", cancel_at_20)
    job = job_of(client, post(client, project, raw_completions(40)))
    assert job["state"] == "cancelled" and job["result"] is None and job["finished_at"]
    assert not Solution.objects.filter(project=project).exists()


def test_a_queued_job_cancelled_never_runs_and_its_file_goes(clients, project, import_dir):
    client = clients["researcher"]
    queued = post(client, project, raw_completions(3), run=False).json()
    assert queued["state"] == "queued" and len(list(import_dir.iterdir())) == 1  # the upload, on disk
    cancelled = client.post(reverse("api:import-job-cancel", args=[queued["id"]]))
    assert cancelled.status_code == 200 and cancelled.json()["state"] == "cancelled"
    assert list(import_dir.iterdir()) == []
    assert jobs.run(queued["id"]) == "cancelled"  # the worker takes it later: nothing happens
    assert not Solution.objects.exists()
    again = client.post(reverse("api:import-job-cancel", args=[queued["id"]]))  # a second click
    assert again.status_code == 200 and again.json()["state"] == "cancelled"


def test_a_finished_job_cannot_be_cancelled_and_the_list_is_newest_first(clients, project):
    client = clients["researcher"]
    first = job_of(client, post(client, project, raw_completions(2)))
    second = job_of(client, post(client, project, raw_completions(2, start=10)))
    refused = client.post(reverse("api:import-job-cancel", args=[first["id"]]))
    assert refused.status_code == 409 and "has ended (done)" in refused.json()["detail"]
    listed = client.get(reverse("api:project-import", args=[project.pk])).json()
    assert [j["id"] for j in listed["results"]] == [second["id"], first["id"]]


def test_a_redelivered_job_runs_again(clients, project):
    client = clients["researcher"]
    queued = post(client, project, raw_completions(3), run=False).json()
    # Its first worker died mid-import: the row says running, the transaction rolled back.
    ImportJob.objects.filter(pk=queued["id"]).update(state=ImportJob.RUNNING)
    assert jobs.run(queued["id"]) == "done"
    assert Solution.objects.filter(project=project).count() == 3


def test_the_formats_the_form_offers(clients):
    answer = clients["researcher"].get(reverse("api:import-formats"))
    assert answer.status_code == 200
    formats = {f["name"]: f for f in answer.json()["formats"]}
    assert {"prm800k", "problems", "candidates", "completions", "openai-batch", "hf-parquet"} <= set(formats)
    assert formats["completions"] == {"name": "completions", "options": ["split", "pattern", "generator"],
                                      "required": {}, "preview": True}
    assert formats["openai-batch"]["options"][-1] == "requests"
    assert list(formats["openai-batch"]["required"]) == ["requests"]
    # A vLLM file names no model: the form must ask for one (tests/browser/test_imports.py).
    assert formats["vllm"]["required"] == {"generator": "a vLLM output file does not name the model that wrote it"}
    assert formats["prm800k"] == {"name": "prm800k", "options": [], "required": {}, "preview": False}
    assert answer.json()["splits"] == ["paragraphs", "lines", "regex"]
    assert clients["annotator"].get(reverse("api:import-formats")).status_code == 403


def test_the_schema_declares_the_upload_as_a_binary_file(clients):
    import yaml

    schema = yaml.safe_load(clients["researcher"].get(reverse("openapi-schema")).content)
    for route in ("/api/projects/{id}/imports/", "/api/projects/{id}/imports/preview/"):
        body = schema["paths"][route]["post"]["requestBody"]["content"]["multipart/form-data"]["schema"]
        ref = body["$ref"].rsplit("/", 1)[-1]
        fields = schema["components"]["schemas"][ref]["properties"]
        assert fields["file"] == {"type": "string", "format": "binary", "description": fields["file"]["description"]}
        assert fields["requests"]["format"] == "binary"
        assert "completions" in fields["format"].get("enum", []) or "$ref" in str(fields["format"])
    assert "202" in schema["paths"]["/api/projects/{id}/imports/"]["post"]["responses"]


@pytest.mark.parametrize("role", ["annotator", "lead", "nobody"])
def test_only_researchers_preview_poll_or_cancel(clients, project, role):
    job = ImportJob.objects.create(project=project, format="completions", file_name="x.jsonl", path="/nonexistent")
    preview = post(clients[role], project, raw_completions(1), route="api:project-import-preview")
    assert preview.status_code == 403
    assert clients[role].get(reverse("api:import-job", args=[job.pk])).status_code == 403
    assert clients[role].post(reverse("api:import-job-cancel", args=[job.pk])).status_code == 403
    assert ImportJob.objects.get(pk=job.pk).state == "queued"


def test_the_upload_is_streamed_to_a_temporary_file_not_held_in_memory(clients, project, monkeypatch):
    seen = []
    save = jobs.save_upload

    def watched(upload):
        seen.append((type(upload).__name__, hasattr(upload, "temporary_file_path")))
        return save(upload)

    monkeypatch.setattr(jobs, "save_upload", watched)
    client = clients["researcher"]
    # Far below Django's in-memory threshold (2.5 MB): the import views still write it to disk.
    assert job_of(client, post(client, project, raw_completions(2)))["state"] == "done"
    assert seen == [("TemporaryUploadedFile", True)]
