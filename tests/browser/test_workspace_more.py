"""The workspace's phase-1 own steps, the annotator's standing, and math in the instructions."""
import json

import pytest

from labeling.exports import ExportFilters, get_exporter
from labeling.models import Annotator, Assignment, Step
from labeling.quality import gold, screening
from tests.factories import T0, make_gold, make_solution, make_task, make_user, rated_pass, score_gold

from .conftest import current, log_in, open_workspace, screenshot, stored_ratings, wait_saved

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

PHASE_ONE = dict(stop_at_first_error=False, allow_alternatives=True, allow_human_steps=True)
STEPS = [
    "Subtract $3$ from both sides: $2x = 4$.",
    "Multiply both sides by $2$: $x = 8$.",
    "Check: $2 \\cdot 2 + 3 = 7$.",
    "# Answer\n\n2",
]
WRONG = ["Add $3$ to both sides: $2x = 10$.", "So $x = 4 - 2 = 2$, since $4 - 2 = 1$."]
OWN = r"Divide both sides by $2$: $x = \frac{4}{2} = 2$."


def rate_step_two_wrong_everywhere(page):
    """Step 1 +1, then step 2 and both its alternatives -1, from the keyboard."""
    page.keyboard.press("1")
    for alternative in ("0", "1", "2"):
        assert current(page) == ("1", alternative)
        page.keyboard.press("3")


def own_step(username):
    return Step.objects.get(source=Step.HUMAN, author__annotator__user__username=username)



def submitted_solution(page, project, username):
    """With every step rated, submit with Enter: the pass is stored as a finished solution.

    Returns its record in the PRM800K export.
    """
    assert "Every step is rated" in page.inner_text(".ws-hint")
    page.keyboard.press("Enter")
    page.wait_for_selector('#workspace[data-state="empty"]')
    annotator = Annotator.objects.get(user__username=username)
    done = Assignment.objects.get(annotator=annotator)
    assert (done.state, done.finish_reason) == ("submitted", "solution")
    lines = [json.loads(line) for line in get_exporter("prm800k")(ExportFilters(project_id=project.pk))]
    [record] = [r for r in lines if r["labeler"] == str(annotator.uuid)]
    return record


def test_phase_one_own_step_is_written_rated_kept_over_a_reload_and_exported(page, live_server):
    project, _ = make_task(STEPS, alternatives={1: WRONG}, **PHASE_ONE)
    make_user("ann", "annotator")
    log_in(page, live_server, "ann", next_path=None)
    open_workspace(page, live_server, project)
    assert page.locator(".ws-legend [data-key='w']").is_visible()

    rate_step_two_wrong_everywhere(page)
    # Every completion at step 2 is -1: the page offers writing one, Enter would end here.
    assert current(page) == ("1", "human")
    assert "write your own step" in page.inner_text(".ws-hint")
    page.keyboard.press("1")  # rating a step nobody wrote does nothing
    assert current(page) == ("1", "human") and "Press w" in page.inner_text(".ws-hint")

    page.keyboard.press("w")
    editor = page.locator(".ws-step.own textarea")
    assert editor.is_visible() and editor.evaluate("el => el === document.activeElement")
    page.keyboard.type(OWN)
    page.wait_for_function("() => document.querySelectorAll('.ws-writer-preview .katex').length === 2")
    screenshot(page, "workspace-writing-own-step")
    page.keyboard.press("Control+Enter")
    assert page.locator(".ws-step.own textarea").count() == 0
    assert page.locator(".ws-step.own .ws-step-text .katex").count() == 2
    assert "Rate your own step 2" in page.inner_text(".ws-hint")
    wait_saved(page)
    step = own_step("ann")
    assert (step.position, step.alternative, step.text) == (1, 3, OWN)

    # A reload keeps the written step, unrated and current.
    page.reload()
    page.wait_for_selector('#workspace[data-state="working"]')
    assert current(page) == ("1", "human")
    assert page.inner_text(".ws-step.own .ws-step-label") == "Step 2 · your own step"
    assert page.locator(".ws-step.own .ws-step-text .katex").count() == 2

    page.keyboard.press("1")  # own step +1: the trajectory goes on past the -1
    assert current(page) == ("2", "0")
    screenshot(page, "workspace-own-step-rated")
    page.keyboard.press("1")
    page.keyboard.press("2")
    record = submitted_solution(page, project, "ann")
    assert record["label"]["finish_reason"] == "solution"
    steps = record["label"]["steps"]
    assert [s["chosen_completion"] for s in steps] == [0, None, 0, 0]
    assert steps[1]["completions"] == [
        {"text": text, "rating": -1, "flagged": False} for text in [STEPS[1], *WRONG]
    ]
    assert steps[1]["human_completion"] == {"text": OWN, "rating": 1, "source": "human", "flagged": False}
    assert [s["human_completion"] for s in steps if s is not steps[1]] == [None, None, None]
    assert [s["completions"][0]["rating"] for s in (steps[0], steps[2], steps[3])] == [1, 1, 0]


def test_phase_one_goes_on_through_an_alternative_rated_plus_one_and_submits_as_solution(page, live_server):
    others = [WRONG[0], "Divide both sides by $2$: $x = 2$."]
    project, _ = make_task(STEPS, alternatives={1: others}, **PHASE_ONE)
    make_user("ann", "annotator")
    log_in(page, live_server, "ann", next_path=None)
    open_workspace(page, live_server, project)

    page.keyboard.press("1")
    for alternative, key in (("0", "3"), ("1", "3"), ("2", "1")):  # step 2 -1, alternative 2 +1
        assert current(page) == ("1", alternative)
        page.keyboard.press(key)
    # Alternative 2 carries the solution on: step 3 is next, no own step is offered.
    assert current(page) == ("2", "0")
    assert page.locator(".ws-step.own").count() == 0
    going_on = page.locator(".ws-step.continues")
    assert going_on.count() == 1 and going_on.get_attribute("data-alternative") == "2"
    assert going_on.locator(".ws-continues").is_visible()
    screenshot(page, "workspace-goes-on-through-alternative")
    page.keyboard.press("1")
    page.keyboard.press("1")
    record = submitted_solution(page, project, "ann")
    assert stored_ratings("ann") == {
        (0, 0): (1, False), (1, 0): (-1, False), (1, 1): (-1, False), (1, 2): (1, False),
        (2, 0): (1, False), (3, 0): (1, False),
    }
    steps = record["label"]["steps"]
    assert [s["chosen_completion"] for s in steps] == [0, 2, 0, 0]
    assert steps[1]["completions"][2] == {"text": others[1], "rating": 1, "flagged": False}


def test_own_step_typing_survives_a_reload_undo_takes_it_back_and_html_stays_text(page, live_server):
    project, _ = make_task(STEPS, alternatives={1: WRONG}, **PHASE_ONE)
    make_user("ann", "annotator")
    log_in(page, live_server, "ann", next_path=None)
    open_workspace(page, live_server, project)
    rate_step_two_wrong_everywhere(page)
    hostile = 'Let <img src=x onerror="window.__pwned=1"> be $y$.'
    page.keyboard.press("w")
    page.keyboard.type(hostile)

    # Not saved yet: a reload brings the editor back with what was typed.
    page.reload()
    page.wait_for_selector('#workspace[data-state="working"]')
    editor = page.locator(".ws-step.own textarea")
    assert editor.input_value() == hostile
    assert not Step.objects.filter(source=Step.HUMAN).exists()
    page.keyboard.press("Escape")  # leaves it for later; Enter now asks before dropping it
    page.keyboard.press("Enter")
    assert "not saved" in page.inner_text(".ws-hint")
    assert Assignment.objects.get().state == Assignment.ACTIVE

    page.keyboard.press("w")
    page.keyboard.press("Control+Enter")
    wait_saved(page)
    assert own_step("ann").text == hostile
    assert 'Let <img src=x onerror="window.__pwned=1"> be' in page.inner_text(".ws-step.own")
    assert page.locator(".ws-step.own .katex").count() == 1
    assert page.locator(".ws-step-list img").count() == 0
    assert page.evaluate("typeof window.__pwned") == "undefined"

    page.keyboard.press("u")  # takes the written step back; its text stays for w
    wait_saved(page)
    assert not Step.objects.filter(source=Step.HUMAN).exists()
    page.keyboard.press("u")  # and now the last -1 may change
    assert current(page) == ("1", "2")
    page.keyboard.press("3")
    page.keyboard.press("w")
    assert page.locator(".ws-step.own textarea").input_value() == hostile
    page.keyboard.press("Control+Enter")
    page.keyboard.press("3")  # own step -1 too: the pass ends there
    assert "Found an error" in page.inner_text(".ws-hint")
    page.keyboard.press("Enter")
    page.wait_for_selector('#workspace[data-state="empty"]')
    done = Assignment.objects.get()
    assert done.finish_reason == "found_error"
    assert stored_ratings("ann") == {
        (0, 0): (1, False), (1, 0): (-1, False), (1, 1): (-1, False), (1, 2): (-1, False), (1, 3): (-1, False),
    }


# Standing -------------------------------------------------------------------------------


def add_solution(project, steps):
    return make_solution(project, steps, problem="Find $x$ if $x + 1 = 3$.", answer="2")


@pytest.fixture
def screened():
    """Two screening items with gold [+1, +1, -1] and one ordinary solution."""
    project, first = make_task(["$x + 1 = 3$.", "So $x = 3 - 1$.", "So $x = 3$."], requires_screening=True,
                               screening_threshold=0.8, overlap=2)
    second = add_solution(project, ["Subtract $1$.", "Then $x = 2$.", "# Answer\n\n3"])
    for item in (first, second):
        gold.set_gold(item, {(0, 0): 1, (1, 0): 1, (2, 0): -1}, screening=True)
    add_solution(project, ["Real work: $x = 2$.", "# Answer\n\n2"])
    return project


def standing(page):
    node = page.locator('[data-testid="standing"]')
    return node.inner_text() if node.is_visible() else ""


def test_a_newcomer_sees_screening_progress_then_that_they_passed(page, live_server, screened):
    make_user("newbie", "annotator")
    log_in(page, live_server, "newbie", next_path=None)
    open_workspace(page, live_server, screened)
    assert standing(page) == "Screening: 0 of 2 done"
    screenshot(page, "workspace-screening-banner")
    for key in "113":
        page.keyboard.press(key)
    page.keyboard.press("Enter")
    page.wait_for_function("() => document.querySelector('[data-testid=standing]').textContent.includes('1 of 2')")
    page.wait_for_selector('#workspace[data-state="working"]')
    for key in "113":
        page.keyboard.press(key)
    page.keyboard.press("Enter")
    page.wait_for_function("() => document.querySelector('[data-testid=standing]').dataset.standing === 'passed'")
    page.wait_for_selector('#workspace[data-state="working"]')
    assert standing(page) == "You passed screening — real work starts now"
    assert "Real work" in page.inner_text(".ws-step-list")
    screenshot(page, "workspace-screening-passed")
    # The notice stays until the first real task is submitted, and nothing tells gold apart.
    page.reload()
    page.wait_for_selector('#workspace[data-state="working"]')
    assert standing(page) == "You passed screening — real work starts now"
    body = page.inner_text("body").lower()
    assert "gold" not in body and "score" not in body
    page.keyboard.press("1")
    page.keyboard.press("1")
    page.keyboard.press("Enter")
    page.wait_for_selector('#workspace[data-state="empty"]')
    assert standing(page) == ""


def test_failing_screening_says_a_lead_will_review_and_offers_no_work(page, live_server, screened):
    make_user("newbie", "annotator")
    log_in(page, live_server, "newbie", next_path=None)
    open_workspace(page, live_server, screened)
    for done in range(2):  # +1 +1 +1: only 2 of 3 steps agree with gold on each item
        page.wait_for_function(
            f"() => document.querySelector('[data-testid=standing]').textContent === 'Screening: {done} of 2 done'"
        )
        page.wait_for_selector('#workspace[data-state="working"]')
        for key in "111":
            page.keyboard.press(key)
        page.keyboard.press("Enter")
    page.wait_for_selector('#workspace[data-state="failed"]')
    panel = page.inner_text(".ws-panel")
    assert "Screening not passed — a lead will review your work; no new work until then" in panel
    assert page.locator(".ws-step").count() == 0 or not page.locator(".ws-body").is_visible()
    assert standing(page) == ""
    screenshot(page, "workspace-screening-failed")


def test_an_annotator_paused_by_a_lead_reads_the_leads_reason(page, live_server):
    project, _ = make_task(["Step one.", "Step two."])
    user = make_user("ann", "annotator")
    lead = make_user("lea", "lead")
    screening.pause(Annotator.objects.get(user=user), project, by=lead,
                    reason="Please reread the guidelines on <b>−1</b> and tell me when done.")
    log_in(page, live_server, "ann", next_path=None)
    page.goto(f"{live_server.url}/projects/{project.pk}/work/")
    page.wait_for_selector('#workspace[data-state="paused"]')
    text = page.inner_text("#workspace")
    assert "Paused by a lead: Please reread the guidelines on <b>−1</b> and tell me when done." in text  # as text
    assert page.locator("#workspace b").count() == 0
    assert "Paused by quality control" not in text
    screenshot(page, "workspace-paused-by-lead")


def test_new_checked_results_are_said_in_the_workspace_once(page, live_server):
    project, _ = make_task(["Step one.", "Step two."])
    make_solution(project, ["Second, step one.", "Second, step two."])
    make_solution(project, ["Third, step one.", "Third, step two."])
    user = make_user("ann", "annotator")
    log_in(page, live_server, "ann", next_path=None)
    open_workspace(page, live_server, project)
    notice = page.locator("[data-standing=results]")
    assert not notice.is_visible()  # what was there before this browser came is not news
    # A gold pass from an earlier day is scored: the day's figure on the checks page moves.
    rated_pass(make_gold(project, [1, 1]), Annotator.objects.get(user=user), [1, -1], at=T0)
    assert score_gold() == 1
    for _ in range(2):
        page.keyboard.press("1")
    page.keyboard.press("Enter")
    notice.wait_for(state="visible")
    assert "New checked results" in notice.inner_text()
    assert notice.locator("a").get_attribute("href") == f"/projects/{project.pk}/checks/"
    screenshot(page, "workspace-new-checked-results")
    for _ in range(2):
        page.keyboard.press("1")
    page.keyboard.press("Enter")
    page.wait_for_function("() => /Submitted\\. 2 done today/.test("
                           "document.querySelector('[data-testid=submit-confirmation]').textContent)")
    notice.wait_for(state="hidden")  # said once: the next solution comes without it


def test_a_paused_annotator_is_told_so_and_gets_no_work(page, live_server):
    project, _ = make_task(["Step one.", "Step two."])
    user = make_user("ann", "annotator")
    annotator = Annotator.objects.get(user=user)
    screening.pause(annotator, project, reason="rolling gold score 0.40 < 0.70 over last 5 gold passes")
    log_in(page, live_server, "ann", next_path=None)
    page.goto(f"{live_server.url}/projects/{project.pk}/work/")
    page.wait_for_selector('#workspace[data-state="paused"]')
    text = page.inner_text("#workspace")
    assert "Paused by quality control — a lead will review" in text
    assert "0.40" not in text and "gold" not in text.lower()
    assert not Assignment.objects.exists()
    screenshot(page, "workspace-paused")
    # The way to the steps that differed from the checks (only submitted, scored passes show there).
    link = page.locator(f'.ws-panel a[href="/projects/{project.pk}/checks/"]')
    assert "checked results" in link.inner_text()

    screening.resume(annotator, project)
    page.keyboard.press("r")  # check again: work comes
    page.wait_for_selector('#workspace[data-state="working"]')


# Instructions ---------------------------------------------------------------------------


def test_instructions_render_math_in_the_sanitized_html(page, live_server):
    project, _ = make_task(
        ["Step one."],
        instructions=("Rate **each** step: a step claiming $\\frac{1}{2} + \\frac{1}{3} = \\frac{2}{5}$ is -1.\n\n"
                      "Prices like `$5` and `$x$` in code stay as written.\n\n"
                      "Escaped markup next to math stays text: $y$ &lt;img src=x onerror=\"window.__pwned=1\"&gt;"),
    )
    make_user("ann", "annotator")
    log_in(page, live_server, "ann", next_path=None)
    open_workspace(page, live_server, project)
    page.keyboard.press("?")
    body = page.locator(".ws-instructions-body")
    assert body.locator(".katex").count() == 2
    assert body.locator("strong").inner_text() == "each"
    assert [c.inner_text() for c in body.locator("code").all()] == ["$5", "$x$"]
    assert '<img src=x onerror="window.__pwned=1">' in body.inner_text()
    assert body.locator("img").count() == 0
    assert page.evaluate("typeof window.__pwned") == "undefined"
    screenshot(page, "workspace-instructions-math")
