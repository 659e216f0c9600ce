"""Nothing a person rated is lost: reloads, dropped connections and closed tabs."""
import threading

import pytest

from labeling.models import Assignment
from tests.factories import make_task, make_user

from .conftest import current, log_in, open_workspace, screenshot, stored_ratings, wait_saved

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

STEPS = [
    "Subtract $3$ from both sides: $2x = 4$.",
    r"Divide by $2$: $$x = \frac{4}{2}$$",
    r"So \(x = 2\).",
    "Check: $2 \\cdot 2 + 3 = 7$.",
    "# Answer\n\n2",
]


@pytest.fixture
def task():
    project, _ = make_task(STEPS)
    make_user("ann", "annotator")
    return project


def ratings_shown(page):
    return page.locator(".ws-step").evaluate_all(
        "cards => cards.map(c => [c.dataset.position, c.dataset.alternative, c.dataset.rating])"
    )


def test_reload_mid_solution_keeps_every_rating_and_continues_at_the_next_step(page, live_server, task):
    log_in(page, live_server, "ann", next_path=None)
    open_workspace(page, live_server, task)
    page.keyboard.press("1")
    page.keyboard.press("2")
    page.keyboard.press("u")  # change the previous rating ...
    assert current(page) == ("1", "0")
    page.keyboard.press("1")  # ... to +1
    page.keyboard.press("f")
    page.keyboard.press("2")
    wait_saved(page)
    assert stored_ratings("ann") == {(0, 0): (1, False), (1, 0): (1, False), (2, 0): (0, True)}

    page.reload()
    page.wait_for_selector('#workspace[data-state="working"]')
    assert ratings_shown(page) == [["0", "0", "1"], ["1", "0", "1"], ["2", "0", "0"], ["3", "0", ""]]
    assert current(page) == ("3", "0")
    assert page.locator('.ws-step[data-position="2"] .ws-flag').is_visible()
    assert "3 of 5 steps rated" in page.inner_text(".ws-progress")

    # Rating to the end finishes as a solution.
    page.keyboard.press("1")
    page.keyboard.press("1")
    assert "Every step is rated" in page.inner_text(".ws-hint")
    page.keyboard.press("Enter")
    page.wait_for_selector('#workspace[data-state="empty"]')
    assert stored_ratings("ann") == {
        (0, 0): (1, False), (1, 0): (1, False), (2, 0): (0, True), (3, 0): (1, False), (4, 0): (1, False)
    }


def test_rating_offline_shows_the_banner_and_is_saved_when_back_online(page, context, live_server, task):
    log_in(page, live_server, "ann", next_path=None)
    open_workspace(page, live_server, task)
    banner = page.locator('[data-testid="offline-banner"]')
    assert banner.is_hidden()

    context.set_offline(True)
    page.keyboard.press("1")
    banner.wait_for(state="visible")
    assert "1 rating is kept in this browser" in banner.inner_text()
    assert stored_ratings("ann") == {}
    screenshot(page, "workspace-offline-banner")

    context.set_offline(False)
    banner.wait_for(state="hidden")
    wait_saved(page)
    assert stored_ratings("ann") == {(0, 0): (1, False)}


def test_a_tab_closed_while_offline_loses_nothing(context, live_server, task):
    # Offline is every draft save refused with a network error, from a route set before the tab
    # opens: Chromium's offline emulation may hold a request and let it go as the tab closes
    # (tests/browser/test_workspace_keys.py met it in CI).
    offline = threading.Event()
    drafts = "**/api/assignments/*/draft/"
    context.route(drafts, lambda route: route.abort("internetdisconnected") if offline.is_set() else route.continue_())
    page = context.new_page()
    log_in(page, live_server, "ann", next_path=None)
    open_workspace(page, live_server, task)
    page.keyboard.press("1")
    wait_saved(page)
    offline.set()
    page.keyboard.press("3")  # the first error, never reached the server
    page.locator('[data-testid="offline-banner"]').wait_for(state="visible")
    page.close()
    assert stored_ratings("ann") == {(0, 0): (1, False)}

    context.unroute(drafts)
    again = context.new_page()
    open_workspace(again, live_server, task)  # the same unfinished assignment comes back
    assert ratings_shown(again) == [["0", "0", "1"], ["1", "0", "-1"]]
    wait_saved(again)
    assert stored_ratings("ann") == {(0, 0): (1, False), (1, 0): (-1, False)}
    assert "Found an error" in again.inner_text(".ws-hint")
    again.close()


def test_a_submit_sent_while_offline_goes_through_once_back_online(page, context, live_server, task):
    log_in(page, live_server, "ann", next_path=None)
    open_workspace(page, live_server, task)
    for _ in STEPS:
        page.keyboard.press("2")
    context.set_offline(True)
    page.keyboard.press("Enter")
    banner = page.locator('[data-testid="offline-banner"]')
    banner.wait_for(state="visible")
    assert "submission will be sent" in banner.inner_text()
    page.keyboard.press("u")  # ignored while the submit is on its way (checked below)

    context.set_offline(False)
    page.wait_for_selector('#workspace[data-state="empty"]')
    done = Assignment.objects.get(annotator__user__username="ann")
    assert (done.state, done.finish_reason) == ("submitted", "solution")
    assert stored_ratings("ann") == {(p, 0): (0, False) for p in range(len(STEPS))}
    # Nothing of the pass is left in the browser (the checked-results version it last said is no pass).
    assert page.evaluate("Object.keys(localStorage).filter(k => k.startsWith('stepmark:')"
                         " && !k.startsWith('stepmark:results:'))") == []
