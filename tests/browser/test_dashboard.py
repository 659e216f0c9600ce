"""The lead dashboard in real Chromium: a failed gold item pauses an annotator; the lead sees
it on the dashboard, opens their passes beside the gold, and resumes them."""
import datetime

import pytest
from django.utils import timezone

from labeling.models import Assignment
from labeling.quality import gold, gold_passes, screening
from labeling.work import queue, submission
from tests.factories import careless_team, gold_sweep_time, make_gold, make_project, make_solution, make_user

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
    gold_passes.score_pending_gold_passes(now=gold_sweep_time())  # the scheduled job scores both passes: ann is paused
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
    assert row.get_attribute("data-labeler") == str(ann.uuid)  # the exports' labeler, to join them
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
    assert page.locator('[data-testid="labeler-id"]').inner_text() == str(ann.uuid)
    page.click('[data-testid="copy-labeler"]')
    page.wait_for_function("""() => document.querySelector('[data-testid="copy-labeler"]').textContent !== 'Copy'""")
    screenshot(page, "dashboard-annotator-paused")

    page.click('[data-testid="standing-action"][data-action="resume"]')
    page.wait_for_selector('#dashboard[data-status="active"]')
    assert screening.status_of(ann, project).state == screening.ACTIVE

    page.goto(f"{live_server.url}/projects/{project.pk}/dashboard/")
    page.wait_for_selector('#dashboard[data-state="ready"]')
    row = page.locator(f'[data-testid="annotator-table"] tr[data-annotator="{ann.pk}"]')
    assert row.get_attribute("data-status") == "active"
    assert "Nobody is paused" in page.locator('[data-testid="paused"]').inner_text()


def test_a_screening_pass_is_named_as_one_in_the_drill_down(page, live_server):
    project = make_project(name="Screened", requires_screening=True, screening_threshold=0.9)
    make_user("lead", "lead")
    ann = make_user("ann", "annotator").annotator
    item = make_gold(project, [1, -1], generation=-1, is_screening=True)  # PRM800K's screening round
    task = queue.next_assignment(ann, project)  # a newcomer is handed the screening item first
    assert task.solution == item and task.is_screening
    # Misses the error: screening failed, decided at the submit.
    submission.submit(task, finish_reason="solution", ratings=[{"position": p, "value": 1} for p in range(2)])
    assert screening.status_of(ann, project).state == screening.FAILED
    log_in(page, live_server, "lead", next_path=f"/projects/{project.pk}/dashboard/annotators/{ann.pk}/")
    page.wait_for_selector('#dashboard[data-state="ready"]')
    head = page.locator("article.pass .pass-head")
    assert head.count() == 1
    text = head.first.inner_text()
    assert f"Solution {item.pk}" in text and "screening item (50% agreement with the gold)" in text
    assert "gold item" not in text and "generation" not in text


def test_annotators_cannot_open_the_dashboard(page, live_server, paused_by_gold):
    project, _, _ = paused_by_gold
    log_in(page, live_server, "ann")
    assert page.locator("a.dashboard-link").count() == 0
    response = page.goto(f"{live_server.url}/projects/{project.pk}/dashboard/")
    assert response.status == 403


@pytest.fixture
def careless():
    make_user("lead", "lead")
    project = make_project(name="Phase 2 team", overlap=4)
    return project, careless_team(project)


def test_lead_sees_the_careless_annotator_flagged_in_words(page, live_server, careless):
    """Issue #30: after fast, careless rating an annotator showed as a plain "active"."""
    project, team = careless
    eve = team["eve"]
    log_in(page, live_server, "lead", next_path=None)
    page.goto(f"{live_server.url}/projects/{project.pk}/dashboard/")
    page.wait_for_selector('#dashboard[data-state="ready"]')

    flagged = page.locator('[data-testid="flagged"]')
    assert flagged.locator("h2").inner_text() == "Flagged annotators (1)"
    words = flagged.inner_text()
    for text in ("eve", "too fast", "0.1 s per step; team median 15 s", "low gold score", "gold score 0.58",
                 "low agreement", "one-sided ratings", "+1 on 92% of main steps"):
        assert text in words
    table = page.locator('[data-testid="annotator-table"]')
    row = table.locator(f'tr[data-annotator="{eve.pk}"]')
    assert row.get_attribute("class") == "flagged"
    assert row.locator('td[data-key="flags"]').inner_text().split("\n")[0].startswith("too fast")
    assert row.locator("td.flagged-cell").evaluate_all("cells => cells.map(c => c.dataset.key)") == [
        "gold_score", "kappa_majority", "share_plus", "median_step_seconds"]
    # Colour as well as words: the flagged cell is not the plain cell's white.
    colour = row.locator('td[data-key="gold_score"]').evaluate("c => getComputedStyle(c).backgroundColor")
    assert colour not in ("rgba(0, 0, 0, 0)", "rgb(255, 255, 255)")
    for name in ("bea", "cal", "dan"):
        assert table.locator(f'tr[data-annotator="{team[name].pk}"]').get_attribute("data-flags") == ""
    header = table.locator('th[data-key="kappa_majority"]')
    assert header.inner_text().startswith("κ vs others' majority") and "Leave-one-out" in header.get_attribute("title")
    # The leave-one-out figure differs per person (it was one 0.29 for everyone).
    kappas = table.locator('td[data-key="kappa_majority"]').all_inner_texts()
    assert len(set(kappas)) == 4 and all("[" in k for k in kappas)
    # Sortable by the flags: most flags first.
    flags_header = table.locator('th[data-key="flags"]')
    flags_header.click()
    flags_header.click()
    assert flags_header.get_attribute("aria-sort") == "descending"
    assert table.locator("tbody tr").first.get_attribute("data-annotator") == str(eve.pk)
    assert "main steps" in page.locator('[data-testid="chart-distribution"] h2').inner_text()
    page.locator('[data-testid="flagged"]').scroll_into_view_if_needed()
    screenshot(page, "dashboard-flags")
    page.set_viewport_size({"width": 390, "height": 844})
    page.locator('[data-testid="flagged"]').scroll_into_view_if_needed()
    screenshot(page, "dashboard-flags-phone")
    assert page.evaluate("document.documentElement.scrollWidth") <= 390  # the page does not scroll sideways
    page.set_viewport_size({"width": 1280, "height": 900})

    # The lead sets a threshold: a bad one is refused beside its field, a good one redraws the flags.
    page.click(".flag-settings summary")
    page.fill("#flag-flag_fast_share", "1.5")
    page.click('[data-testid="flag-settings-form"] button[type="submit"]')
    page.wait_for_selector('[data-testid="flag-error-flag_fast_share"]:not(:empty)')
    page.fill("#flag-flag_fast_share", "0")
    page.click('[data-testid="flag-settings-form"] button[type="submit"]')
    page.wait_for_selector('#dashboard[data-flags-drawn="1"]')
    words = page.locator('[data-testid="flagged"]').inner_text()
    assert "too fast" not in words and "low gold score" in words
    project.refresh_from_db()
    assert project.flag_fast_share == 0

    # The drill-down: who voted what beside each of eve's ratings, disagreements said in words.
    page.locator('[data-testid="flagged"] a', has_text="eve").click()
    page.wait_for_selector('#dashboard[data-state="ready"]')
    page.wait_for_selector('[data-testid="figures"] dl')
    card = page.locator("article.pass").first
    assert card.locator("th").all_inner_texts()[-1] == "Others: who rated what"
    others = card.locator("td.others").first.inner_text()
    assert "bea" in others and "cal" in others and "dan" in others
    assert card.locator('[data-testid="disagree"]').count() >= 1
    assert "disagree (3 of 3)" in card.locator('[data-testid="disagree"]').first.inner_text()
    figures = page.locator('[data-testid="figures"]').inner_text()
    assert "low agreement" in figures and "κ against the others' majority" in figures
    assert "0.1 s / 0 s" in figures  # seconds per step with a decimal
    screenshot(page, "dashboard-annotator-others")
    page.set_viewport_size({"width": 390, "height": 844})
    card.scroll_into_view_if_needed()
    screenshot(page, "dashboard-annotator-others-phone")
    assert page.evaluate("document.documentElement.scrollWidth") <= 390


def test_an_overlap_one_project_says_what_agreement_needs(page, live_server):
    make_user("lead", "lead")
    project = make_project(name="Single pass", overlap=1)
    solo = make_user("solo", "annotator").annotator
    for _ in range(2):
        submit(make_solution(project, ["a", "b"], **PROBLEM), solo, [1, 1])
    log_in(page, live_server, "lead", next_path=None)
    page.goto(f"{live_server.url}/projects/{project.pk}/dashboard/")
    page.wait_for_selector('#dashboard[data-state="ready"]')
    overview = page.locator('[data-testid="overview"]').inner_text()
    assert "needs an overlap of at least 2" in overview and "resample" not in overview
