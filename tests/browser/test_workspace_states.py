"""The workspace's other states and guards: hostile text, a lost lease, a removed assignment, give up,
instructions, access."""
from datetime import timedelta

import pytest
from django.utils import timezone

from labeling.models import Annotator, Assignment
from labeling.work import queue
from tests.factories import PASSWORD, make_task, make_user

from .conftest import log_in, open_workspace, screenshot, stored_ratings, workspace_url

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

SCRIPT = "<script>window.__pwned=1</script>"
IMG = '<img src=x onerror="window.__pwned=2">'


def test_html_in_imported_text_is_shown_as_text(page, live_server):
    project, _ = make_task(
        [f"Try {SCRIPT} then $x^2$.", f"Also {IMG} here.", "# Answer\n\n2"],
        problem=f"Compute {IMG} and $1<2$.",
        answer=f"{SCRIPT}",
        alternatives={1: [f"{IMG}{SCRIPT}"]},
    )
    make_user("ann", "annotator")
    log_in(page, live_server, "ann", next_path=None)
    open_workspace(page, live_server, project)
    page.keyboard.press("1")
    page.keyboard.press("3")  # reveals the alternative at step 2 as well
    steps = page.inner_text(".ws-step-list")
    assert SCRIPT in steps and IMG in steps
    assert IMG in page.inner_text(".ws-problem") and SCRIPT in page.inner_text(".ws-answer")
    assert page.locator(".ws-step-list img, .ws-step-list script, .ws-task img, .ws-task script").count() == 0
    assert page.locator(".ws-step-list .katex").count() == 1  # math still renders
    assert page.evaluate("typeof window.__pwned") == "undefined"


def test_lost_lease_says_so_and_offers_the_next_task(page, live_server):
    project, solution = make_task(["Step one.", "Step two."], overlap=1, lease_seconds=600)
    make_user("ann", "annotator")
    log_in(page, live_server, "ann", next_path=None)
    open_workspace(page, live_server, project)

    # Ann walks away; her lease lapses and Bob takes the solution's only slot.
    Assignment.objects.filter(annotator__user__username="ann").update(
        lease_expires_at=timezone.now() - timedelta(minutes=1)
    )
    bob = Annotator.objects.get(user=make_user("bob", "annotator"))
    assert queue.next_assignment(bob, project).solution_id == solution.pk

    page.keyboard.press("1")
    page.wait_for_selector('#workspace[data-state="lost"]')
    assert "lease" in page.inner_text(".ws-panel").lower()
    screenshot(page, "workspace-lease-expired")
    assert stored_ratings("ann") == {}

    page.keyboard.press("n")  # the next task: nothing is left for Ann
    page.wait_for_selector('#workspace[data-state="empty"]')


def test_an_assignment_removed_under_the_page_says_so_and_offers_the_next_task(page, live_server):
    project, solution = make_task(["Step one.", "Step two."], overlap=3)
    make_user("ann", "annotator")
    log_in(page, live_server, "ann", next_path=None)
    open_workspace(page, live_server, project)
    mine = Assignment.objects.get(annotator__user__username="ann")
    page.keyboard.press("1")  # one rating saved and acknowledged: the page keeps a record
    page.wait_for_function(f"() => localStorage.getItem('stepmark:assignment:{mine.pk}') !== null")
    mine.delete()  # a lead removed it (or the database lost a fresh hand-out)

    page.keyboard.press("1")  # the next save answers 404
    page.wait_for_selector('#workspace[data-state="gone"]')
    assert "no longer exists" in page.inner_text(".ws-panel")
    assert page.evaluate(f"localStorage.getItem('stepmark:assignment:{mine.pk}')") is None
    screenshot(page, "workspace-assignment-gone")

    page.keyboard.press("n")  # the next task: the same solution has free slots, a new assignment
    page.wait_for_selector('#workspace[data-state="working"]')
    fresh = Assignment.objects.get(annotator__user__username="ann")
    assert fresh.pk != mine.pk and fresh.solution_id == solution.pk


def test_give_up_asks_for_a_reason_and_submits_it(page, live_server):
    project, _ = make_task(["Step one.", "Step two."], instructions="Rate **carefully**. <script>x()</script>")
    make_user("ann", "annotator")
    log_in(page, live_server, "ann", next_path=None)
    open_workspace(page, live_server, project)

    page.keyboard.press("?")  # the instructions open beside the work, not over it
    side = page.locator("aside.ws-side")
    side.wait_for(state="visible")
    assert side.locator("strong").inner_text() == "carefully"  # sanitized Markdown
    assert side.locator("script").count() == 0
    assert "<script>x()</script>" in side.inner_text()  # raw HTML shows as text
    assert page.locator(".ws-step.current").is_visible()
    screenshot(page, "workspace-instructions")
    page.keyboard.press("?")
    side.wait_for(state="hidden")

    page.keyboard.press("1")
    page.keyboard.press("Enter")  # not finished yet: says what is missing
    assert "Rate step 2 first" in page.inner_text(".ws-hint")
    page.keyboard.press("g")
    note = page.locator("dialog.ws-reason textarea")
    note.wait_for(state="visible")
    page.keyboard.press("Control+Enter")  # an empty reason is not sent: the dialog says why
    assert note.is_visible()
    assert page.locator("dialog.ws-reason .ws-field-error").is_visible()
    page.keyboard.type("I cannot follow step 2.")
    page.keyboard.press("Enter")  # a new line, as the dialog says
    page.keyboard.type("Nor step 3.")
    page.keyboard.press("Control+Enter")
    page.wait_for_selector('#workspace[data-state="empty"]')
    # Confirmed as what it was, not as "Submitted.", with the day's count (a give-up counts).
    page.wait_for_function("() => document.querySelector('[data-testid=submit-confirmation]').textContent"
                           " === 'Given up — the lead sees why. 1 done today.'")
    done = Assignment.objects.get(annotator__user__username="ann")
    assert (done.state, done.finish_reason) == ("submitted", "give_up")
    assert done.finish_note == "I cannot follow step 2.\nNor step 3."
    assert stored_ratings("ann") == {(0, 0): (1, False)}


def test_workspace_needs_login_and_the_annotator_role(page, live_server):
    project, _ = make_task(["Step one."])
    url = workspace_url(live_server, project)
    page.goto(url)
    assert "/accounts/login/" in page.url
    make_user("lee", "lead")
    # The login form (the other tests' log_in skips it), and its way back to the page asked for.
    page.fill("#id_username", "lee")
    page.fill("#id_password", PASSWORD)
    page.press("#id_password", "Enter")
    page.wait_for_url(url)
    assert page.goto(url).status == 403


def test_phase_one_rates_the_alternatives_at_every_step(page, live_server):
    project, _ = make_task(
        ["Step one.", "Step two."], alternatives={0: ["Other one.", "Third one."]}, stop_at_first_error=False,
    )
    make_user("ann", "annotator")
    log_in(page, live_server, "ann", next_path=None)
    open_workspace(page, live_server, project)
    order = []
    for key in "1231":
        node = page.locator(".ws-step.current")
        order.append((node.get_attribute("data-position"), node.get_attribute("data-alternative")))
        page.keyboard.press(key)
    assert order == [("0", "0"), ("0", "1"), ("0", "2"), ("1", "0")]
    page.keyboard.press("Enter")
    page.wait_for_selector('#workspace[data-state="empty"]')
    done = Assignment.objects.get(annotator__user__username="ann")
    assert (done.state, done.finish_reason) == ("submitted", "solution")
    assert stored_ratings("ann") == {(0, 0): (1, False), (0, 1): (0, False), (0, 2): (-1, False), (1, 0): (1, False)}
