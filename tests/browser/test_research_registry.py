"""Registering a PRM on the research page in real Chromium: a refusal names what is missing and is
shown as text (a path with markup in it never becomes markup); a registered PRM's row shows its
layout and validation, and "Make champion" makes it the champion; the page stays axe-clean.
"""
import pytest

from scoring.models import Checkpoint
from scoring.registration import validate_registration
from tests.factories import make_project, make_solution, make_user
from tests.scoring.prm.factories import build_qwen_prm

from .conftest import log_in, screenshot

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def project():
    project = make_project(name="GSM8K pool")
    make_solution(project, is_correct=True)
    make_user("res", "researcher")
    return project


def open_form(page, live_server, project):
    log_in(page, live_server, "res", next_path=None)
    page.goto(f"{live_server.url}/projects/{project.pk}/research/")
    page.wait_for_selector('#research[data-state="ready"]')
    form = page.locator('[data-testid="register-form"]')
    form.wait_for()
    return form


def test_a_researcher_registers_a_prm_and_makes_it_the_champion(page, live_server, project, tmp_path):
    open_form(page, live_server, project)
    status = page.locator('[data-testid="register-status"]')
    hostile = f"{tmp_path}/<img src=x onerror=window.pwned=1>"
    page.fill("#register-path", hostile)
    page.click('[data-testid="register-prm"]')
    page.wait_for_function("() => document.querySelector('[data-testid=register-status]').dataset.state === 'refused'")
    assert status.inner_text() == f"Refused: No directory {hostile} on the server."
    assert page.locator('[data-testid="register-form"] img').count() == 0 and page.evaluate("() => window.pwned") is None
    assert page.is_disabled("#register-separator")  # only token-classification takes one
    page.select_option("#register-layout", "qwen-prm")
    page.fill("#register-path", str(tmp_path))
    page.click('[data-testid="register-prm"]')
    page.wait_for_function("() => document.querySelector('[data-testid=register-status]').textContent.includes('config.json')")
    assert not Checkpoint.objects.exists()

    build_qwen_prm(tmp_path / "qwen", ["What is 2 + 3?"])
    page.fill("#register-path", str(tmp_path / "qwen"))
    page.select_option("#register-layout", "auto")
    page.click('[data-testid="register-prm"]')
    page.wait_for_function("() => document.querySelector('[data-testid=register-status]').dataset.state === 'queued'")
    checkpoint = Checkpoint.objects.get()
    row = page.locator(f'tr[data-checkpoint="{checkpoint.pk}"]')
    row.wait_for()
    assert row.get_attribute("data-status") == "validating" and "qwen-prm" in row.inner_text()
    validate_registration(checkpoint.pk)  # what the GPU worker does; the page follows
    page.wait_for_selector(f'tr[data-checkpoint="{checkpoint.pk}"][data-status="registered"]', timeout=15000)
    assert "smoke example scored" in row.inner_text()
    screenshot(page, "research-registered-prm")
    row.locator('[data-testid="make-champion"]').click()
    page.wait_for_selector(f'tr.champion[data-checkpoint="{checkpoint.pk}"]')
    checkpoint.refresh_from_db()
    assert checkpoint.is_champion and checkpoint.status == "champion"


def test_the_registration_form_is_axe_clean(axe_context, live_server, project):
    from .axe import axe_violations

    page = axe_context.new_page()
    open_form(page, live_server, project)
    page.fill("#register-path", "/nowhere")
    page.click('[data-testid="register-prm"]')
    page.wait_for_function("() => document.querySelector('[data-testid=register-status]').dataset.state === 'refused'")
    assert axe_violations(page) == []
