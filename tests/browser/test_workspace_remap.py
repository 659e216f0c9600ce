"""Issue #30: an annotator's own keys, set in the workspace, kept on their account, used after a reload."""
import pytest

from labeling.models import Annotator
from tests.factories import make_task, make_user

from .conftest import current, log_in, open_workspace, screenshot, stored_ratings, wait_saved
from .test_workspace_more import STEPS

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def legend_of(page, action):
    return page.locator(f'.ws-legend li[data-action="{action}"]')


def test_plus_one_remapped_to_j_survives_a_reload_and_rates_plus_one(page, live_server):
    project, _ = make_task(STEPS)
    make_user("ann", "annotator")
    log_in(page, live_server, "ann", next_path=None)
    open_workspace(page, live_server, project)
    assert legend_of(page, "good").locator("kbd").all_inner_texts() == ["1", "+"]

    page.click("[data-testid=change-keys]")
    form = page.locator("[data-testid=keys-form]")
    good = form.locator('tr[data-action="good"] button')
    good.click()
    assert good.inner_text() == "press a key…"
    page.keyboard.press("j")
    assert good.inner_text() == "j"
    # A key already another action's is refused by the server, beside the action changed.
    flag = form.locator('tr[data-action="flag"] button')
    flag.click()
    page.keyboard.press("j")
    form.get_by_role("button", name="Save").click()
    error = form.locator('tr[data-action="flag"] .ws-field-error')
    error.wait_for()
    assert "already the key of good" in error.inner_text() and flag.get_attribute("aria-invalid") == "true"
    flag.click()
    page.keyboard.press("f")  # back to its default
    form.get_by_role("button", name="Save").click()
    form.locator(".ws-keys-status", has_text="Saved").wait_for()
    screenshot(page, "workspace-keys-form")
    assert Annotator.objects.get(user__username="ann").workspace_keys == {"good": "j"}
    form.get_by_role("button", name="Close").click()

    page.reload()
    page.wait_for_selector('#workspace[data-state="working"]')
    assert legend_of(page, "good").locator("kbd").all_inner_texts() == ["j"]
    assert page.locator('.ws-button[data-action="good"] kbd').inner_text() == "j"
    assert "Rate step 1: j +1" in page.inner_text(".ws-hint")
    page.keyboard.press("1")  # its old key does nothing now
    assert current(page) == ("0", "0")
    page.keyboard.press("j")
    assert page.locator('.ws-step[data-position="0"]').get_attribute("data-rating") == "1"
    assert current(page) == ("1", "0")
    wait_saved(page)
    assert stored_ratings("ann")[(0, 0)] == (1, False)

    # Reset to the defaults: 1 rates +1 again.
    page.click("[data-testid=change-keys]")
    form.get_by_role("button", name="Reset to defaults").click()
    form.locator(".ws-keys-status", has_text="Back to the default keys").wait_for()
    form.get_by_role("button", name="Close").click()
    assert legend_of(page, "good").locator("kbd").all_inner_texts() == ["1", "+"]
    page.keyboard.press("1")
    assert page.locator('.ws-step[data-position="1"]').get_attribute("data-rating") == "1"
    assert Annotator.objects.get(user__username="ann").workspace_keys == {}


def test_the_keys_dialog_has_no_serious_accessibility_violations(axe_context, live_server):
    from .axe import axe_violations

    project, _ = make_task(STEPS)
    make_user("ann", "annotator")
    page = axe_context.new_page()
    log_in(page, live_server, "ann", next_path=None)
    open_workspace(page, live_server, project)
    page.click("[data-testid=change-keys]")
    form = page.locator("[data-testid=keys-form]")
    form.locator('tr[data-action="submit"] button').click()
    page.keyboard.press("Tab")  # Tab moves on: it is never captured
    form.locator('tr[data-action="submit"] button').click()
    page.keyboard.press("1")  # +1's: refused, the refusal beside submit's row
    form.get_by_role("button", name="Save").click()
    form.locator('tr[data-action="submit"] .ws-field-error').wait_for()
    assert "already the key of good" in form.locator('tr[data-action="submit"] .ws-field-error').inner_text()
    assert axe_violations(page) == []
    page.keyboard.press("Escape")  # closes the dialog; nothing was stored
    # The dialog's "close" event, which removes it, is queued after the key's task.
    form.wait_for(state="detached")
    assert Annotator.objects.get(user__username="ann").workspace_keys == {}
