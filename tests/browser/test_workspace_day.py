"""The annotator's day in the workspace (issue #20 item 4): picking the alternative a phase-1
solution goes on from, the keys of the text panels, the submit confirmation with today's count
and the cue that a new solution began."""
import json

import pytest

from labeling.exports import ExportFilters, get_exporter
from labeling.models import Annotator, Assignment, Step
from tests.factories import make_solution, make_task, make_user

from .axe import axe_violations
from .conftest import current, log_in, open_workspace, screenshot, wait_saved
from .test_workspace_more import PHASE_ONE, STEPS  # the same phase-1 task

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

# Both carry the solution on: completion 2 is right but makes no progress (0), completion 3 is +1.
OTHERS = ["Halve $2x = 4$ later; first note that $x$ is positive.", "Divide both sides by $2$: $x = 2$."]


def going_on(page):
    """The alternative index the page marks "the solution goes on from this one"."""
    marked = page.locator(".ws-step.continues")
    assert marked.count() == 1
    return marked.get_attribute("data-alternative")


def export_of(project, username):
    annotator = Annotator.objects.get(user__username=username)
    lines = [json.loads(line) for line in get_exporter("prm800k")(ExportFilters(project_id=project.pk))]
    [record] = [r for r in lines if r["labeler"] == str(annotator.uuid)]
    return record


def rated_to_two_ways_on(page, live_server, **fields):
    """ann's phase-1 task with step 1 +1, step 2 -1 and its alternatives 0 and +1: both can carry it on."""
    project, _ = make_task(STEPS, alternatives={1: OTHERS}, **{**PHASE_ONE, **fields})
    make_user("ann", "annotator")
    log_in(page, live_server, "ann", next_path=None)
    open_workspace(page, live_server, project)
    page.keyboard.press("1")
    for alternative, key in (("0", "3"), ("1", "2"), ("2", "1")):
        assert current(page) == ("1", alternative)
        page.keyboard.press(key)
    return project


def test_the_annotator_picks_completion_two_by_key_and_mouse_and_the_export_says_chosen_completion_1(
    page, live_server
):
    project = rated_to_two_ways_on(page, live_server)
    # Two completions can carry the solution on: the default is the +1 one, and p picks another
    # (digits always rate: tests/browser/test_workspace_keys.py).
    assert going_on(page) == "2" and current(page) == ("2", "0")
    assert "p switches to alternative 1" in page.inner_text("[data-testid=continuation]")
    screenshot(page, "workspace-pick-continuation")
    page.keyboard.press("p")  # completion 2 = alternative 1 (rated 0)
    assert going_on(page) == "1"
    assert page.locator('.ws-step.current').get_attribute("data-rating") == ""  # the key rated nothing

    # The mouse picks too, and the pick outlives a reload (the browser keeps it until the submit).
    page.locator('.ws-step[data-alternative="2"] .ws-pick').click()
    assert going_on(page) == "2"
    page.locator('.ws-step[data-alternative="1"] .ws-pick').click()
    assert going_on(page) == "1"
    wait_saved(page)
    page.reload()
    page.wait_for_selector('#workspace[data-state="working"]')
    assert going_on(page) == "1" and current(page) == ("2", "0")

    page.keyboard.press("1")
    page.keyboard.press("1")
    page.keyboard.press("Enter")
    page.wait_for_selector('#workspace[data-state="empty"]')
    steps = export_of(project, "ann")["label"]["steps"]
    assert [s["chosen_completion"] for s in steps] == [0, 1, 0, 0]
    assert [c["rating"] for c in steps[1]["completions"]] == [-1, 0, 1]


def test_without_a_pick_the_default_plus_one_alternative_is_chosen(page, live_server):
    project, _ = make_task(STEPS, alternatives={1: OTHERS}, **PHASE_ONE)
    make_user("ann", "annotator")
    log_in(page, live_server, "ann", next_path=None)
    open_workspace(page, live_server, project)
    for key in ("1", "3", "2", "1"):
        page.keyboard.press(key)
    page.keyboard.press("Enter")  # step 3 is still to rate: no pick, no rating, no submit
    assert "Rate step 3 first" in page.inner_text(".ws-hint")
    assert going_on(page) == "2" and current(page) == ("2", "0")
    assert Assignment.objects.get().state == Assignment.ACTIVE
    for key in ("1", "1", "Enter"):
        page.keyboard.press(key)
    page.wait_for_selector('#workspace[data-state="empty"]')
    assert [s["chosen_completion"] for s in export_of(project, "ann")["label"]["steps"]] == [0, 2, 0, 0]


def rate_to_own_step(page):
    page.keyboard.press("1")
    for _ in range(3):
        page.keyboard.press("3")
    assert current(page) == ("1", "human")


def test_the_own_step_editor_ignores_the_w_that_opens_it_also_after_a_reload_and_ctrl_enter_saves(
    page, live_server
):
    project, _ = make_task(STEPS, alternatives={1: OTHERS}, **PHASE_ONE)
    make_user("ann", "annotator")
    log_in(page, live_server, "ann", next_path=None)
    open_workspace(page, live_server, project)
    rate_to_own_step(page)
    assert "press w" in page.inner_text(".ws-hint").lower()

    page.keyboard.press("w")
    editor = page.locator(".ws-step.own textarea")
    assert editor.evaluate("el => el === document.activeElement")
    assert editor.input_value() == ""
    page.keyboard.type("Divide by $2$:")
    page.keyboard.press("Enter")  # a new line: only Ctrl+Enter saves, as the hint says
    page.keyboard.type("$x = 2$.")
    assert "is a new line" in page.inner_text(".ws-hint")
    assert not Step.objects.filter(source=Step.HUMAN).exists()

    # A reload with the typed text kept: the editor is back, and the w that opens it is not typed.
    page.reload()
    page.wait_for_selector('#workspace[data-state="working"]')
    editor = page.locator(".ws-step.own textarea")
    assert editor.input_value() == "Divide by $2$:\n$x = 2$."
    page.keyboard.press("w")
    assert editor.evaluate("el => el === document.activeElement")
    assert editor.input_value() == "Divide by $2$:\n$x = 2$."
    page.keyboard.press("Control+Enter")
    wait_saved(page)
    assert Step.objects.get(source=Step.HUMAN).text == "Divide by $2$:\n$x = 2$."
    assert page.locator(".ws-step.own textarea").count() == 0


def test_a_missing_reason_is_said_inline_and_ctrl_enter_sends_the_bad_problem_report(page, live_server):
    project, _ = make_task(["Step one.", "Step two."])
    make_user("ann", "annotator")
    log_in(page, live_server, "ann", next_path=None)
    open_workspace(page, live_server, project)
    page.keyboard.press("b")
    dialog = page.locator("dialog.ws-reason")
    dialog.wait_for(state="visible")
    assert "Ctrl+Enter sends" in dialog.inner_text() and "Enter new line" in dialog.inner_text()
    dialog.locator("button", has_text="Send").click()  # the mouse, with nothing written
    error = dialog.locator(".ws-field-error")
    assert error.is_visible() and "required" in error.inner_text()
    assert dialog.locator("textarea").get_attribute("aria-invalid") == "true"
    screenshot(page, "workspace-reason-required")
    page.keyboard.type("The problem has no question.")
    assert not error.is_visible()
    page.keyboard.press("Control+Enter")
    page.wait_for_selector('#workspace[data-state="empty"]')
    done = Assignment.objects.get()
    assert (done.finish_reason, done.finish_note) == ("bad_problem", "The problem has no question.")


def test_a_submit_is_confirmed_with_todays_count_and_the_next_solution_is_marked_new(page, live_server):
    project, _ = make_task(["First solution, step one.", "First solution, step two."])
    make_solution(project, ["Second solution, step one.", "Second solution, step two."], problem="Find $y$.")
    make_user("ann", "annotator")
    log_in(page, live_server, "ann", next_path=None)
    open_workspace(page, live_server, project)
    assert page.locator(".ws-new").is_visible()
    done_today = "(text) => document.querySelector('[data-testid=done-today]').textContent === text"
    page.wait_for_function(done_today, arg="0 done today")  # asked of /api/me/counts/ as the page opens
    assert not page.locator("[data-testid=timer]").is_visible()

    page.keyboard.press("1")
    assert not page.locator(".ws-new").is_visible()  # the cue goes with the first rating
    page.keyboard.press("1")
    page.keyboard.press("Enter")
    page.wait_for_function(
        "() => document.querySelector('[data-testid=submit-confirmation]').textContent === 'Submitted. 1 done today.'")
    page.wait_for_selector('#workspace[data-state="working"]')
    assert page.locator("[data-testid=submit-confirmation]").is_visible()
    assert page.locator(".ws-new").is_visible()
    page.wait_for_function(done_today, arg="1 done today")
    assert page.locator(".ws-step").count() == 1 and current(page) == ("0", "0")

    page.keyboard.press("t")  # the optional timer: this solution's visible time
    page.wait_for_function("() => /^\\d+:\\d\\d on this solution$/.test("
                           "document.querySelector('[data-testid=timer]').textContent)")
    screenshot(page, "workspace-submitted-next-solution")
    page.keyboard.press("1")
    assert not page.locator("[data-testid=submit-confirmation]").is_visible()
    page.reload()  # the timer stays on in this browser
    page.wait_for_selector('#workspace[data-state="working"]')
    assert page.locator("[data-testid=timer]").is_visible()


def test_axe_finds_nothing_serious_in_the_desktop_workspace_with_a_pick_the_instructions_and_a_reason(
    axe_context, live_server
):
    project, _ = make_task(STEPS, alternatives={1: OTHERS}, instructions="## How to rate\n\nRate **each** step.",
                           **PHASE_ONE)
    make_user("ann", "annotator")
    page = axe_context.new_page()
    log_in(page, live_server, "ann", next_path=None)
    open_workspace(page, live_server, project)
    page.keyboard.press("?")
    for key in ("1", "3", "2", "1"):
        page.keyboard.press(key)
    assert page.locator(".ws-pick:visible").count() == 1 and page.locator("aside.ws-side").is_visible()
    assert axe_violations(page) == []
    page.keyboard.press("g")
    page.locator("dialog.ws-reason button", has_text="Send").click()
    assert page.locator(".ws-field-error").is_visible()
    assert axe_violations(page) == []
