"""The LLM judge on the research page in real Chromium: a researcher sets the judge up (a bad value
gets the server's message beside its field, nothing stored), judges a generation against a real
OpenAI-compatible server on 127.0.0.1 (tests/openai_server.py) and reads the run's counts; the key
itself never reaches the page, only its variable's name. The run's Celery task runs eagerly inside
the live server (the POST's request runs it). An open run is polled until it ends, a second is refused
while it is open (409), and the section fits a phone and stays axe-clean.
"""
import pytest

from scoring.models import JudgeRun, JudgeSettings
from tests.factories import make_project, make_solution, make_user
from tests.openai_server import ScriptedServer, ok, refusal

from .axe import axe_violations
from .conftest import log_in, screenshot
from .test_charts import fits
from .test_workspace_small_screens import PHONE

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

KEY = "sk-browser-7d2e41"


@pytest.fixture
def project(monkeypatch):
    monkeypatch.setenv("STEPMARK_JUDGE_API_KEY", KEY)
    project = make_project(name="Judged pool")
    make_solution(project, steps=["$2x = 4$", "$x = 2$"], generation=0, problem="Solve A")
    make_solution(project, steps=["$y = 3$", "$y^2 = 6$", "so 6"], generation=0, problem="Solve B")
    make_solution(project, steps=1, generation=1, problem="Not asked")
    make_user("res", "researcher")
    return project


def open_research(page, live_server, project):
    log_in(page, live_server, "res", next_path=f"/projects/{project.pk}/research/")
    page.wait_for_selector('#research[data-state="ready"]')
    page.locator('[data-testid="judge-settings-form"]').wait_for()


def test_a_researcher_sets_up_the_judge_and_judges_a_generation(page, live_server, project, eager):
    open_research(page, live_server, project)
    section = page.locator('[data-testid="judge"]')
    assert "Not set up" in section.locator('[data-testid="judge-configured"]').inner_text()
    # Only the variable's name is chosen, among those the server allows; the help names them.
    names = page.locator("#judge-api_key_env option").evaluate_all("os => os.map(o => o.value)")
    assert names == ["", "OPENAI_API_KEY", "STEPMARK_JUDGE_API_KEY"]
    assert "Allowed: OPENAI_API_KEY, STEPMARK_JUDGE_API_KEY." in page.locator("#judge-api_key_env-help").inner_text()
    assert page.input_value("#judge-prompt_version") == "prm800k-v1"
    assert "{steps}" in section.locator(".judge-default-prompt pre").text_content()

    with ScriptedServer({"Solve A": [ok([1, -1])], "Solve B": [refusal()]}) as server:
        page.fill("#judge-base_url", "ftp://judge.example")
        page.fill("#judge-model", "judge-model")
        page.fill("#judge-concurrency", "0")
        page.click('[data-testid="judge-save"]')
        error = page.locator('[data-testid="judge-error-base_url"]')
        error.wait_for(state="visible")
        assert "http:// or https://" in error.inner_text()
        assert "greater than or equal to 1" in page.locator('[data-testid="judge-error-concurrency"]').inner_text()
        assert page.get_attribute("#judge-base_url", "aria-invalid") == "true"
        assert page.get_attribute("#judge-model", "aria-invalid") is None
        assert page.locator('[data-testid="judge-settings-message"]').inner_text() == "Not saved: fix the marked fields."
        assert page.evaluate("() => document.activeElement.id") == "judge-base_url"
        assert not JudgeSettings.objects.filter(project=project).exists()
        section.scroll_into_view_if_needed()
        screenshot(page, "research-judge-settings-error")

        page.fill("#judge-base_url", server.url)
        page.fill("#judge-concurrency", "2")
        page.fill("#judge-rate_limit", "0")
        page.fill("#judge-max_attempts", "1")
        page.select_option("#judge-api_key_env", "STEPMARK_JUDGE_API_KEY")
        page.click('[data-testid="judge-save"]')
        page.wait_for_function(
            "() => document.querySelector('[data-testid=judge-settings-message]').textContent.startsWith('Saved.')")
        assert page.locator('[data-testid="judge-error-base_url"]').inner_text() == ""
        stored = JudgeSettings.objects.get(project=project)
        assert (stored.base_url, stored.model, stored.concurrency, stored.rate_limit, stored.max_attempts,
                stored.api_key_env) == (server.url, "judge-model", 2, 0, 1, "STEPMARK_JUDGE_API_KEY")
        assert f"Judging with judge-model at {server.url}." == section.locator(
            '[data-testid="judge-configured"]').inner_text()

        # A generation the project does not have is refused, naming why.
        page.fill('[data-testid="judge-generation"]', "7")
        page.click('[data-testid="judge-start"]')
        page.wait_for_function(
            "() => document.querySelector('[data-testid=judge-start-message]').textContent.includes('No generation 7')")
        assert not JudgeRun.objects.exists()

        page.fill('[data-testid="judge-generation"]', "0")
        page.click('[data-testid="judge-start"]')
        row = section.locator('[data-testid="judge-runs-table"] tbody tr[data-state="done"]')
        row.wait_for()
        run = JudgeRun.objects.get(project=project)
        assert run.state == JudgeRun.DONE and run.generation == 0, run.error
        # The endpoint got the key from the variable the researcher named, never from the page.
        assert {auth for auth, _ in server.requests} == {f"Bearer {KEY}"}

    result = run.result
    assert (result["judged"], result["labelled"], result["refused"], result["requests"]) == (2, 2, 3, 2)
    counts = dict(row.locator('[data-testid="judge-result"] li').evaluate_all(
        "lis => lis.map(li => [li.dataset.count, li.textContent])"))
    assert counts == {
        "solutions": "2 of 2 solutions judged",
        "labelled": "2 steps labelled",
        "unparseable": "0 unparseable",
        "refused": "3 refused",
        "errors": "0 errors",
        "requests": f"2 requests of a budget of {result['budget']:,}",
    }
    assert "generation 0" in row.inner_text()
    assert f"Run {run.pk} sent for generation 0." in page.locator('[data-testid="judge-start-message"]').inner_text()
    assert KEY not in page.content()
    row.scroll_into_view_if_needed()
    screenshot(page, "research-judge-run-done")

    page.reload()
    page.wait_for_selector('#research[data-state="ready"]')
    section.locator('[data-testid="judge-runs-table"] tbody tr[data-state="done"]').wait_for()
    assert page.input_value("#judge-base_url") == server.url


def test_open_runs_are_polled_a_second_is_refused_and_the_section_fits_a_phone(browser, live_server, project):
    JudgeSettings.objects.create(project=project, base_url="http://127.0.0.1:9/v1", model="judge-model")
    run = JudgeRun.objects.create(project=project, state=JudgeRun.RUNNING, generation=0, progress={
        "done": 1, "total": 2, "requests": 1, "budget": 1000, "fraction": 0.5, "rate": 0.4, "eta_s": 3})
    JudgeRun.objects.create(project=project, state=JudgeRun.FAILED, generation=1, error="AuthenticationError: "
                            "the endpoint refused the key (401 invalid api key)", result={
                                "solutions": 1, "already_labelled": 0, "judged": 0, "over_budget": 0, "stopped": 1,
                                "labelled": 0, "unparseable": 0, "refused": 0, "errors": 1, "requests": 1,
                                "budget": 1000, "source": None})
    context = browser.new_context(bypass_csp=True, **PHONE)
    context.set_default_timeout(10000)
    page = context.new_page()
    try:
        open_research(page, live_server, project)
        section = page.locator('[data-testid="judge"]')
        progress = section.locator(f'tr[data-run="{run.pk}"] [data-testid="judge-progress"]')
        assert progress.inner_text() == "1 / 2 solutions at 0.4/s, about 3 s left; 1 of a budget of 1,000 requests"
        assert "401 invalid api key" in section.locator('[data-testid="judge-error"]').inner_text()
        # One run at a time: the 409 names the open run.
        page.fill('[data-testid="judge-generation"]', "0")
        page.click('[data-testid="judge-start"]')
        page.wait_for_function(
            "() => document.querySelector('[data-testid=judge-start-message]').textContent.includes('still')")
        assert page.locator('[data-testid="judge-start-message"]').inner_text() == \
            f"Run {run.pk} is still running: one judge run at a time."
        assert JudgeRun.objects.count() == 2
        # The open run is polled: once it ends, the list shows its counts without a reload.
        JudgeRun.objects.filter(pk=run.pk).update(state=JudgeRun.DONE, result={
            "solutions": 2, "already_labelled": 0, "judged": 2, "over_budget": 0, "stopped": 0, "labelled": 5,
            "unparseable": 0, "refused": 0, "errors": 0, "requests": 2, "budget": 1000, "source": None})
        section.locator(f'tr[data-run="{run.pk}"][data-state="done"] [data-testid="judge-result"]').wait_for()
        assert fits(page), "the research page scrolls sideways on a phone"
        assert axe_violations(page) == []
        section.locator('[data-testid="judge-runs"]').scroll_into_view_if_needed()
        screenshot(page, "research-judge-phone-390")
        screenshot(section, "research-judge-section-phone-390")
    finally:
        context.close()
