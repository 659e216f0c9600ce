"""The research page's import in real Chromium: a researcher uploads raw completions, sees the
first records split into steps and the job to done, and exports the labels as Parquet that
``datasets`` reads; a running job shows its counts and ETA and is cancelled; a bad line is
named by file, line and field.

The job runs in Celery's eager mode inside the live server (the upload's request runs it); a
real worker runs it in tests/e2e/test_import_job.py.
"""
import datetime
import json
import re

import pytest
from django.contrib.auth import get_user_model
from django.core.cache import caches
from django.utils import timezone

from labeling.imports import jobs
from labeling.models import ImportJob, Solution
from tests.factories import make_annotator, make_project, make_user, raw_completions, submit, take

from .axe import axe_violations
from .conftest import log_in, screenshot

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def project(settings, tmp_path):
    settings.STEPMARK_IMPORT_DIR = tmp_path / "imports"
    project = make_project(name="Raw outputs")
    make_user("res", "researcher")
    return project


def open_research(page, live_server, project):
    log_in(page, live_server, "res", next_path=f"/projects/{project.pk}/research/")
    page.wait_for_selector('#research[data-state="ready"]')


def test_a_researcher_previews_imports_and_exports_parquet(page, live_server, project, eager, tmp_path):
    upload = tmp_path / "outputs.jsonl"
    upload.write_bytes(raw_completions(12))
    open_research(page, live_server, project)
    form = page.locator('[data-testid="import-form"]')
    assert form.locator('[data-testid="import-format"]').input_value() == "completions"
    page.set_input_files('[data-testid="import-file"]', str(upload))
    page.select_option('[data-testid="import-split"]', "regex")
    page.fill('[data-testid="import-pattern"]', r"\n\n(?=So )")

    page.click('[data-testid="import-preview"]')
    records = page.locator(".import-record")
    records.first.wait_for()
    assert records.count() == 5
    first = records.first
    assert first.get_attribute("data-line") == "1"
    steps = first.locator(".import-steps li")
    assert steps.count() == 2
    assert first.locator(".import-problem .katex").count() == 1  # "$2 + 3$" drawn by KaTeX, not shown raw
    assert "So the answer is" in steps.nth(1).inner_text()
    assert "final answer: 5" in first.locator("p.small").inner_text()
    # Each answer graded against the ground truth the import will give it: the third adds wrongly.
    grades = page.locator('[data-testid="import-grade"]')
    assert grades.all_inner_texts() == ["correct", "correct", "wrong", "correct", "correct"]
    assert "ground truth: 9" in records.nth(2).locator(".import-answer").inner_text()
    assert not Solution.objects.exists()  # a preview stores nothing

    # Another file: the first file's records must not stay on show as if they were its own.
    other = tmp_path / "other.jsonl"
    other.write_bytes(raw_completions(2))
    page.set_input_files('[data-testid="import-file"]', str(other))
    assert records.count() == 0
    page.set_input_files('[data-testid="import-file"]', str(upload))

    page.click('[data-testid="import-start"]')
    page.wait_for_selector('[data-testid="import-job"][data-state="done"]')
    status = page.locator('[data-testid="import-job"]')
    assert "12 records read, 12 solutions added, 0 already there" in status.inner_text()
    assert status.locator("progress").evaluate("p => p.value") == 1
    assert Solution.objects.filter(project=project).count() == 12
    assert {s.steps.count() for s in Solution.objects.filter(project=project)} == {2}
    # The history heads with it, its outcome in words.
    row = page.locator('[data-testid="import-history-table"] tbody tr[data-state="done"]')
    row.wait_for()
    assert "12 records read, 12 solutions added" in row.locator('[data-testid="import-outcome"]').inner_text()

    # An annotator rates three of the imported solutions; the researcher exports them for TRL.
    ann = make_annotator("ann")
    for _ in range(3):
        task = take(ann, project)
        submit(task, [1, -1 if task.solution.is_correct is False else 1])
    page.reload()  # the researcher downloads it from the page's on-demand exports
    with page.expect_download() as info:
        page.click('[data-testid="on-demand-exports"] a[data-format="trl-parquet"]')
    parquet = tmp_path / "labels.parquet"
    info.value.save_as(parquet)

    import datasets

    rows = datasets.load_dataset("parquet", data_files=str(parquet), split="train",
                                 cache_dir=str(tmp_path / "hf-cache"))
    assert {"prompt", "completions", "labels"} <= set(rows.column_names)
    assert len(rows) == 3
    assert sorted(len(r["completions"]) for r in rows) == [2, 2, 2]
    wrong = Solution.objects.filter(project=project, is_correct=False, assignments__isnull=False)
    labels = {r["prompt"]: r["labels"] for r in rows}
    assert all(labels[s.problem.problem] == [True, False] for s in wrong)
    assert sorted(map(tuple, labels.values())).count((True, True)) == 3 - wrong.count()


def test_a_running_import_shows_its_counts_and_eta_and_is_cancelled(page, live_server, project, tmp_path):
    job = ImportJob.objects.create(project=project, format="completions", file_name="big-outputs.jsonl",
                                   path=str(tmp_path / "absent"), state=ImportJob.RUNNING, bytes_total=100_000_000,
                                   started_at=timezone.now() - datetime.timedelta(seconds=30))
    caches["stats"].set(jobs.live_key(job.pk), {"lines_read": 40_000, "records_stored": 39_500,
                                                  "bytes_read": 40_000_000})
    preview = tmp_path / "outputs.jsonl"
    preview.write_bytes(raw_completions(5))
    open_research(page, live_server, project)
    status = page.locator('[data-testid="import-job"][data-state="running"]')
    status.wait_for()
    text = status.locator('[data-testid="import-progress"]').inner_text()
    assert "40,000 lines read · 39,500 records stored" in text
    assert "38.1 MB of 95.4 MB" in text
    assert re.search(r"about (4[5-9]|5\d) s left", text), text  # 30 s for 40%: 45 s more, and the page's load
    assert abs(status.locator("progress").evaluate("p => p.value") - 0.4) < 1e-6
    # The worker moves on; the page follows without a reload.
    caches["stats"].set(jobs.live_key(job.pk), {"lines_read": 41_000, "records_stored": 40_000,
                                                  "bytes_read": 41_000_000})
    page.wait_for_function("""() => document.querySelector('[data-testid="import-progress"]')
                                    ?.textContent.includes("41,000 lines read")""")

    page.set_input_files('[data-testid="import-file"]', str(preview))
    page.click('[data-testid="import-preview"]')
    page.locator(".import-record").first.wait_for()
    page.set_viewport_size({"width": 1280, "height": 1000})
    page.locator('[data-testid="imports"]').scroll_into_view_if_needed()
    screenshot(page, "research-import")

    page.click('[data-testid="import-cancel"]')
    page.wait_for_selector('[data-testid="import-job"][data-state="cancelled"]')
    assert "cancelled; nothing was stored" in page.locator('[data-testid="import-job"]').inner_text()
    assert ImportJob.objects.get(pk=job.pk).state == ImportJob.CANCELLED


def test_the_history_lists_every_import_with_its_outcome_paged(page, live_server, project):
    researcher = get_user_model().objects.get(username="res")
    ended = timezone.now()
    for i in range(11):  # eleven done: a page of ten, and one older
        ImportJob.objects.create(project=project, requested_by=researcher, format="completions",
                                 file_name=f"batch-{i:02d}.jsonl", path="", state=ImportJob.DONE, finished_at=ended,
                                 result={"records": 100 + i, "created": 90 + i, "skipped": 10, "unit": "solutions",
                                         "details": {}})
    ImportJob.objects.create(project=project, requested_by=researcher, format="prm800k", file_name="phase2.jsonl.gz",
                             path="", state=ImportJob.CANCELLED, finished_at=ended)
    failed = ImportJob.objects.create(
        project=project, requested_by=researcher, format="openai-batch", file_name="batch_output.jsonl", path="",
        state=ImportJob.FAILED, finished_at=ended, error_line=7, error_field="response.body.choices",
        error="batch_output.jsonl:7: field 'response.body.choices': expected a non-empty list of choices")
    open_research(page, live_server, project)
    history = page.locator('[data-testid="import-history"]')
    table = history.locator('[data-testid="import-history-table"]')
    table.wait_for()
    assert "Import history (13)" in history.locator("h3").inner_text()
    rows = table.locator("tbody tr")
    assert rows.count() == 10
    newest = rows.first
    assert newest.get_attribute("data-job") == str(failed.pk) and newest.get_attribute("data-state") == "failed"
    assert "batch_output.jsonl:7: field 'response.body.choices'" in newest.inner_text()
    assert "openai-batch" in newest.inner_text() and "res" in newest.inner_text()
    assert "cancelled; nothing stored" in rows.nth(1).inner_text()
    assert "110 records read, 100 solutions added, 10 already there" in rows.nth(2).inner_text()
    page.set_viewport_size({"width": 1280, "height": 900})
    history.scroll_into_view_if_needed()
    screenshot(page, "research-import-history")
    page.set_viewport_size({"width": 390, "height": 844})
    history.scroll_into_view_if_needed()
    screenshot(page, "research-import-history-390")
    # No part of the page is wider than the phone: the table scrolls in its own box.
    assert page.evaluate("document.documentElement.scrollWidth") <= 390

    page.click('[data-testid="import-history-older"]')
    page.wait_for_function("""() => document.querySelectorAll('[data-testid="import-history-table"] tbody tr').length === 3""")
    assert "batch-00.jsonl" in table.locator("tbody tr").last.inner_text()
    page.click('[data-testid="import-history-newer"]')
    page.wait_for_function("""() => document.querySelectorAll('[data-testid="import-history-table"] tbody tr').length === 10""")


def test_a_bad_line_is_named_and_nothing_is_stored(page, live_server, project, eager, tmp_path):
    broken = tmp_path / "broken.jsonl"
    broken.write_bytes(raw_completions(2) + b'{"problem": "What is 1 + 1?", "completion": ""}\n')
    open_research(page, live_server, project)
    page.set_input_files('[data-testid="import-file"]', str(broken))
    page.click('[data-testid="import-start"]')
    error = page.locator('[data-testid="import-error"]')
    error.wait_for()
    assert error.inner_text().startswith("broken.jsonl:3: field 'completion': ")
    assert "nothing was stored" in page.locator('[data-testid="import-job"]').inner_text()
    assert not Solution.objects.exists()
    page.select_option('[data-testid="import-format"]', "prm800k")  # steps in the file: nothing to preview
    assert page.locator('[data-testid="import-preview"]').is_hidden()
    assert page.locator('[data-testid="import-split"]').is_hidden()
    page.select_option('[data-testid="import-format"]', "completions")

    # Bad options are refused before anything is uploaded into a job, naming the field.
    page.select_option('[data-testid="import-split"]', "regex")
    page.fill('[data-testid="import-pattern"]', "(Step)")
    page.click('[data-testid="import-preview"]')
    refusal = page.locator('[data-testid="import-refusal"]')
    refusal.wait_for()
    assert "field 'pattern'" in refusal.inner_text() and "capturing group" in refusal.inner_text()


def test_a_format_whose_files_name_no_model_asks_for_one(page, live_server, project, eager, tmp_path):
    # vLLM's RequestOutputs carry no model name: left empty, every solution would be stored nameless.
    outputs = tmp_path / "vllm.json"
    outputs.write_text(json.dumps([{"request_id": "0", "prompt": "What is $2 + 3$?", "finished": True, "outputs": [
        {"index": 0, "text": "We add.\n\nSo the answer is $\\boxed{5}$.", "finish_reason": "stop"},
        {"index": 1, "text": "We multiply.\n\nSo the answer is $\\boxed{6}$.", "finish_reason": "stop"}]}]))
    open_research(page, live_server, project)
    model = page.locator('[data-testid="import-generator"]')
    assert model.get_attribute("placeholder") == "from the file" and not model.evaluate("i => i.required")
    page.select_option('[data-testid="import-format"]', "vllm")
    assert model.evaluate("i => i.required") and "required" in model.get_attribute("placeholder")
    page.set_input_files('[data-testid="import-file"]', str(outputs))

    page.click('[data-testid="import-start"]')
    problem = page.locator('[data-testid="import-form-error"]')
    assert problem.inner_text() == ("Model name is required: a vLLM output file does not name the model "
                                    "that wrote it.")
    assert model.evaluate("i => i === document.activeElement")
    assert not ImportJob.objects.exists()  # nothing was sent

    model.fill("Qwen2.5-Math-1.5B")
    page.click('[data-testid="import-start"]')
    page.wait_for_selector('[data-testid="import-job"][data-state="done"]')
    assert "1 records read, 2 solutions added, 0 already there" in page.locator('[data-testid="import-job"]').inner_text()
    assert set(Solution.objects.values_list("generator", flat=True)) == {"Qwen2.5-Math-1.5B"}
    page.select_option('[data-testid="import-format"]', "completions")  # its lines may name their model
    assert not model.evaluate("i => i.required") and problem.inner_text() == ""


def test_the_import_form_has_no_serious_accessibility_violations(axe_context, live_server, project):
    page = axe_context.new_page()
    open_research(page, live_server, project)
    page.locator('[data-testid="import-form"]').wait_for()
    assert [v for v in axe_violations(page) if any("import" in str(t) for t in v[2])] == []


def test_a_researcher_previews_and_imports_math_shepherd_rollout_labels(page, live_server, project, eager, tmp_path):
    from labeling.models import LabelSource, StepLabel

    upload = tmp_path / "shepherd.jsonl"
    lines = [
        ("What is $2 + 3$?", ["Step 1: $2 + 3 = 5$.", "Step 2: The answer is: 5"], "++"),
        ("What is $4 \\times 2$?", ["Step 1: $4 \\times 2 = 6$.", "Step 2: The answer is: 6"], "--"),
    ]
    with upload.open("w", encoding="utf-8") as f:
        for problem, steps, marks in lines:
            written = problem + " " + "".join(f"{step} ки\n" for step in steps)
            marked = problem + " " + "".join(f"{step} {mark}\n" for step, mark in zip(steps, marks))
            f.write(json.dumps({"input": written, "label": marked, "task": "GSM8K"}, ensure_ascii=False) + "\n")
    open_research(page, live_server, project)
    page.select_option('[data-testid="import-format"]', "math-shepherd")
    form = page.locator('[data-testid="import-form"]')
    assert page.input_value('[data-testid="import-tag"]') == "ки"
    assert page.locator('[data-testid="import-label_source"]').is_visible()
    assert not page.locator('[data-testid="import-split"]').is_visible()
    assert "never as people's ratings" in form.locator("p.muted").inner_text()
    page.set_input_files('[data-testid="import-file"]', str(upload))
    page.fill('[data-testid="import-label_source"]', "shepherd-gsm8k")

    page.click('[data-testid="import-preview"]')
    records = page.locator(".import-record")
    records.first.wait_for()
    assert records.count() == 2
    assert "rollout label (not a person's rating)" in page.locator(".import-preview h3").inner_text()
    labels = page.locator('[data-testid="import-step-label"]')
    assert labels.all_inner_texts() == ["+1", "+1", "−1", "−1"]
    assert "Step 2: The answer is: 5" in records.first.locator(".import-steps li").nth(1).inner_text()
    assert not Solution.objects.exists()  # a preview stores nothing
    page.locator(".import-preview").scroll_into_view_if_needed()
    screenshot(page, "research-import-math-shepherd-preview")

    page.click('[data-testid="import-start"]')
    page.wait_for_selector('[data-testid="import-job"][data-state="done"]')
    assert "2 records read, 4 labels added" in page.locator('[data-testid="import-job"]').inner_text()
    source = LabelSource.objects.get(project=project)
    assert (source.kind, source.name) == (LabelSource.ROLLOUTS, "shepherd-gsm8k")
    assert sorted(StepLabel.objects.filter(source=source).values_list("value", flat=True)) == [-1, -1, 1, 1]

    # mc-rollouts: the preview shows each step's rollout counts; a step without an estimate has no label.
    rollouts = tmp_path / "rollouts.jsonl"
    rollouts.write_text(json.dumps({"problem": "What is $1 + 1$?", "steps": ["$1 + 1 = 2$.", "The answer is 2."],
                                    "rollouts": [{"successes": 3, "total": 4}, None]}) + "\n")
    page.select_option('[data-testid="import-format"]', "mc-rollouts")
    assert not page.locator('[data-testid="import-tag"]').is_visible()
    page.set_input_files('[data-testid="import-file"]', str(rollouts))
    page.click('[data-testid="import-preview"]')
    page.locator(".import-record").first.wait_for()
    assert labels.all_inner_texts() == ["+1 · 3/4 rollouts", "no label"]
