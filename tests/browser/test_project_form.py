"""A project made and changed in the browser: the new-project form (POST /api/projects/) and a
project's settings page (PATCH /api/projects/{id}/), both judged by the API."""
import pytest
from django.contrib.auth.models import Permission

from labeling import audit
from labeling.access import roles
from labeling.models import AuditEntry, Project
from tests.factories import make_project, make_user

from .conftest import log_in, screenshot

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def field(page, name):
    return page.locator(f"#project-{name}")


def create(page):
    page.click('[data-testid="project-save"]')


def test_a_founder_makes_a_project_fixes_what_the_server_refused_and_changes_it_later(page, live_server):
    founder = make_user("founder")  # no role anywhere: only the right to create projects
    founder.user_permissions.add(Permission.objects.get(content_type__app_label="labeling", codename="add_project"))
    make_project(name="Taken")
    log_in(page, live_server, "founder")
    page.click("a.new-project-link")
    page.wait_for_selector('#project-form[data-state="ready"]')
    fresh = Project()  # the form starts from the model's defaults
    assert field(page, "overlap").input_value() == str(fresh.overlap)
    for name in ("stop_at_first_error", "allow_alternatives", "allow_human_steps", "dollar_math"):
        assert field(page, name).is_checked() == getattr(fresh, name), name
    assert page.locator("#project-is_active").count() == 0  # a new project is active

    field(page, "name").fill("Taken")
    field(page, "instructions").fill("Rate each step. **+1**: correct and useful; $x^2$ is math.")
    field(page, "overlap").fill("0")
    create(page)
    overlap_error = page.locator('[data-testid="project-error-overlap"]')
    overlap_error.wait_for()
    page.wait_for_function("() => document.querySelector('[data-testid=\"project-error-overlap\"]').textContent !== ''")
    assert "greater than or equal to 1" in overlap_error.inner_text()
    assert field(page, "overlap").get_attribute("aria-invalid") == "true"
    assert "already exists" in page.locator('[data-testid="project-error-name"]').inner_text()
    assert "fix the marked fields" in page.locator('[data-testid="project-message"]').inner_text()
    assert Project.objects.count() == 1  # nothing stored
    screenshot(page, "project-new-refused")

    field(page, "name").fill("Phase 2 <b>team</b>")
    field(page, "overlap").fill("3")
    field(page, "stop_at_first_error").set_checked(False)  # phase 1: every step rated, own steps allowed
    field(page, "allow_human_steps").set_checked(True)
    create(page)
    page.wait_for_url("**/research/#import")
    page.wait_for_selector('#research[data-state="ready"]')
    made = Project.objects.get(name="Phase 2 <b>team</b>")
    assert (made.overlap, made.stop_at_first_error, made.allow_human_steps, made.is_active) == (3, False, True, True)
    assert made.instructions.startswith("Rate each step.")
    assert roles.roles_in(founder, made.pk) == {roles.LEAD, roles.RESEARCHER}

    page.goto(f"{live_server.url}/")
    card = page.locator(f'[data-project-id="{made.pk}"]')
    assert card.locator("h2").inner_text().startswith("Phase 2 <b>team</b>")  # text, not markup
    assert card.locator(".instructions strong").inner_text() == "+1"
    card.locator("a.settings-link").click()
    page.wait_for_selector('#project-form[data-state="ready"]')
    assert field(page, "overlap").input_value() == "3" and field(page, "allow_human_steps").is_checked()
    field(page, "instructions").fill("Rate each step; write your own where every completion is -1.")
    field(page, "is_active").uncheck()
    page.click('[data-testid="project-save"]')
    page.wait_for_function("() => document.querySelector('[data-testid=\"project-message\"]').textContent === 'Saved.'")
    made.refresh_from_db()
    assert made.instructions == "Rate each step; write your own where every completion is -1." and not made.is_active
    change = AuditEntry.objects.get(project=made, action=audit.SETTINGS)
    assert change.actor == founder and change.before["is_active"] is True and change.after["is_active"] is False
    screenshot(page, "project-settings-saved")
