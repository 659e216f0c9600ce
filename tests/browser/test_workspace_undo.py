"""Undo a submit in the workspace (issue #30): the confirmation offers "undo (z)" for a few
seconds; z reopens the pass with its ratings in place of the next solution, which comes back
after the pass is submitted again (labeling/work/submission.py ``unsubmit``)."""
import pytest

from labeling.models import Assignment, Rating
from tests.factories import make_solution, make_task, make_user

from .conftest import log_in, open_workspace, screenshot

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

CONFIRMATION = "() => document.querySelector('[data-testid=submit-confirmation]').textContent"


def ratings_shown(page):
    return [page.locator(".ws-step").nth(i).get_attribute("data-rating") for i in range(page.locator(".ws-step").count())]


def test_z_after_a_submit_brings_the_pass_back_with_its_ratings_and_it_is_submitted_again(page, live_server):
    project, first = make_task(["First solution, step one.", "First solution, step two."])
    make_solution(project, ["Second solution, step one.", "Second solution, step two."], problem="Find $y$.")
    make_user("ann", "annotator")
    log_in(page, live_server, "ann", next_path=None)
    open_workspace(page, live_server, project)
    page.keyboard.press("1")
    page.keyboard.press("2")
    page.keyboard.press("Enter")
    page.wait_for_function(f"() => ({CONFIRMATION})().startsWith('Submitted.')")
    mine = Assignment.objects.get(state=Assignment.SUBMITTED)  # the queue's order decides which came first
    sent, then = ("First", "Second") if mine.solution_id == first.pk else ("Second", "First")
    page.wait_for_function(f"() => document.body.textContent.includes('{then} solution, step one.')")
    offer = page.locator("[data-testid=undo-submit]")
    assert offer.is_visible() and offer.inner_text() == "undo (z)"
    # A button the size of its words under the confirmation, not a bar stretched across the page.
    assert offer.bounding_box()["width"] < 200
    screenshot(page, "workspace-undo-offered")

    page.keyboard.press("z")
    page.wait_for_function(f"() => ({CONFIRMATION})().startsWith('Reopened')")
    page.wait_for_selector('#workspace[data-state="working"]')
    assert f"{sent} solution, step one." in page.inner_text("#workspace")
    assert f"{then} solution" not in page.inner_text("#workspace")
    assert ratings_shown(page) == ["1", "0"] and not offer.is_visible()
    page.wait_for_function("() => document.querySelector('[data-testid=done-today]').textContent === '0 done today'")
    mine.refresh_from_db()
    assert mine.state == Assignment.ACTIVE
    screenshot(page, "workspace-undo-reopened")

    page.keyboard.press("Enter")  # as sent: every step rated, so it finishes as before
    page.wait_for_function(f"() => ({CONFIRMATION})().startsWith('Submitted.')")
    page.wait_for_function(f"() => document.body.textContent.includes('{then} solution, step one.')")
    mine.refresh_from_db()
    assert mine.state == Assignment.SUBMITTED and mine.finish_reason == "solution"
    assert sorted(Rating.objects.filter(assignment=mine).values_list("step__position", "value")) == [(0, 1), (1, 0)]
    assert Assignment.objects.exclude(pk=mine.pk).get().state == Assignment.ACTIVE  # the next one, resumed
    assert Assignment.objects.count() == 2
