"""POST /api/projects/{id}/imports/ (a job, polled until it ends) and GET /api/projects/{id}/export/ with real PRM800K data."""
import gzip
import io
import json
import re

import pytest
from django.test import TestCase
from django.urls import reverse

from labeling.models import Assignment, ImportJob


@pytest.fixture(scope="module")
def native(data_dir):
    """The eight real PRM800K records (phase 1 and 2, screening, give_up)."""
    return gzip.decompress((data_dir / "prm800k" / "native_records.jsonl.gz").read_bytes())


@pytest.fixture(autouse=True)
def import_jobs(settings, tmp_path, eager):
    """Uploads land in a fresh folder; a queued import job runs inline (``upload`` commits the request)."""
    settings.STEPMARK_IMPORT_DIR = tmp_path / "imports"


def upload(client, project, data, name="native_records.jsonl", format="prm800k", **options):
    """POST the file: the job is queued (202) and, the request committed, runs; returns the answer to a poll
    of the job (or the refusal of the upload)."""
    file = io.BytesIO(data)
    file.name = name
    with TestCase.captureOnCommitCallbacks(execute=True):  # the test's transaction never commits
        answer = client.post(reverse("api:project-import", args=[project.pk]),
                             {"file": file, "format": format, **options}, format="multipart")
    if answer.status_code != 202:
        return answer
    assert answer.json()["state"] == "queued" and answer["Location"] == answer.json()["url"]
    return client.get(answer["Location"])


def outcome(answer):
    """The result counts of a job that ended done."""
    body = answer.json()
    assert body["state"] == "done", body
    return body["result"]


def export(client, project, **params):
    return client.get(reverse("api:project-export", args=[project.pk]), params)


def lines(response):
    body = b"".join(response.streaming_content)
    return [json.loads(line) for line in body.decode().splitlines()]


@pytest.fixture
def imported(clients, project, native):
    outcome(upload(clients["researcher"], project, native))
    return project


def test_upload_imports_the_real_file_and_a_second_upload_adds_nothing(clients, project, native, settings):
    first = outcome(upload(clients["researcher"], project, native))
    assert {k: first[k] for k in ("records", "created", "skipped")} == {"records": 8, "created": 8, "skipped": 0}
    assert Assignment.objects.filter(project=project, state=Assignment.SUBMITTED).count() == 8

    again = outcome(upload(clients["researcher"], project, native))
    assert (again["created"], again["skipped"]) == (0, 8)
    assert Assignment.objects.filter(project=project).count() == 8
    assert list(settings.STEPMARK_IMPORT_DIR.iterdir()) == []  # each job deleted its upload


def test_gzip_is_recognised_by_its_bytes_not_its_name(clients, project, native):
    answer = upload(clients["researcher"], project, gzip.compress(native), name="records.jsonl")
    assert outcome(answer)["created"] == 8


def test_a_bad_line_fails_the_job_naming_file_line_and_field_and_imports_nothing(clients, project, native):
    broken = json.loads(native.splitlines()[0])
    del broken["label"]
    data = native.rstrip(b"\n") + b"\n" + json.dumps(broken).encode() + b"\n"
    job = upload(clients["researcher"], project, data, name="mine.jsonl").json()
    assert job["state"] == "failed" and job["result"] is None
    error = job["error"]
    assert (error["file"], error["line"]) == ("mine.jsonl", 9)
    assert error["field"].startswith("label")
    assert error["message"].startswith("mine.jsonl:9: field 'label")
    assert not Assignment.objects.filter(project=project).exists()


def test_text_that_is_not_json_names_the_line(clients, project, native):
    error = upload(clients["researcher"], project, native + b"{oops\n", name="x.jsonl").json()["error"]
    assert (error["line"], error["field"]) == (9, None)
    assert "not valid JSON" in error["message"]


def test_unknown_format_or_missing_file_is_a_400_naming_the_field(clients, project, native):
    assert "format" in upload(clients["researcher"], project, native, format="csv").json()
    missing = clients["researcher"].post(reverse("api:project-import", args=[project.pk]), {"format": "prm800k"},
                                         format="multipart")
    assert missing.status_code == 400 and "file" in missing.json()


@pytest.mark.parametrize("role", ["annotator", "lead", "nobody", "anonymous"])
def test_only_researchers_import(clients, project, native, role):
    assert upload(clients[role], project, native).status_code in (401, 403)
    assert not Assignment.objects.exists() and not ImportJob.objects.exists()


def test_export_gives_back_the_imported_records_as_an_attachment(clients, imported, native):
    answer = export(clients["researcher"], imported)
    assert answer.status_code == 200
    assert answer.streaming
    assert answer["Content-Type"] == "application/x-ndjson"
    assert re.fullmatch(r'attachment; filename="math-phase-2-prm800k-\d{8}T\d{6}Z\.jsonl"', answer["Content-Disposition"])
    original = [json.loads(line) for line in native.splitlines()]
    assert sorted(lines(answer), key=json.dumps) == sorted(original, key=json.dumps)


def test_gzip_export_is_the_same_content_compressed(clients, imported):
    plain = b"".join(export(clients["lead"], imported).streaming_content)
    packed = export(clients["lead"], imported, gzip="1")
    assert packed["Content-Type"] == "application/gzip"
    assert packed["Content-Disposition"].endswith('.jsonl.gz"')
    assert gzip.decompress(b"".join(packed.streaming_content)) == plain


@pytest.mark.parametrize("params, generations", [
    ({"generation": "6"}, [6]),
    ({"generation": "-1,6"}, [-1, 6]),
    ({"since": "2022-12-01T00:00:00Z"}, [-1]),
    ({"since": "2022-11-01T00:00:00Z", "until": "2022-12-01T00:00:00Z"}, [6]),
])
def test_export_filters(clients, imported, params, generations):
    assert sorted(r["generation"] for r in lines(export(clients["researcher"], imported, **params))) == generations


def test_repeated_generation_parameters_combine(clients, imported):
    url = reverse("api:project-export", args=[imported.pk]) + "?generation=6&generation=-1"
    assert sorted(r["generation"] for r in lines(clients["researcher"].get(url))) == [-1, 6]


def test_quality_control_0_leaves_gold_items_out(clients, imported):
    Assignment.objects.filter(project=imported, generation=6).update(is_quality_control=True)
    assert len(lines(export(clients["researcher"], imported))) == 8
    kept = lines(export(clients["researcher"], imported, quality_control="0"))
    assert len(kept) == 7 and 6 not in {r["generation"] for r in kept}


def test_trl_export_has_one_labelled_trajectory_per_line(clients, imported):
    rows = lines(export(clients["researcher"], imported, format="trl"))
    assert rows and all(len(r["completions"]) == len(r["labels"]) > 0 for r in rows)


@pytest.mark.parametrize("params, parameter", [
    ({"since": "last tuesday"}, "since"),
    ({"until": "2022-13-45"}, "until"),
    ({"generation": "six"}, "generation"),
    ({"generation": "-2"}, "generation"),
    ({"gzip": "maybe"}, "gzip"),
    ({"quality_control": "perhaps"}, "quality_control"),
    ({"format": "csv"}, "format"),
    ({"since": "2023-01-01T00:00:00Z", "until": "2022-01-01T00:00:00Z"}, "until"),
])
def test_bad_filter_values_are_a_400_naming_the_parameter(clients, project, params, parameter):
    answer = export(clients["researcher"], project, **params)
    assert answer.status_code == 400
    assert parameter in answer.json()


def test_export_of_a_missing_project_is_a_404(clients):
    assert clients["researcher"].get(reverse("api:project-export", args=[999999])).status_code == 404


@pytest.mark.parametrize("role", ["annotator", "nobody", "anonymous"])
def test_annotators_cannot_export(clients, imported, role):
    assert export(clients[role], imported).status_code in (401, 403)


def test_a_large_export_arrives_in_several_chunks(clients, project, data_dir):
    # 101 phase-1 records (about 0.8 MB of JSON): the response streams rather than holding it.
    data = gzip.decompress((data_dir / "prm800k" / "phase1_test.reconstructed.jsonl.gz").read_bytes())
    outcome(upload(clients["researcher"], project, data, name="phase1_test.jsonl"))
    chunks = list(export(clients["researcher"], project).streaming_content)
    assert len(chunks) > 3
    assert len(b"".join(chunks).splitlines()) == 101


def head(path, n):
    with gzip.open(path, "rb") as f:
        return b"".join(f.readline() for _ in range(n))


def test_upload_problems_then_gsm8k_candidates(clients, project, data_dir):
    from labeling.models import Problem, Solution

    problems = outcome(upload(clients["researcher"], project, head(data_dir / "math" / "math500.jsonl.gz", 10),
                              name="math500.jsonl", format="problems"))
    assert (problems["records"], Problem.objects.filter(project=project).count()) == (10, 10)

    examples = outcome(upload(clients["researcher"], project,
                              head(data_dir / "gsm8k" / "example_model_solutions.jsonl.gz", 3),
                              name="example_model_solutions.jsonl", format="gsm8k-examples"))
    assert examples["records"] == 3
    solutions = Solution.objects.filter(project=project)
    assert solutions.count() == 12  # four model solutions per GSM8K problem
    assert solutions.values("problem").distinct().count() == 3
