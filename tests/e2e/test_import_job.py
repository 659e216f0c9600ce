"""An upload imported by a real Celery worker: the API answers 202 at once, the worker imports the
file from disk and deletes it, the poll follows it to done; a bad line fails it with nothing stored."""
import io

import pytest
from django.urls import reverse

from labeling.models import ImportJob, Solution
from tests.e2e.conftest import wait_for
from tests.factories import client_for, make_project, make_user, raw_completions

pytestmark = pytest.mark.e2e


def upload(client, project, data, name):
    file = io.BytesIO(data)
    file.name = name
    answer = client.post(reverse("api:project-import", args=[project.pk]),
                         {"file": file, "format": "completions", "split": "paragraphs"}, format="multipart")
    assert answer.status_code == 202, answer.content
    return wait_for(lambda: (b := client.get(answer["Location"]).json())["state"] not in ("queued", "running") and b,
                    timeout=120, every=0.2, message="the import job")


def test_a_worker_imports_the_upload_and_a_bad_line_stores_nothing(worker_factory, settings, tmp_path):
    settings.STEPMARK_IMPORT_DIR = tmp_path / "imports"
    worker_factory(STEPMARK_IMPORT_DIR=settings.STEPMARK_IMPORT_DIR).start()
    project = make_project(name="e2e import")
    researcher = client_for(make_user("researcher", "researcher"))

    done = upload(researcher, project, raw_completions(1200), "outputs.jsonl")
    assert done["state"] == "done", done
    assert (done["result"]["records"], done["result"]["created"]) == (1200, 1200)
    assert done["progress"]["lines_read"] == 1200 and done["progress"]["bytes_read"] == done["bytes_total"]
    assert Solution.objects.filter(project=project).count() == 1200

    failed = upload(researcher, project, raw_completions(900, start=5000) + b"{oops\n", "broken.jsonl")
    assert failed["state"] == "failed"
    assert (failed["error"]["file"], failed["error"]["line"]) == ("broken.jsonl", 901)
    assert Solution.objects.filter(project=project).count() == 1200
    assert list(settings.STEPMARK_IMPORT_DIR.iterdir()) == []
    assert ImportJob.objects.filter(project=project).count() == 2
