"""The researcher page in real Chromium: the generation figures, "Snapshot now" writing a
snapshot that the page lists and serves, and a failed snapshot saying why.

The snapshot job runs in Celery's eager mode (``STEPMARK_BROKER=eager``'s setting) inside the
live server; the whole loop with a real worker is tested in tests/scoring's e2e tests.
"""
import gzip

import pytest

from annotator.celery import app
from labeling.exports import ExportFilters, get_exporter
from tests.labeling.dashboard_data import make_annotator, make_project, make_solution, rated_pass

from .conftest import log_in, make_user, screenshot

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def eager():
    app.conf.task_always_eager = True
    yield
    app.conf.task_always_eager = False


@pytest.fixture
def project(settings, tmp_path):
    settings.STEPMARK_EXPORT_DIR = tmp_path / "exports"
    project = make_project(name="Convincing <i>wrong</i> answers")
    ann = make_annotator("ann")
    found = make_solution(project, generation=0, is_correct=False, verifier_score=0.93, selection_rank=1,
                          final_answer="12")
    clean = make_solution(project, generation=0, is_correct=True, verifier_score=0.71, selection_rank=2)
    rated_pass(found, ann, [1, -1], seconds=80)
    rated_pass(clean, ann, [1, 1, 1, 1], seconds=40)
    make_user("res", "researcher")
    return project


def open_research(page, live_server, project):
    log_in(page, live_server, "res")
    page.click(f'[data-project-id="{project.pk}"] a.research-link')
    page.wait_for_selector('#research[data-state="ready"]')


def test_researcher_takes_a_snapshot_and_downloads_it(page, live_server, project, eager, tmp_path):
    open_research(page, live_server, project)
    assert page.locator("h1").first.inner_text().startswith("Convincing <i>wrong</i> answers")
    for name in ("generations", "checkpoints", "snapshots", "on-demand-exports"):
        assert page.locator(f'[data-testid="{name}"]').count() == 1, name

    row = page.locator('[data-testid="generation-stats"] tr[data-generation="0"]')
    cells = row.locator("td").all_inner_texts()
    assert cells[:6] == ["0", "2", "1", "2", "1", "50%"]
    assert cells[6] == "60 s"
    assert page.locator('[data-testid="hit-rate-chart"] g.column').count() == 1
    assert "people found an error" in page.locator(".picks li").first.inner_text()
    assert "No snapshot yet" in page.locator('[data-testid="snapshot-list"]').inner_text()

    page.click('[data-testid="snapshot-now"]')
    link = page.locator('[data-testid="snapshot-list"] a').first
    link.wait_for()
    name = link.inner_text()
    assert name.startswith(f"convincing-iwrongi-answers-{project.pk}-") and name.endswith(".jsonl.gz")
    status = page.locator('[data-testid="snapshot-status"]')
    assert status.get_attribute("data-state") == "done" and name in status.inner_text()
    screenshot(page, "research-snapshot")

    with page.expect_download() as info:
        link.click()
    download = info.value
    assert download.suggested_filename == name
    saved = tmp_path / "downloaded.jsonl.gz"
    download.save_as(saved)
    lines = gzip.decompress(saved.read_bytes()).decode().splitlines()
    assert lines == list(get_exporter("prm800k")(ExportFilters(project_id=project.pk)))
    assert len(lines) == 2

    # The on-demand exports point at the streaming export endpoint.
    hrefs = page.locator('[data-testid="on-demand-exports"] a').evaluate_all("els => els.map(e => e.href)")
    assert f"{live_server.url}/api/projects/{project.pk}/export/?format=prm800k&gzip=1" in hrefs


def test_a_failed_snapshot_says_why(page, live_server, project, eager, settings, tmp_path):
    settings.STEPMARK_EXPORT_DIR = tmp_path / "not-a-folder"
    settings.STEPMARK_EXPORT_DIR.write_text("a file where the folder should be")
    open_research(page, live_server, project)
    page.click('[data-testid="snapshot-now"]')
    status = page.locator('[data-testid="snapshot-status"][data-state="failed"]')
    status.wait_for()
    assert "The snapshot failed" in status.inner_text() and "not-a-folder" in status.inner_text()
