"""Issue #26 item 2: a key never changes a choice the annotator did not see they were making.

The rating keys rate whatever came before them (no pick mode takes them over), Enter at the
"write your own step" prompt asks before it submits, and a second tab (or device) on one
assignment is told that it is behind instead of overwriting what the other saved.
"""
import threading

import pytest
from playwright.sync_api import TimeoutError as PlaywrightTimeoutError

from labeling.models import Assignment, Rating
from tests.factories import make_task, make_user

from .conftest import current, log_in, open_workspace, screenshot, stored_ratings, wait_saved, workspace_url
from .test_workspace_day import OTHERS, export_of, going_on, rated_to_two_ways_on
from .test_workspace_more import PHASE_ONE, STEPS, rate_step_two_wrong_everywhere

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

def hint(page):
    return page.inner_text(".ws-hint")


def test_after_two_completions_can_carry_the_solution_3_rates_the_next_step_and_only_p_picks(page, live_server):
    # Step 1 +1, step 2 -1, its alternatives 0 and +1 (no own steps in this project).
    project = rated_to_two_ways_on(page, live_server, allow_human_steps=False)
    # Two completions can carry the solution on: the page says which one it goes on from, and that p changes it.
    assert going_on(page) == "2" and current(page) == ("2", "0")
    continuation = page.locator("[data-testid=continuation]")
    assert continuation.inner_text() == "Step 2 goes on from alternative 2 · p switches to alternative 1"
    assert "Rate step 3" in hint(page) and "Press 2" not in hint(page)
    screenshot(page, "workspace-continuation-key")

    page.keyboard.press("3")  # meant as -1 for step 3, as the bar says: it is exactly that
    assert page.locator('.ws-step[data-position="2"]').get_attribute("data-rating") == "-1"
    assert going_on(page) == "2"
    wait_saved(page)
    assert stored_ratings("ann")[(2, 0)] == (-1, False)
    assert "Found an error" in hint(page)

    page.keyboard.press("p")  # the key of its own changes the continuation, and says so
    assert going_on(page) == "1"
    assert continuation.inner_text() == "Step 2 goes on from alternative 1 · p switches to alternative 2"
    page.keyboard.press("p")
    page.keyboard.press("p")
    assert going_on(page) == "1"
    shown = going_on(page)

    page.keyboard.press("Enter")
    page.wait_for_selector('#workspace[data-state="empty"]')
    done = Assignment.objects.get()
    assert done.finish_reason == "found_error"
    chosen = Rating.objects.filter(assignment=done, step__position=1, chosen=True).select_related("step")
    assert [r.step.alternative for r in chosen] == [int(shown)]
    steps = export_of(project, "ann")["label"]["steps"]
    assert [s["chosen_completion"] for s in steps[:3]] == [0, 1, None]
    assert [c["rating"] for c in steps[1]["completions"]] == [-1, 0, 1]
    assert steps[2]["completions"][0]["rating"] == -1


def test_p_says_so_where_there_is_nothing_to_pick(page, live_server):
    project, _ = make_task(STEPS, alternatives={1: OTHERS}, **PHASE_ONE)
    make_user("ann", "annotator")
    log_in(page, live_server, "ann", next_path=None)
    open_workspace(page, live_server, project)
    page.keyboard.press("p")
    assert "Nothing to pick" in hint(page) and current(page) == ("0", "0")
    assert page.locator("[data-testid=continuation]").count() == 0


def test_enter_at_the_write_your_own_step_prompt_asks_first_and_says_what_it_would_submit(page, live_server):
    project, _ = make_task(STEPS, alternatives={1: ["Add $3$: $2x = 10$.", "So $x = 5$."]}, **PHASE_ONE)
    make_user("ann", "annotator")
    log_in(page, live_server, "ann", next_path=None)
    open_workspace(page, live_server, project)
    rate_step_two_wrong_everywhere(page)
    assert current(page) == ("1", "human")
    assert "Press w to write your own step" in hint(page)

    page.keyboard.press("Enter")  # a stray Enter submits nothing: it asks
    assert hint(page) == ('Submit as "found an error" at step 2, without a step of your own? Enter again submits it;'
                          " w writes your own step.")
    assert page.get_attribute("#workspace", "data-state") == "working"
    screenshot(page, "workspace-enter-asks-at-own-step")
    page.keyboard.press("t")  # any other key drops the question: the next Enter asks again
    assert "Submit as" not in hint(page) and "Press w" in hint(page)
    page.keyboard.press("Enter")
    assert "Enter again submits it" in hint(page)
    wait_saved(page)
    assert Assignment.objects.get().state == Assignment.ACTIVE

    page.keyboard.press("Enter")  # the answer to the question
    page.wait_for_selector('#workspace[data-state="empty"]')
    done = Assignment.objects.get()
    assert (done.state, done.finish_reason) == ("submitted", "found_error")
    assert stored_ratings("ann") == {(0, 0): (1, False), (1, 0): (-1, False), (1, 1): (-1, False), (1, 2): (-1, False)}


# Two tabs on one assignment --------------------------------------------------------------


def tab(context, live_server, project, broadcast=True, state="working"):
    """A tab of the same browser (cookies and localStorage shared) with the workspace open in `state`."""
    page = context.new_page()
    errors = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    if not broadcast:  # as a browser without BroadcastChannel, or another device: only the server can tell
        page.add_init_script("delete window.BroadcastChannel")
    page.goto(workspace_url(live_server, project))
    page.wait_for_selector(f'#workspace[data-state="{state}"]')
    page.errors = errors
    return page


@pytest.fixture
def two_tabs(context, live_server):
    project, _ = make_task(["Step one.", "Step two.", "Step three."])  # phase 2
    make_user("ann", "annotator")
    first = context.new_page()
    log_in(first, live_server, "ann")
    return project, first


def test_the_tab_that_is_behind_is_refused_by_the_server_and_says_what_it_did_not_save(
    context, live_server, two_tabs
):
    project, first = two_tabs
    a = tab(context, live_server, project)
    b = tab(context, live_server, project, broadcast=False)
    assert Assignment.objects.count() == 1  # both tabs hold the one assignment

    a.keyboard.press("1")  # tab A: +1 on step 1, saved
    wait_saved(a)
    b.keyboard.press("3")  # tab B, which still shows step 1 unrated: -1 on it
    b.wait_for_selector('#workspace[data-state="conflict"]')
    panel = b.inner_text(".ws-panel")
    assert "changed in another tab or on another device" in panel
    assert "nothing was overwritten" in panel and "Not saved from this tab: step 1 −1." in panel
    screenshot(b, "workspace-changed-in-another-tab")
    assert stored_ratings("ann") == {(0, 0): (1, False)}  # A's +1 stands
    assert a.inner_text("[data-testid=save-state]") == "All changes saved"

    b.keyboard.press("r")  # B reloads what is saved and goes on from it
    b.wait_for_selector('#workspace[data-state="working"]')
    assert current(b) == ("1", "0")
    assert b.locator('.ws-step[data-position="0"]').get_attribute("data-rating") == "1"
    b.keyboard.press("3")  # -1 on step 2, now seen
    wait_saved(b)

    a.keyboard.press("1")  # A is behind now: its +1 on step 2 is refused, not written over B's -1
    a.wait_for_selector('#workspace[data-state="conflict"]')
    assert "Not saved from this tab: step 2 +1." in a.inner_text(".ws-panel")
    assert stored_ratings("ann") == {(0, 0): (1, False), (1, 0): (-1, False)}
    assert not a.errors and not b.errors


def test_a_save_in_one_tab_tells_the_other_at_once(context, live_server, two_tabs):
    project, first = two_tabs
    a = tab(context, live_server, project)
    b = tab(context, live_server, project)
    a.keyboard.press("1")
    wait_saved(a)
    # B pressed nothing: BroadcastChannel tells it that what it shows is no longer what is saved.
    b.wait_for_selector('#workspace[data-state="conflict"]')
    assert "Another tab saved a change to this solution" in b.inner_text(".ws-panel")
    b.keyboard.press("r")
    b.wait_for_selector('#workspace[data-state="working"]')
    assert current(b) == ("1", "0")

    b.keyboard.press("2")  # B goes on; A is told in turn, and then submitting in B tells A too
    wait_saved(b)
    a.wait_for_selector('#workspace[data-state="conflict"]')
    a.keyboard.press("r")
    a.wait_for_selector('#workspace[data-state="working"]')
    assert current(a) == ("2", "0")
    a.keyboard.press("1")
    a.keyboard.press("Enter")
    a.wait_for_selector('#workspace[data-state="empty"]')
    b.wait_for_selector('#workspace[data-state="conflict"]')
    assert "submitted in another tab" in b.inner_text(".ws-panel")
    assert stored_ratings("ann") == {(0, 0): (1, False), (1, 0): (0, False), (2, 0): (1, False)}
    assert not a.errors and not b.errors


def test_ratings_kept_offline_in_a_closed_tab_are_not_laid_over_what_another_device_saved_since(
    browser, context, live_server, two_tabs
):
    project, first = two_tabs
    # Offline is a network error on every save (what the page sees offline), from a route set
    # before the tab opens. Not Chromium's offline emulation: it may hold a request and let it go
    # when the page goes, so the -1 reached the server as the tab closed (CI, stop 37).
    offline = threading.Event()
    drafts = "**/api/assignments/*/draft/"
    context.route(drafts, lambda route: route.abort("internetdisconnected") if offline.is_set() else route.continue_())
    a = tab(context, live_server, project)
    a.keyboard.press("1")
    wait_saved(a)
    offline.set()
    a.keyboard.press("3")  # -1 on step 2, kept in this browser only
    a.locator('[data-testid="offline-banner"]').wait_for(state="visible")
    a.close()

    other = browser.new_context()  # another device: its own storage, no BroadcastChannel shared
    try:
        device = other.new_page()
        device_errors = []
        device.on("pageerror", lambda error: device_errors.append(str(error)))
        log_in(device, live_server, "ann", next_path=None)
        open_workspace(device, live_server, project)
        # What the page shows if its current step never comes (seen twice on a loaded machine).
        shown = device.locator("#workspace")
        try:
            device.wait_for_selector(".ws-step.current", timeout=30000)
        except PlaywrightTimeoutError:
            raise AssertionError((shown.get_attribute("data-state"), shown.get_attribute("data-save"), device_errors,
                                  stored_ratings("ann"), shown.inner_text()[:2000])) from None
        assert current(device) == ("1", "0")
        device.keyboard.press("1")  # +1 on step 2 there
        wait_saved(device)
    finally:
        other.close()

    context.unroute(drafts)
    # The unsent -1 comes back, on the revision it was made on, and is refused: the page may be in
    # conflict before it is ever seen working (CI, stop 37), so that is the state waited for.
    again = tab(context, live_server, project, state="conflict")
    assert "Not saved from this tab: step 2 −1." in again.inner_text(".ws-panel")
    assert stored_ratings("ann") == {(0, 0): (1, False), (1, 0): (1, False)}
    again.keyboard.press("r")
    again.wait_for_selector('#workspace[data-state="working"]')
    assert again.locator('.ws-step[data-position="1"]').get_attribute("data-rating") == "1"
    assert not again.errors


def test_a_tab_behind_that_makes_the_same_change_as_the_other_is_told_of_the_rest(context, live_server, two_tabs):
    # The server takes a change on an older revision when it stores nothing new (a save sent again);
    # the page then finds in the answer what else the other tab changed.
    project, first = two_tabs
    a = tab(context, live_server, project, broadcast=False)
    b = tab(context, live_server, project, broadcast=False)
    b.keyboard.press("1")
    b.keyboard.press("3")
    wait_saved(b)
    a.keyboard.press("1")  # the same +1 on step 1: taken, and step 2's -1 shows A is behind
    a.wait_for_selector('#workspace[data-state="conflict"]')
    assert "not what this page shows" in a.inner_text(".ws-panel")
    assert stored_ratings("ann") == {(0, 0): (1, False), (1, 0): (-1, False)}
    assert not a.errors and not b.errors
