"""A project's lead manages its members in the browser (the members page, plain forms)."""
import pytest

from labeling.access.roles import roles_in
from labeling.models import Membership
from tests.browser.axe import axe_violations
from tests.browser.conftest import log_in, screenshot
from tests.factories import make_project, make_user

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_a_lead_adds_and_removes_a_member_and_a_bad_name_is_shown_beside_the_form(page, live_server):
    project, other = make_project(name="Vendor A"), make_project(name="Vendor B")
    lead = make_user("lena", "lead", projects=[project])
    carol = make_user("carol", projects=[])
    log_in(page, live_server, "lena")
    page.click(f'[data-project-id="{project.pk}"] a.members-link')
    assert page.locator('[data-testid="members"] tr[data-member="lena"][data-role="lead"]').count() == 1
    assert f'data-project-id="{other.pk}"' not in page.goto(f"{live_server.url}/").text()

    page.goto(f"{live_server.url}/projects/{project.pk}/members/")
    page.fill("#id_username", "carol")
    page.select_option("#id_role", "annotator")
    page.click('[data-testid="add-member"] button[type="submit"]')
    page.wait_for_selector('tr[data-member="carol"][data-role="annotator"]')
    assert roles_in(carol, project.pk) == {"annotator"} and roles_in(carol, other.pk) == set()
    assert Membership.objects.get(user=carol).added_by == lead

    page.fill("#id_username", "nobody-here")
    page.click('[data-testid="add-member"] button[type="submit"]')
    error = page.locator('[data-testid="member-error"]')
    assert "No account named 'nobody-here'" in error.inner_text()
    assert error.get_attribute("data-field") == "username"
    assert page.get_attribute("#id_username", "aria-invalid") == "true"
    screenshot(page, "members-error")

    page.click('tr[data-member="lena"] button')  # the only lead may not leave
    assert "at least one lead" in page.locator('[data-testid="member-error"]').inner_text()
    page.click('tr[data-member="carol"] button')
    page.wait_for_selector('tr[data-member="carol"]', state="detached")
    assert not Membership.objects.filter(user=carol).exists()


def test_the_members_page_has_no_serious_accessibility_violation(axe_context, live_server):
    project = make_project(name="Checked")
    make_user("lena", "lead", projects=[project])
    page = axe_context.new_page()
    log_in(page, live_server, "lena", next_path=None)
    page.goto(f"{live_server.url}/projects/{project.pk}/members/")
    assert axe_violations(page) == []


def test_a_lead_makes_an_account_and_its_owner_sets_a_password_through_the_link(page, browser, live_server):
    project = make_project(name="Onboarding")
    make_user("lena", "lead", projects=[project])
    log_in(page, live_server, "lena", next_path=None)
    page.goto(f"{live_server.url}/projects/{project.pk}/members/")
    page.fill("#id_username", "lena ")  # adding an existing member again: said, not silent
    page.select_option("#id_role", "annotator")
    page.click('[data-testid="add-member"] button[type="submit"]')
    assert "lena is now annotator here." in page.locator('[data-testid="messages"]').inner_text()

    page.fill("#id_new_username", "newbie")
    page.click('[data-testid="create-member"] button[type="submit"]')
    link = page.locator('[data-testid="welcome-link"]').input_value()
    assert "/accounts/welcome/" in link and page.locator('tr[data-member="newbie"][data-role="annotator"]').count() == 1
    screenshot(page, "members-account-made")
    page.reload()  # shown once
    assert page.locator('[data-testid="welcome-link"]').count() == 0

    phone = browser.new_context(viewport={"width": 390, "height": 844})
    owner = phone.new_page()
    owner.goto(link)
    owner.fill("#id_new_password1", "my own long password 42")
    owner.fill("#id_new_password2", "my own long password 42")
    screenshot(owner, "welcome-phone")
    owner.click('[data-testid="welcome-form"] button[type="submit"]')
    owner.wait_for_url(f"{live_server.url}/accounts/login/")
    assert "Your password is set" in owner.locator('[data-testid="messages"]').inner_text()
    owner.fill("#id_username", "newbie")
    owner.fill("#id_password", "my own long password 42")
    owner.press("#id_password", "Enter")
    owner.wait_for_selector(f'[data-project-id="{project.pk}"]')
    owner.goto(link)
    assert owner.locator('[data-testid="welcome-ended"]').is_visible()
    phone.close()
