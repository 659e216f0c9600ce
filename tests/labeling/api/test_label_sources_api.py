"""Machine labels over the API: a step-label file uploaded as an import job (its source names the
job), its preview with the labels, and the project's label sources listed with their counts,
to its leads and researchers only."""
import io
import json

import pytest
from django.test import TestCase
from django.urls import reverse

from labeling.access.roles import LEAD, RESEARCHER, grant_role
from labeling.models import ImportJob, LabelSource, StepLabel
from tests.factories import client_for, make_project, make_user
from tests.labeling.imports.test_step_labels import ROLLOUT_LINES, SHEPHERD_LINES


@pytest.fixture(autouse=True)
def import_dir(settings, tmp_path, eager):
    settings.STEPMARK_IMPORT_DIR = tmp_path / "imports"
    return settings.STEPMARK_IMPORT_DIR


def upload(client, project, lines, fmt, *, name, route="api:project-import", **fields):
    data = "".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines).encode()
    file = io.BytesIO(data)
    file.name = name
    with TestCase.captureOnCommitCallbacks(execute=True):
        return client.post(reverse(route, args=[project.pk]), {"file": file, "format": fmt, **fields},
                           format="multipart")


def sources(client, project):
    return client.get(reverse("api:project-label-sources", args=[project.pk]))


def test_an_uploaded_file_becomes_a_source_naming_its_job_and_is_listed_with_counts(clients, project, import_dir):
    researcher = clients["researcher"]
    answer = upload(researcher, project, SHEPHERD_LINES, "math-shepherd", name="shepherd.jsonl",
                    label_source="Math-Shepherd GSM8K")
    assert answer.status_code == 202, answer.content
    job = researcher.get(answer["Location"]).json()
    assert job["state"] == "done" and job["options"] == {"label_source": "Math-Shepherd GSM8K"}
    assert (job["result"]["unit"], job["result"]["created"], job["result"]["skipped"]) == ("labels", 6, 0)
    source = LabelSource.objects.get(project=project)
    assert source.details["import_job_id"] == job["id"] and source.details["file"] == "shepherd.jsonl"
    upload(researcher, project, ROLLOUT_LINES, "mc-rollouts", name="mc.jsonl")

    for role in ("researcher", "lead"):
        listed = sources(clients[role], project)
        assert listed.status_code == 200, (role, listed.content)
        body = listed.json()
        assert body["count"] == 2
        newest, first = body["results"]
        assert (first["name"], first["kind"]) == ("Math-Shepherd GSM8K", "rollouts")
        assert {key: first[key] for key in ("labels", "positive", "neutral", "negative", "without_value",
                                            "solutions")} == {"labels": 6, "positive": 5, "neutral": 0,
                                                              "negative": 1, "without_value": 0, "solutions": 2}
        assert first["details"]["format"] == "math-shepherd" and first["id"] == source.pk
        assert (newest["name"], newest["labels"], newest["negative"]) == ("mc-rollouts: mc.jsonl", 5, 2)
        assert newest["details"]["rollouts"] is None and newest["details"]["import_job_id"] is not None


def test_an_upload_with_a_bad_line_stores_nothing_and_the_job_names_it(clients, project):
    bad = [*SHEPHERD_LINES, {"input": "Q? Step 1: a ки", "label": "Q? Step 1: a *"}]
    job = clients["researcher"].get(upload(clients["researcher"], project, bad, "math-shepherd",
                                           name="bad.jsonl")["Location"]).json()
    assert job["state"] == "failed"
    assert (job["error"]["file"], job["error"]["line"], job["error"]["field"]) == ("bad.jsonl", 3, "label")
    assert not LabelSource.objects.exists() and not StepLabel.objects.exists()


def test_the_preview_shows_the_labels_and_stores_nothing(clients, project):
    answer = upload(clients["researcher"], project, ROLLOUT_LINES, "mc-rollouts", name="mc.jsonl",
                    route="api:project-import-preview")
    assert answer.status_code == 200, answer.content
    first = answer.json()["records"][0]
    assert first["problem"] == "What is $2 + 3$?" and first["solutions"][0]["final_answer"] == "6"
    assert [label["value"] for label in first["solutions"][0]["labels"]] == [1, -1]
    assert not ImportJob.objects.exists() and not LabelSource.objects.exists()
    tagged = upload(clients["researcher"], project, SHEPHERD_LINES, "math-shepherd", name="s.jsonl",
                    route="api:project-import-preview", tag="+")
    assert tagged.status_code == 400 and tagged.json()["field"] == "tag"


def test_the_list_is_scoped_to_the_projects_leads_and_researchers(clients, project):
    upload(clients["researcher"], project, ROLLOUT_LINES, "mc-rollouts", name="mc.jsonl")
    assert sources(clients["annotator"], project).status_code == 403
    assert sources(clients["anonymous"], project).status_code in (401, 403)
    other = make_project(name="elsewhere")
    for role in (LEAD, RESEARCHER):
        outsider = make_user(f"outsider-{role}", projects=[])
        grant_role(outsider, role, other)
        assert sources(client_for(outsider), project).status_code == 404
        assert sources(client_for(outsider), other).json()["count"] == 0
