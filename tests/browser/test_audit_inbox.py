"""The audit log and the reports inbox in real Chromium, at desktop and phone width.

A lead pauses an annotator from the drill-down (refused without a reason, then with one),
resolves a give-up report with a note in the inbox, and finds both in the audit log, filtered
by action, with the CSV of the same filter; the pages fit a 390 px phone without sideways
scrolling and without serious axe-core violations.
"""
import pytest

from labeling.models import AnnotatorProjectStatus, ReportResolution
from tests.factories import make_project, make_solution, make_user, rated_pass

from .axe import axe_violations
from .conftest import log_in, screenshot
from .test_charts import fits
from .test_workspace_small_screens import PHONE

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

DESKTOP = dict(viewport={"width": 1280, "height": 800})


@pytest.fixture
def team():
    project = make_project(name="Audit trail", overlap=2)
    make_user("lead", "lead")
    ann = make_user("ann", "annotator").annotator
    steps = ["We have $2x + 3 = 7$.", "So $2x = 4$.", "# Answer\n\n2"]
    rated_pass(make_solution(project, steps, problem="Find $x$ if $2x + 3 = 7$.", answer="2"), ann, [1, 1, 1])
    for reason, note in (("give_up", "I cannot follow step 2"), ("bad_problem", "The figure is missing")):
        report = rated_pass(make_solution(project, steps, problem="In the figure, find $AB$.", answer="2"), ann, [None])
        report.finish_reason, report.finish_note = reason, note
        report.save()
    return project, ann


def opened(browser, emulation):
    context = browser.new_context(bypass_csp=True, **emulation)  # bypassed for axe-core only
    context.set_default_timeout(10000)
    page = context.new_page()
    errors = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    return context, page, errors


def shot(page, name):
    screenshot(page, name, full_page=True)


def test_a_lead_pauses_with_a_reason_resolves_a_report_and_reads_both_in_the_audit_log(browser, live_server, team):
    project, ann = team
    context, page, errors = opened(browser, DESKTOP)
    try:
        log_in(page, live_server, "lead")
        page.click(f'[data-project-id="{project.pk}"] a.dashboard-link')
        page.wait_for_selector('#dashboard[data-state="ready"]')
        assert page.locator("a.audit-link").count() == 1 and page.locator("a.inbox-link").count() == 1

        # The drill-down: no pause without a reason; with one, the annotator is paused.
        page.goto(f"{live_server.url}/projects/{project.pk}/dashboard/annotators/{ann.pk}/")
        page.wait_for_selector('#dashboard[data-state="ready"][data-status="active"]')
        page.click('[data-testid="standing-action"][data-action="pause"]')
        assert "Give a reason" in page.locator(".standing-action + p").inner_text()
        assert not AnnotatorProjectStatus.objects.filter(annotator=ann, state="paused").exists()
        page.fill('[data-testid="standing-reason"]', "Rated 40 steps in a minute")
        page.click('[data-testid="standing-action"][data-action="pause"]')
        page.wait_for_selector('#dashboard[data-status="paused"]')
        assert AnnotatorProjectStatus.objects.get(annotator=ann).reason == "Rated 40 steps in a minute"

        # The inbox: two open reports; resolve the give-up with a note.
        page.goto(f"{live_server.url}/projects/{project.pk}/inbox/")
        page.wait_for_selector('#inbox[data-state="ready"]')
        reports = page.locator('[data-testid="report"]')
        assert reports.count() == 2 and page.locator('[data-testid="inbox-count"]').inner_text() == "2 open reports"
        give_up = reports.filter(has_text="I cannot follow step 2")
        assert "Gave up" in give_up.inner_text() and give_up.locator(".katex").count() > 0
        give_up.locator("textarea").fill("Explained step 2 to them")
        give_up.locator("button", has_text="Resolve").click()
        give_up.locator('[data-testid="resolution"]').wait_for()
        assert "Explained step 2 to them" in give_up.locator('[data-testid="resolution"]').inner_text()
        assert ReportResolution.objects.get().note == "Explained step 2 to them"
        shot(page, "inbox-desktop")
        page.click('[data-state-tab="resolved"]')
        page.wait_for_selector('#inbox[data-state="ready"] [data-testid="inbox-count"]:has-text("1 resolved report")')

        # The audit log: both actions, newest first; filtered by action; the CSV of that filter.
        page.goto(f"{live_server.url}/projects/{project.pk}/audit/")
        page.wait_for_selector('#audit[data-state="ready"]')
        rows = page.locator(".audit-table tbody tr")
        assert [rows.nth(i).get_attribute("data-action") for i in range(rows.count())] == [
            "report.resolve", "annotator.pause"]
        assert "Rated 40 steps in a minute" in rows.nth(1).inner_text() and "lead" in rows.nth(1).inner_text()
        shot(page, "audit-desktop")
        page.select_option('select[name="action"]', "annotator.pause")
        page.click('.audit-filters button[type="submit"]')
        page.wait_for_selector('[data-testid="audit-count"]:has-text("Entries 1–1 of 1")')
        assert "action=annotator.pause" in page.url
        href = page.locator('[data-testid="audit-csv"]').get_attribute("href")
        assert "action=annotator.pause" in href and "format=csv" in href
        body = page.request.get(live_server.url + href).text()
        assert body.count("\n") == 2 and "Rated 40 steps in a minute" in body
        assert not errors, errors
    finally:
        context.close()


def test_the_audit_log_and_the_inbox_fit_a_phone(browser, live_server, team):
    project, ann = team
    from django.db import transaction

    from labeling.quality import screening
    from django.contrib.auth import get_user_model
    lead = get_user_model().objects.get(username="lead")
    with transaction.atomic():
        screening.pause(ann, project, by=lead, reason="Rated 40 steps in a minute, far faster than the team")
    context, page, errors = opened(browser, PHONE)
    try:
        log_in(page, live_server, "lead")
        for name, ready in (("audit", '#audit[data-state="ready"]'), ("inbox", '#inbox[data-state="ready"]')):
            page.goto(f"{live_server.url}/projects/{project.pk}/{name}/")
            page.wait_for_selector(ready)
            shot(page, f"{name}-390")
            assert fits(page), f"{name} scrolls sideways on a phone"
            assert axe_violations(page) == [], name
        assert not errors, errors
    finally:
        context.close()
