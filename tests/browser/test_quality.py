"""The lead's quality work and an annotator's gold results, in real Chromium against the live server.

A lead makes gold from a pass and edits it on the drill-down (which shows the pass's "unsure"
flags and note), approves a gold proposal, rules on a disagreement (and the consensus export
carries the ruling), and changes the quality settings (a bad value gets its field's message).
An annotator sees nothing of a gold item, before or after submitting it: gold passes count only
in a daily figure; a screening pass shows, once submitted, which step differed and the reference.
"""
import json
from datetime import timedelta

import pytest
from django.utils import timezone

from labeling.models import Assignment, GoldProposal, GoldScore, Rating
from labeling.quality import gold, proposals
from tests.factories import make_annotator, make_project, make_solution, make_user, rated_pass, score_gold

from .conftest import log_in, screenshot, wait_saved

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

STEPS = ["We have $2x + 3 = 7$.", "So $2x = 4$.", "Hence $x = 2$.", "# Answer\n\n2"]
PROBLEM = dict(problem="Find $x$ if $2x + 3 = 7$.", answer="2")


@pytest.fixture
def lead_project():
    make_user("lead", "lead")
    return make_project(name="Phase 2 quality", overlap=3)


def quality_page(page, live_server, project, tab="", query=""):
    """The quality page on ``tab`` (a section's id: its tab is an address), the first tab without."""
    page.goto(f"{live_server.url}/projects/{project.pk}/quality/{query}{'#' + tab if tab else ''}")
    page.wait_for_selector('#quality[data-state="ready"]')


def test_a_lead_makes_gold_from_a_pass_and_edits_it_on_the_drill_down(page, live_server, lead_project):
    project = lead_project
    ann = make_user("ann", "annotator").annotator
    bob = make_annotator("bob")
    solution = make_solution(project, STEPS, **PROBLEM)
    mine = rated_pass(solution, ann, [1, 1, 1, 1])
    rated_pass(solution, bob, [1, 1, -1])
    Rating.objects.filter(assignment=mine, step__position=1).update(flagged=True)
    Assignment.objects.filter(pk=mine.pk).update(finish_note="Step 2 divides both sides; fine?")

    log_in(page, live_server, "lead", next_path=None)
    page.goto(f"{live_server.url}/projects/{project.pk}/dashboard/annotators/{ann.pk}/")
    page.wait_for_selector('#dashboard[data-state="ready"]')
    card = page.locator(f'article.pass[data-pass="{mine.pk}"]')
    assert card.locator('[data-testid="unsure"]').count() == 1
    assert card.locator("tr").nth(2).locator('[data-testid="unsure"]').count() == 1  # on step 2
    assert "1 flagged unsure" in card.locator(".pass-head").inner_text()
    assert card.locator('[data-testid="pass-note"]').inner_text() == "Their note: Step 2 divides both sides; fine?"
    assert card.locator("td.gold .rating").count() == 0  # no gold yet

    card.locator('[data-testid="make-gold"]').click()
    page.wait_for_selector(f'article.pass[data-pass="{mine.pk}"] [data-testid="edit-gold"]')
    card = page.locator(f'article.pass[data-pass="{mine.pk}"]')
    assert card.locator("td.gold").all_inner_texts() == ["+1", "+1", "+1", "+1"]
    assert gold.gold_ratings(solution) == {(0, 0): 1, (1, 0): 1, (2, 0): 1, (3, 0): 1}

    card.locator('[data-testid="edit-gold"]').click()
    editor = card.locator(".gold-editor")
    editor.locator('select[data-position="2"]').select_option("-1")
    editor.locator('select[data-position="3"]').select_option("")  # no gold on the answer step
    editor.locator('input[type="checkbox"]').check()
    screenshot(page, "quality-drilldown-gold-editor")
    editor.locator('[data-testid="save-gold"]').click()
    page.wait_for_function(
        f"() => [...document.querySelectorAll('article.pass[data-pass=\"{mine.pk}\"] td.gold')]"
        ".map((td) => td.textContent).join(' ') === '+1 +1 −1 —'")
    assert gold.gold_ratings(solution) == {(0, 0): 1, (1, 0): 1, (2, 0): -1}
    solution.refresh_from_db()
    assert solution.is_gold and solution.is_screening
    assert page.locator(f'article.pass[data-pass="{mine.pk}"] tr.off-gold').count() == 1  # their +1 at step 3

    remove = page.locator(f'article.pass[data-pass="{mine.pk}"] [data-testid="remove-gold"]')
    remove.click()  # asks to be sure first
    assert remove.inner_text() == "Click again to remove the gold" and gold.gold_ratings(solution)
    remove.click()
    page.wait_for_selector(f'article.pass[data-pass="{mine.pk}"] [data-testid="make-gold"]')
    solution.refresh_from_db()
    assert not solution.is_gold and gold.gold_ratings(solution) == {}


def test_a_lead_approves_a_gold_proposal_from_its_evidence(page, live_server, lead_project):
    project = lead_project
    solution = make_solution(project, STEPS, **PROBLEM)
    for name, values in (("ann", [1, 1, -1]), ("bob", [1, 1, -1]), ("cal", [1, 0, -1])):
        rated_pass(solution, make_annotator(name), values)
    proposal = proposals.propose_gold_from_consensus(solution)

    log_in(page, live_server, "lead")
    page.click(f'[data-project-id="{project.pk}"] a.quality-link')
    page.wait_for_selector('#quality[data-state="ready"]')
    item = page.locator(f'[data-testid="proposals"] [data-proposal="{proposal.pk}"]')
    assert "consensus of 3 passes" in item.locator("h3").inner_text()
    assert page.locator("#tab-proposals").inner_text() == "Gold proposals (1)"
    rows = item.locator("tr")
    assert rows.nth(2).locator("td").nth(2).inner_text() == "+1"  # proposed for step 2 ...
    assert rows.nth(2).locator("td").nth(3).inner_text().split() == ["+1", "×2", "0", "×1"]  # ... on these votes
    assert rows.nth(2).get_attribute("class") == "split"
    assert item.locator(".katex").count() > 0
    screenshot(page, "quality-proposals")

    item.locator('[data-testid="approve"]').click()
    page.wait_for_selector(f'[data-proposal="{proposal.pk}"]', state="detached")
    assert "is a gold item now" in page.locator('[data-testid="proposals-message"]').inner_text()
    assert page.locator("#tab-proposals").inner_text() == "Gold proposals (0)"  # one fewer waits
    assert GoldProposal.objects.get().state == "approved"
    assert gold.gold_ratings(solution) == {(0, 0): 1, (1, 0): 1, (2, 0): -1}


def test_a_lead_rules_on_a_disagreement_and_the_consensus_export_carries_it(page, live_server, lead_project):
    project = lead_project
    split = make_solution(project, STEPS, **PROBLEM)
    agreed = make_solution(project, STEPS, **PROBLEM)
    for name, values in (("ann", [1, -1]), ("bob", [1, -1]), ("cal", [1, 1, 1, 1])):
        person = make_annotator(name)
        rated_pass(split, person, values)
        rated_pass(agreed, person, [1, 1, -1])

    log_in(page, live_server, "lead", next_path=None)
    quality_page(page, live_server, project, "disagreements")
    box = page.locator('[data-testid="disagreements"]')
    assert box.locator('[data-testid="disagreement-count"]').inner_text().startswith("1 solution where")
    item = box.locator(f'[data-solution="{split.pk}"]')
    assert box.locator(f'[data-solution="{agreed.pk}"]').count() == 0
    # Collapsed: one line with the problem, the disagreeing step and who voted what; no steps yet.
    assert item.get_attribute("open") is None and item.locator("table").count() == 0
    line = item.locator("summary")
    assert line.locator(".q-excerpt").inner_text().startswith("Find")
    assert line.locator(".q-excerpt .katex").count() == 2  # the excerpt's math rendered
    assert line.locator(".q-summary-step").count() == 1
    assert " ".join(line.locator(".q-summary-step").inner_text().split()) == "Step 2 +1 ×1 cal −1 ×2 ann, bob"
    line.click()
    step = item.locator('tr[data-position="1"]')
    assert "split" in step.get_attribute("class")
    assert step.locator("td.consensus").inner_text() == "−1"  # the majority
    # Who voted what: each value's count with the names of those who gave it.
    groups = step.locator(".votes .vote")
    assert [groups.nth(i).inner_text().split(maxsplit=2) for i in range(groups.count())] == [
        ["+1", "×1", "cal"], ["−1", "×2", "ann, bob"]]
    step.locator("select").select_option("1")
    item.locator(".q-note").fill("dividing by 2 is right")
    screenshot(page, "quality-disagreements")
    item.locator('[data-testid="save-rulings"]').click()
    page.wait_for_function(
        f"() => document.querySelector('[data-solution=\"{split.pk}\"] tr[data-position=\"1\"] td.consensus')"
        ".textContent === '+1'")
    assert "ruled" in step.get_attribute("class")

    export = box.locator("a", has_text="consensus export").get_attribute("href")
    answer = page.request.get(f"{live_server.url}{export}")
    assert answer.status == 200
    records = [json.loads(line) for line in answer.text().splitlines()]
    # One record per overlapping solution, in id order: the ruled step 2 is +1 (the majority said -1),
    # and the pass goes on to the end; the unanimous one ends at its -1.
    assert [[s["completions"][0]["rating"] for s in r["label"]["steps"]] for r in records] == [
        [1, 1, 1, 1], [1, 1, -1]]
    assert records[0]["label"]["finish_reason"] == "solution"

    assert not item.locator(".q-summary-step .ruled-tag").is_hidden()
    page.reload()
    page.wait_for_selector('#quality[data-state="ready"]')
    assert page.locator('[data-testid="disagreement-count"]').inner_text() == "Nothing awaits a ruling."
    page.select_option('[data-testid="disagreement-filters"] select[name="state"]', "ruled")
    page.wait_for_selector(f'[data-testid="disagreements"] [data-solution="{split.pk}"]')
    assert "state=ruled" in page.url and page.url.endswith("#disagreements")
    page.locator(f'[data-solution="{split.pk}"] summary').click()
    page.wait_for_selector(f'[data-testid="disagreements"] [data-solution="{split.pk}"] tr.ruled')

    # Tabs: one section shown at a time, each an address; the arrow keys move between them.
    # Each tab counts what its panel lists: pending proposals, disagreements under the filter (the
    # ruled one here); no champion PRM, so nothing compared to count; settings are no list.
    tabs = page.locator('[role="tablist"] [role="tab"]')
    assert tabs.all_inner_texts() == ["Gold proposals (0)", "Disagreements (1)", "People vs PRM", "Label sources", "Settings"]
    assert page.locator('[role="tab"][aria-selected="true"]').inner_text() == "Disagreements (1)"
    assert page.locator("#settings").is_hidden() and page.locator("#proposals").is_hidden()
    tabs.filter(has_text="Settings").click()
    page.wait_for_url("**#settings")
    assert page.locator("#settings").is_visible() and page.locator("#disagreements").is_hidden()
    page.keyboard.press("ArrowLeft")
    assert page.evaluate("document.activeElement.textContent") == "Label sources"
    assert page.locator("#label-sources").is_visible() and page.url.endswith("#label-sources")
    page.keyboard.press("ArrowLeft")
    assert page.evaluate("document.activeElement.textContent") == "People vs PRM"
    assert page.locator("#people-vs-prm").is_visible() and page.url.endswith("#people-vs-prm")
    page.keyboard.press("Home")
    assert page.locator("#proposals").is_visible()


def test_a_lead_changes_the_quality_settings_and_a_bad_value_names_its_field(page, live_server, lead_project):
    project = lead_project
    item = make_solution(project, STEPS, **PROBLEM)
    gold.set_gold(item, {(0, 0): 1}, screening=True)
    log_in(page, live_server, "lead", next_path=None)
    quality_page(page, live_server, project, "settings")
    form = page.locator('[data-testid="settings-form"]')
    assert page.locator('[data-testid="screening-items"]').inner_text().startswith(
        "The screening set: 1 screening item in this project")
    page.fill("#setting-gold_threshold", "1.5")
    page.fill("#setting-quality_control_rate", "0.1")
    form.locator('button[type="submit"]').click()
    error = page.locator('[data-testid="error-gold_threshold"]')
    error.wait_for(state="visible")
    assert "less than or equal to 1" in error.inner_text()
    assert page.get_attribute("#setting-gold_threshold", "aria-invalid") == "true"
    assert page.locator('[data-testid="settings-message"]').inner_text() == "Not saved: fix the marked fields."
    screenshot(page, "quality-settings-error")
    project.refresh_from_db()
    assert (project.gold_threshold, project.quality_control_rate) == (0.0, 0.0)  # nothing saved

    page.fill("#setting-gold_threshold", "0.7")
    page.fill("#setting-gold_window", "5")
    page.check("#setting-requires_screening")
    page.fill("#setting-screening_threshold", "0.9")
    form.locator('button[type="submit"]').click()
    page.wait_for_function("() => document.querySelector('[data-testid=settings-message]').textContent === 'Saved.'")
    assert page.locator('[data-testid="error-gold_threshold"]').inner_text() == ""
    project.refresh_from_db()
    assert (project.gold_threshold, project.quality_control_rate, project.gold_window, project.requires_screening,
            project.screening_threshold) == (0.7, 0.1, 5, True, 0.9)
    screenshot(page, "quality-settings-saved")


def test_annotators_reach_neither_the_quality_page_nor_its_link(page, live_server, lead_project):
    make_user("ann", "annotator")
    log_in(page, live_server, "ann")
    assert page.locator("a.quality-link").count() == 0
    assert page.goto(f"{live_server.url}/projects/{lead_project.pk}/quality/").status == 403


def checked_item_first(page, live_server, project, screening=False):
    """A checked item of ``project`` (all +1) beside an ordinary one, served to ann first: her assignment."""
    item = make_solution(project, STEPS, **PROBLEM)
    gold.set_gold(item, {(0, 0): 1, (1, 0): 1, (2, 0): 1, (3, 0): 1}, screening=screening)
    make_solution(project, STEPS, **PROBLEM)
    make_user("ann", "annotator")
    log_in(page, live_server, "ann", next_path=None)
    page.goto(f"{live_server.url}/projects/{project.pk}/work/")
    page.wait_for_selector('#workspace[data-state="working"]')
    mine = Assignment.objects.get(annotator__user__username="ann")
    assert mine.solution_id == item.pk
    return mine


def test_an_annotator_never_sees_a_gold_pass_item_by_item_only_the_daily_figure(page, live_server, context):
    project = make_project(name="Checked work", overlap=2, quality_control_rate=1.0)
    mine = checked_item_first(page, live_server, project)
    page.keyboard.press("1")  # step 1: +1
    wait_saved(page)

    results = context.new_page()
    results_url = f"{live_server.url}/projects/{project.pk}/checks/"

    def open_results():
        results.goto(results_url)
        results.wait_for_selector('#my-missed[data-state="ready"]')
        return results.inner_text("#my-missed")

    before = open_results()  # in progress: nothing, not even that the item is checked
    assert "None of your tasks submitted before" in before

    page.keyboard.press("3")  # step 2: -1 where the gold says +1; the pass ends at the error
    page.wait_for_function("() => document.querySelector('.ws-hint').textContent.includes('Found an error')")
    page.keyboard.press("Enter")
    page.wait_for_function("() => document.querySelectorAll('.ws-step').length === 1")
    mine.refresh_from_db()
    assert mine.state == Assignment.SUBMITTED
    assert score_gold() == 1  # the scheduled job, run here
    # Scored and missed, yet the page is as before: no card, no problem, no values, no count.
    assert open_results() == before
    assert results.locator(".missed-pass").count() == 0 and "2x + 3" not in before

    # Once the pass is older than the daily cut-off it counts in the figure, still not by item.
    GoldScore.objects.filter(assignment=mine).update(submitted_at=timezone.now() - timedelta(days=2))
    text = open_results()
    assert "Of your 1 checked task submitted before" in text and "0 matched" in text
    assert results.locator(".missed-pass").count() == 0 and "2x + 3" not in text
    screenshot(results, "gold-results-annotator")


def test_an_annotator_sees_where_a_screening_item_differed_after_the_submit(page, live_server):
    project = make_project(name="Screened work", requires_screening=True, screening_size=1)
    mine = checked_item_first(page, live_server, project, screening=True)
    page.keyboard.press("1")
    page.keyboard.press("3")  # step 2: -1 where the reference says +1
    page.wait_for_function("() => document.querySelector('.ws-hint').textContent.includes('Found an error')")
    page.keyboard.press("Enter")
    page.wait_for_function("() => document.querySelector('#workspace').dataset.state !== 'working'"
                           " || document.querySelectorAll('.ws-step').length === 1")
    page.goto(f"{live_server.url}/projects/{project.pk}/checks/")
    page.wait_for_selector('#my-missed[data-state="ready"]')
    card = page.locator(f'[data-assignment="{mine.pk}"]')
    assert "A screening task you submitted" in card.inner_text()
    assert card.locator(".katex").count() > 0
    rows = card.locator("tr")
    assert rows.count() == 2
    assert rows.nth(0).locator("th").all_inner_texts() == ["#", "Step", "Yours", "Gold"]
    assert rows.nth(1).locator("td").all_inner_texts()[0] == "2"
    assert [rows.nth(1).locator("td.yours").inner_text(), rows.nth(1).locator("td.expected").inner_text()] == [
        "−1", "+1"]
    screenshot(page, "screening-results-annotator")


def test_the_quality_pages_have_no_serious_accessibility_violations(axe_context, live_server, lead_project):
    from .axe import axe_violations

    project = lead_project
    split = make_solution(project, STEPS, **PROBLEM)
    ann = make_annotator("ann")
    for person, values in ((ann, [1, -1]), (make_annotator("bob"), [1, -1]), (make_annotator("cal"), [1, 1, 1, 1])):
        rated_pass(split, person, values)
    proposals.propose_gold_from_consensus(split)
    page = axe_context.new_page()
    log_in(page, live_server, "lead", next_path=None)
    quality_page(page, live_server, project)
    assert axe_violations(page) == []
    # The Disagreements tab: its filter's controls and a collapsed then opened disagreement.
    page.click("#tab-disagreements")
    assert axe_violations(page) == []
    page.click(f'#disagreements [data-solution="{split.pk}"] summary')
    page.wait_for_selector(f'#disagreements [data-solution="{split.pk}"] table')
    assert axe_violations(page) == []
    page.goto(f"{live_server.url}/projects/{project.pk}/dashboard/annotators/{ann.pk}/")
    page.wait_for_selector('#dashboard[data-state="ready"]')
    page.click('[data-testid="make-gold"]')
    page.click('[data-testid="edit-gold"]')
    page.wait_for_selector(".gold-editor select")
    assert axe_violations(page) == []


def test_a_lead_sees_where_people_and_the_champion_prm_disagree(page, live_server, lead_project):
    from scoring.models import Checkpoint, SolutionScore

    project = lead_project
    best = Checkpoint.objects.create(project=project, status=Checkpoint.CHAMPION, is_champion=True)
    solution = make_solution(project, STEPS, **PROBLEM)
    for name in ("ann", "bob"):
        rated_pass(solution, make_annotator(name), [1, 1, -1])
    SolutionScore.objects.create(checkpoint=best, solution=solution, score=0.8, step_scores=[0.9, 0.6, 0.99, 0.9])

    log_in(page, live_server, "lead", next_path=None)
    quality_page(page, live_server, project, "people-vs-prm")
    rows = page.locator('[data-testid="people-vs-prm"] [data-testid="people-vs-prm-table"] tbody tr')
    # Three steps rated and scored (the fourth is unrated): the trusted wrong step first.
    assert rows.count() == 3
    assert [rows.nth(i).get_attribute("data-position") for i in range(3)] == ["2", "1", "0"]
    assert rows.nth(0).locator("td").all_inner_texts()[:4] == ["0.99", "0.99", "−1 wrong", f"solution {solution.pk}"]


def test_the_disagreements_filter_by_annotator_generation_and_step_and_stay_short(page, live_server, lead_project):
    """Twelve split solutions over two generations: collapsed, the queue is a short page; a filter
    narrows it, is kept in the address (a reload shows the same), and Clear shows all again."""
    project = lead_project
    people = {name: make_annotator(name) for name in ("ann", "bob", "cal", "dee")}
    solutions = []
    for n in range(12):
        solution = make_solution(project, STEPS, generation=1 + n % 2,
                                 problem=f"Problem {n}: find $x$ if $2x + {n} = 7$.")
        # ann and bob split on step 2 of every one; dee (on the last four only) on step 3.
        voters = [("ann", [1, 1, 1, 1]), ("bob", [1, -1, 1, 1]), ("cal", [1, 1, 1, 1])]
        if n >= 8:
            voters[2] = ("dee", [1, 1, -1, 1])
        for name, values in voters:
            rated_pass(solution, people[name], values)
        solutions.append(solution)

    page.set_viewport_size({"width": 1280, "height": 900})
    log_in(page, live_server, "lead", next_path=None)
    quality_page(page, live_server, project, "disagreements")
    box = page.locator('[data-testid="disagreements"]')
    items = box.locator("details.q-item")
    assert items.count() == 12 and box.locator("details.q-item[open]").count() == 0
    short = page.evaluate("document.documentElement.scrollHeight")
    screenshot(page, "quality-disagreements-collapsed")
    assert short < 3000  # the old page, every one open and the other sections below: 9,600 px
    for i in range(items.count()):
        items.nth(i).locator("summary").click()
    # An item draws its steps at its toggle event, which follows the click in a task of its own.
    page.wait_for_function("() => document.querySelectorAll('#disagreements details.q-item table').length === 12")
    assert page.evaluate("document.documentElement.scrollHeight") > 2 * short  # what collapsing saves

    filters = page.locator('[data-testid="disagreement-filters"]')
    filters.locator('select[name="annotator"]').select_option(label="dee")
    page.wait_for_function("() => document.querySelectorAll('#disagreements details.q-item').length === 4")
    assert [int(items.nth(i).get_attribute("data-solution")) for i in range(4)] == [s.pk for s in solutions[8:]]
    assert f"annotator={people['dee'].pk}" in page.url
    assert box.locator('[data-testid="disagreement-count"]').inner_text() == (
        "4 solutions where the passes disagree and a step awaits a ruling (filtered).")

    filters.locator('select[name="generation"]').select_option("1")  # generation 1: the even ones
    page.wait_for_function("() => document.querySelectorAll('#disagreements details.q-item').length === 2")
    assert [int(items.nth(i).get_attribute("data-solution")) for i in range(2)] == [solutions[8].pk, solutions[10].pk]

    # The step, as people count it: step 3 is where dee differs; step 2 (ann and bob's) too.
    filters.locator("select[name=generation]").select_option("")
    filters.locator('select[name="annotator"]').select_option("")
    filters.locator('input[name="step"]').fill("3")
    filters.locator('input[name="step"]').press("Enter")
    page.wait_for_function("() => document.querySelectorAll('#disagreements details.q-item').length === 4")
    assert "step=3" in page.url
    page.reload()
    page.wait_for_selector('#quality[data-state="ready"]')
    assert items.count() == 4 and filters.locator('input[name="step"]').input_value() == "3"
    # The tab counts what the panel lists under its filter.
    assert page.locator('[role="tab"][aria-selected="true"]').inner_text() == "Disagreements (4)"

    page.set_viewport_size({"width": 390, "height": 844})
    screenshot(page, "quality-disagreements-phone")
    assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
    filters.locator("button", has_text="Clear").click()
    page.wait_for_function("() => document.querySelectorAll('#disagreements details.q-item').length === 12")
    assert page.locator("#tab-disagreements").inner_text() == "Disagreements (12)"
    assert "step=" not in page.url and "annotator=" not in page.url


def test_a_lead_compares_label_sources_and_sets_what_annotators_see_of_them(page, live_server, lead_project):
    from labeling.models import LabelSource
    from tests.factories import machine_labels

    project = lead_project
    solution = make_solution(project, STEPS, **PROBLEM)
    for name in ("ann", "bob"):
        rated_pass(solution, make_annotator(name), [1, 1, -1])
    judge = machine_labels(solution, [1, 1, 1, 1], kind=LabelSource.JUDGE, name="judge v1")
    log_in(page, live_server, "lead", next_path=None)
    quality_page(page, live_server, project, "label-sources")
    box = page.locator('[data-testid="label-sources"]')
    assert box.locator('[data-testid="source-pairs-table"] tbody tr').nth(0).locator("td").all_inner_texts()[1:3] == [
        "3", "67%"]
    href = box.locator('[data-testid="agreed-export-trl"]').get_attribute("href")
    assert href == f"/api/projects/{project.pk}/export/?format=trl&agree=people%2Csource%3A{judge.pk}"
    page.select_option("#prelabel-prelabel_mode", "verify")
    page.select_option("#prelabel-prelabel_source", str(judge.pk))
    page.fill("#prelabel-trap_rate", "2")
    form = page.locator('[data-testid="prelabel-form"]')
    form.locator('button[type="submit"]').click()
    page.locator('[data-testid="prelabel-error-trap_rate"]').wait_for(state="visible")
    project.refresh_from_db()
    assert project.prelabel_mode == "hidden"  # nothing saved
    page.fill("#prelabel-trap_rate", "0.1")
    form.locator('button[type="submit"]').click()
    page.wait_for_function("() => document.querySelector('[data-testid=prelabel-message]').textContent.startsWith('Saved')")
    project.refresh_from_db()
    assert (project.prelabel_mode, project.prelabel_source_id, project.trap_rate) == ("verify", judge.pk, 0.1)
    box.scroll_into_view_if_needed()
    screenshot(page, "quality-label-sources")
