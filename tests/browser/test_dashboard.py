"""The lead dashboard in real Chromium: a failed gold item pauses an annotator; the lead sees
it on the dashboard, opens their passes beside the gold, and resumes them."""
import datetime

import pytest
from django.utils import timezone

from labeling.models import Assignment
from labeling.quality import gold, gold_passes, screening
from labeling.work import queue, submission
from tests.factories import make_solution, make_user, make_project

from .conftest import log_in, screenshot

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

PROBLEM = dict(problem="Find $x$ if $2x + 3 = 7$.", answer="2")


def submit(solution, annotator, values):
    """Hand the solution to ``annotator`` and submit ``values`` through the labelling rules."""
    now = timezone.now()
    assignment = Assignment.objects.create(
        project=solution.project, solution=solution, annotator=annotator, handed_out_at=now,
        lease_expires_at=now + datetime.timedelta(minutes=30), is_quality_control=solution.is_gold,
    )
    queue.recount_live_assignments(solution.project)
    ratings = [{"position": p, "value": v} for p, v in enumerate(values)]
    reason = "found_error" if -1 in values else "solution"
    return submission.submit(assignment, finish_reason=reason, ratings=ratings, client_elapsed_ms=45_000)


@pytest.fixture
def paused_by_gold():
    from labeling.models import Project

    project = make_project(name="Phase 2 <b>quality</b>", overlap=2, gold_threshold=0.7,
                                     gold_min_passes=1)
    make_user("lead", "lead")
    ann = make_user("ann", "annotator").annotator
    bob = make_user("bob", "annotator").annotator
    steps = ["We have $2x + 3 = 7$.", "So $2x = 4$.", "Hence $x = 3$.", "# Answer\n\n3"]
    for _ in range(2):
        ordinary = make_solution(project, steps, **PROBLEM)
        submit(ordinary, ann, [1, 1, -1])
        submit(ordinary, bob, [1, 1, -1])
    item = make_solution(project, steps, **PROBLEM)
    gold.set_gold(item, {(0, 0): 1, (1, 0): 1, (2, 0): -1})
    submit(item, bob, [1, 1, -1])
    submit(item, ann, [1, 1, 1, 1])  # misses the error the gold marks
    gold_passes.score_pending_gold_passes()  # the scheduled job scores both passes: ann is paused
    assert screening.status_of(ann, project).state == screening.PAUSED
    return project, ann, bob


def test_lead_sees_a_paused_annotator_and_resumes_them(page, live_server, paused_by_gold):
    project, ann, bob = paused_by_gold
    log_in(page, live_server, "lead")
    page.click(f'[data-project-id="{project.pk}"] a.dashboard-link')
    page.wait_for_selector('#dashboard[data-state="ready"]')
    assert page.locator("h1").first.inner_text().startswith("Phase 2 <b>quality</b>")  # text, not markup

    paused = page.locator('[data-testid="paused"]')
    assert "ann" in paused.inner_text() and "rolling gold score" in paused.inner_text()
    row = page.locator(f'[data-testid="annotator-table"] tr[data-annotator="{ann.pk}"]')
    assert row.get_attribute("class") == "blocked" and row.get_attribute("data-status") == "paused"
    for chart in ("agreement-over-time", "gold-chart", "throughput-chart", "distribution-chart"):
        assert page.locator(f'[data-testid="{chart}"]').count() == 1
    assert page.locator('[data-testid="gold-chart"] g.bar').count() == 2

    # Sorting by gold score puts the failing annotator first, then last.
    header = page.locator('[data-testid="annotator-table"] th[data-key="gold_score"]')
    header.click()
    first = page.locator('[data-testid="annotator-table"] tbody tr').first
    assert first.get_attribute("data-annotator") == str(ann.pk)
    header.click()
    assert first.get_attribute("data-annotator") == str(bob.pk)
    screenshot(page, "dashboard-paused")
    # The small tables: no generation yet; 19 step ratings; two ordinary solutions, every slot taken.
    assert page.locator('[data-testid="per-generation"] th').all_inner_texts() == [
        "Generation", "α", "95% interval", "Ratings"]
    cells = page.locator('[data-testid="per-generation"] tbody td').all_inner_texts()
    assert cells[0] == "none" and cells[3] == "19"
    assert page.locator('[data-testid="queue"] th').all_inner_texts() == ["Generation", "Solutions", "Open", "Slots left"]
    assert page.locator('[data-testid="queue"] tbody td').all_inner_texts() == ["none", "2", "0", "0"]

    paused.locator("a", has_text="ann").click()
    page.wait_for_selector('#dashboard[data-state="ready"][data-status="paused"]')
    gold_pass = page.locator("article.pass").first  # newest first: the gold item
    assert "gold item" in gold_pass.inner_text()
    assert gold_pass.locator("tr.off-gold").count() == 1  # +1 where the gold says -1
    assert gold_pass.locator(".katex").count() > 0  # steps rendered with KaTeX
    page.wait_for_selector('[data-testid="figures"] dl')
    screenshot(page, "dashboard-annotator-paused")

    page.click('[data-testid="standing-action"][data-action="resume"]')
    page.wait_for_selector('#dashboard[data-status="active"]')
    assert screening.status_of(ann, project).state == screening.ACTIVE

    page.goto(f"{live_server.url}/projects/{project.pk}/dashboard/")
    page.wait_for_selector('#dashboard[data-state="ready"]')
    row = page.locator(f'[data-testid="annotator-table"] tr[data-annotator="{ann.pk}"]')
    assert row.get_attribute("data-status") == "active"
    assert "Nobody is paused" in page.locator('[data-testid="paused"]').inner_text()


def test_annotators_cannot_open_the_dashboard(page, live_server, paused_by_gold):
    project, _, _ = paused_by_gold
    log_in(page, live_server, "ann")
    assert page.locator("a.dashboard-link").count() == 0
    response = page.goto(f"{live_server.url}/projects/{project.pk}/dashboard/")
    assert response.status == 403
