"""Snapshots over the API: list, "snapshot now", download with no way out of the folder;
and the generation figures the researcher page reads."""
import gzip
import re

import pytest
from django.urls import reverse

from labeling.exports import ExportFilters, get_exporter, snapshots
from labeling.models import Project
from tests.factories import make_annotator, make_solution, rated_pass, make_project


pytestmark = pytest.mark.usefixtures("export_dir")


@pytest.fixture
def rated(project):
    rated_pass(make_solution(project), make_annotator("someone"), [1, 1, -1])
    return project


def listing(client, project):
    answer = client.get(reverse("api:project-snapshots", args=[project.pk]))
    assert answer.status_code == 200, answer.content
    return answer.json()


def test_snapshot_now_writes_one_and_lists_it(clients, rated, eager):
    assert listing(clients["researcher"], rated)["snapshots"] == []

    answer = clients["researcher"].post(reverse("api:project-snapshots", args=[rated.pk]))

    assert answer.status_code == 202
    body = answer.json()
    [row] = body["snapshots"]
    assert row["name"].startswith(f"math-phase-2-{rated.pk}-2")
    assert body["job"]["state"] == "done" and body["job"]["name"] == row["name"]
    assert body["keep_last"] == 2 and body["max_age_days"] == 0  # export_dir's settings
    assert listing(clients["lead"], rated)["snapshots"] == [row]

    download = clients["researcher"].get(row["url"])
    assert download.status_code == 200
    assert download["Content-Type"] == "application/gzip"
    assert download["Content-Disposition"] == f'attachment; filename="{row["name"]}"'
    data = gzip.decompress(b"".join(download.streaming_content)).decode()
    assert data.splitlines() == list(get_exporter("prm800k")(ExportFilters(project_id=rated.pk)))
    assert row["size"] == len(b"".join(clients["lead"].get(row["url"]).streaming_content))


def test_a_failed_job_is_reported_with_its_reason(clients, rated, settings, tmp_path, eager):
    settings.STEPMARK_EXPORT_DIR = tmp_path / "blocked"
    settings.STEPMARK_EXPORT_DIR.write_text("a file where the folder should be")
    body = clients["researcher"].post(reverse("api:project-snapshots", args=[rated.pk])).json()
    assert body["job"]["state"] == "failed" and "blocked" in body["job"]["error"]


def test_who_may_do_what(clients, rated, eager):
    url = reverse("api:project-snapshots", args=[rated.pk])
    assert clients["annotator"].get(url).status_code == 403
    assert clients["annotator"].post(url).status_code == 403
    assert clients["lead"].post(url).status_code == 403  # leads read, researchers run jobs
    assert clients["anonymous"].get(url).status_code in (401, 403)
    name = snapshots.export_project_snapshot(rated, snapshots_dir()).name
    download = reverse("api:project-snapshot-download", args=[rated.pk, name])
    assert clients["annotator"].get(download).status_code == 403
    assert clients["nobody"].get(download).status_code == 403
    assert clients["lead"].get(download).status_code == 200


def snapshots_dir():
    from django.conf import settings

    return settings.STEPMARK_EXPORT_DIR


def test_a_download_cannot_leave_the_projects_folder(clients, rated, export_dir):
    other = make_project(name="Other")
    rated_pass(make_solution(other), make_annotator("bob"), [1])
    theirs = snapshots.export_project_snapshot(other, export_dir).name
    secret = export_dir / "secret-20250101T000000Z.jsonl.gz"
    secret.write_bytes(gzip.compress(b"secret\n"))
    mine = snapshots.export_project_snapshot(rated, export_dir)
    (mine.parent / "linked-20250101T000000Z.jsonl.gz").symlink_to(secret)

    client = clients["researcher"]
    base = f"/api/projects/{rated.pk}/snapshots/"
    for name in [theirs, "linked-20250101T000000Z.jsonl.gz", "..%2Fsecret-20250101T000000Z.jsonl.gz",
                 "%2E%2E", ".hidden-20250101T000000Z.jsonl.gz", "x.txt"]:
        answer = client.get(base + name + "/")
        assert answer.status_code == 404, name
    assert client.get(base + mine.name + "/").status_code == 200
    # Someone else's project id with my snapshot's name finds nothing either.
    assert client.get(f"/api/projects/{other.pk}/snapshots/{mine.name}/").status_code == 404
    assert client.get(f"/api/projects/999999/snapshots/{mine.name}/").status_code == 404


def test_generation_stats_for_researchers_only(clients, project):
    gen = make_solution(project, generation=0, is_correct=False, verifier_score=0.9)
    ann = make_annotator("someone")
    rated_pass(gen, ann, [1, -1], seconds=90)
    url = reverse("api:project-generation-stats", args=[project.pk])
    for role in ("annotator", "lead", "nobody"):
        assert clients[role].get(url).status_code == 403, role
    [row] = clients["researcher"].get(url).json()["generations"]
    assert row["generation"] == 0 and row["selected"] == 1 and row["rated"] == 1 and row["found_wrong"] == 1
    assert row["hit_rate"] == 1.0 and row["median_seconds"] == 90.0 and row["wrong_answer"] == 1


@pytest.mark.parametrize("params, name", [
    ({"format": "prm800k", "gzip": "1"}, r"math-phase-2-prm800k-{stamp}\.jsonl\.gz"),
    ({"format": "prm800k-consensus", "gzip": "1"}, r"math-phase-2-prm800k-consensus-{stamp}\.jsonl\.gz"),
    ({"format": "trl", "gzip": "1"}, r"math-phase-2-trl-{stamp}\.jsonl\.gz"),
    ({"format": "trl_neutral_negative"}, r"math-phase-2-trl_neutral_negative-{stamp}\.jsonl"),
    ({"format": "trl-parquet"}, r"math-phase-2-trl-parquet-{stamp}\.parquet"),
    ({"format": "prm800k", "gzip": "1", "generation": "3"}, r"math-phase-2-prm800k-gen3-{stamp}\.jsonl\.gz"),
    ({"format": "trl", "generation": ["6", "3,6"]}, r"math-phase-2-trl-gen3\+6-{stamp}\.jsonl"),
])
def test_the_download_is_named_by_format_and_generation(clients, rated, params, name):
    # Files of one project in several formats (or generations) must not pass for one another.
    answer = clients["researcher"].get(reverse("api:project-export", args=[rated.pk]), params)
    assert answer.status_code == 200
    pattern = name.format(stamp=r"\d{8}T\d{6}Z")
    assert re.fullmatch(f'attachment; filename="{pattern}"', answer["Content-Disposition"]), \
        answer["Content-Disposition"]
