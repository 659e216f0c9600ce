"""The login page after too many wrong passwords, as a person meets it (issue #19, item 1)."""
import pytest
from django.conf import settings

from tests.browser.conftest import screenshot
from tests.factories import PASSWORD, make_user

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_a_locked_account_gets_a_page_that_says_why_and_how_long(page, live_server):
    make_user("ann", "annotator")
    for i in range(settings.AXES_FAILURE_LIMIT - 1):
        page.goto(f"{live_server.url}/accounts/login/")
        page.fill("#id_username", "ann")
        page.fill("#id_password", f"guess{i}")
        page.press("#id_password", "Enter")
        page.wait_for_selector("p.errors")
    page.fill("#id_password", PASSWORD.upper())
    with page.expect_response(lambda r: r.request.method == "POST") as answer:
        page.press("#id_password", "Enter")
    assert answer.value.status == 429
    message = page.locator("p.errors").inner_text()
    assert message.startswith("Too many failed log-ins") and "15 minutes" in message
    screenshot(page, "login-locked-out")
    # The right password, while locked, gets the same page.
    page.goto(f"{live_server.url}/accounts/login/")
    page.fill("#id_username", "ann")
    page.fill("#id_password", PASSWORD)
    page.press("#id_password", "Enter")
    page.wait_for_selector("text=Too many failed log-ins")
    assert page.url.startswith(f"{live_server.url}/accounts/login/")
