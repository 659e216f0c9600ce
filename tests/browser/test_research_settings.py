"""The loop settings form on the research page in real Chromium: a bad value gets the server's
message beside its field and nothing is stored; fixed, the settings save; the page stays axe-clean.
"""
import pytest

from tests.factories import make_project, make_solution, make_user

from .conftest import log_in, screenshot

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def project():
    project = make_project(name="GSM8K pool")
    for n in range(3):
        make_solution(project, is_correct=n == 0)
    make_user("res", "researcher")
    return project


def open_settings(page, live_server, project):
    log_in(page, live_server, "res", next_path=None)
    page.goto(f"{live_server.url}/projects/{project.pk}/research/")
    page.wait_for_selector('#research[data-state="ready"]')
    form = page.locator('[data-testid="loop-settings-form"]')
    form.wait_for()
    return form


def test_a_researcher_sees_a_field_error_then_fixes_and_saves(page, live_server, project):
    open_settings(page, live_server, project)
    assert "holds 3 solutions" in page.locator('[data-testid="candidate-pool"]').inner_text()
    assert page.input_value("#loop-generation_size") == "100"
    options = page.locator("#loop-retrain_metric option").evaluate_all("os => os.map(o => o.value)")
    assert options == ["step_auroc", "step_f1", "accuracy", "log_loss"]
    assert page.input_value("#loop-retrain_metric") == "step_auroc"
    # The promotion gate's settings, at their defaults.
    assert [page.input_value(f"#loop-promotion_{name}") for name in ("min_problems", "confidence", "guard_tolerance")] \
        == ["50", "0.95", "0.02"]

    page.fill("#loop-generation_size", "40")
    page.fill("#loop-selection_wrong_share", "1.5")
    page.fill("#loop-train_settings", '{"epochz": 2}')
    page.select_option("#loop-retrain_metric", "log_loss")
    page.fill("#loop-promotion_confidence", "1.2")
    page.click('[data-testid="loop-save"]')
    error = page.locator('[data-testid="loop-error-selection_wrong_share"]')
    error.wait_for(state="visible")
    assert "less than or equal to 1" in error.inner_text()
    assert "epochz" in page.locator('[data-testid="loop-error-train_settings"]').inner_text()
    assert "less than or equal to 0.999" in page.locator('[data-testid="loop-error-promotion_confidence"]').inner_text()
    assert page.get_attribute("#loop-selection_wrong_share", "aria-invalid") == "true"
    assert page.get_attribute("#loop-train_settings", "aria-invalid") == "true"
    assert page.get_attribute("#loop-generation_size", "aria-invalid") is None
    described = page.get_attribute("#loop-selection_wrong_share", "aria-describedby").split()
    assert "loop-selection_wrong_share-error" in described and "loop-selection_wrong_share-help" in described
    assert page.locator('[data-testid="loop-settings-message"]').inner_text() == "Not saved: fix the marked fields."
    assert page.evaluate("() => document.activeElement.id") == "loop-selection_wrong_share"
    screenshot(page, "research-loop-settings-error")
    project.refresh_from_db()
    assert (project.generation_size, project.selection_wrong_share, project.retrain_metric) == (100, 0.8, "step_auroc")

    page.fill("#loop-selection_wrong_share", "0.6")
    page.fill("#loop-train_settings", '{"epochs": 2, "lr": 1e-5}')
    page.fill("#loop-selection_per_problem_cap", "2")
    page.fill("#loop-promotion_confidence", "0.9")
    page.fill("#loop-promotion_min_problems", "30")
    page.click('[data-testid="loop-save"]')
    page.wait_for_function(
        "() => document.querySelector('[data-testid=loop-settings-message]').textContent.startsWith('Saved.')")
    assert page.locator('[data-testid="loop-error-selection_wrong_share"]').inner_text() == ""
    assert page.get_attribute("#loop-selection_wrong_share", "aria-invalid") is None
    project.refresh_from_db()
    assert (project.generation_size, project.selection_wrong_share, project.selection_per_problem_cap,
            project.retrain_metric, project.train_settings) == (40, 0.6, 2, "log_loss", {"epochs": 2, "lr": 1e-5})
    assert (project.promotion_min_problems, project.promotion_confidence, project.promotion_guard_tolerance) == (30, 0.9, 0.02)
    page.locator('[data-testid="loop-settings"]').scroll_into_view_if_needed()
    screenshot(page, "research-loop-settings-saved")

    page.reload()
    page.wait_for_selector('#research[data-state="ready"]')
    assert page.input_value("#loop-retrain_metric") == "log_loss"
    assert page.input_value("#loop-generation_size") == "40"


def test_the_research_page_with_the_form_is_axe_clean(axe_context, live_server, project):
    from .axe import axe_violations

    page = axe_context.new_page()
    open_settings(page, live_server, project)
    assert axe_violations(page) == []
    page.fill("#loop-selection_wrong_share", "2")
    page.click('[data-testid="loop-save"]')
    page.locator('[data-testid="loop-error-selection_wrong_share"]').wait_for(state="visible")
    assert axe_violations(page) == []


def test_a_researcher_picks_a_mixture_and_its_shares(page, live_server, project):
    open_settings(page, live_server, project)
    options = page.locator("#loop-selection_strategy option").evaluate_all("os => os.map(o => o.value)")
    assert options == ["convincing_wrong", "uncertainty", "random", "mixture"]
    assert page.input_value("#loop-selection_strategy") == "convincing_wrong"
    page.select_option("#loop-selection_strategy", "mixture")
    page.click('[data-testid="loop-save"]')
    error = page.locator('[data-testid="loop-error-selection_mix"]')
    error.wait_for(state="visible")
    assert "needs its shares" in error.inner_text()
    page.fill("#loop-selection_mix", '{"convincing_wrong": 0.7, "random": 0.3}')
    page.click('[data-testid="loop-save"]')
    page.wait_for_function(
        "() => document.querySelector('[data-testid=loop-settings-message]').textContent.startsWith('Saved.')")
    project.refresh_from_db()
    assert (project.selection_strategy, project.selection_mix) == ("mixture", {"convincing_wrong": 0.7, "random": 0.3})
