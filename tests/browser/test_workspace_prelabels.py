"""Machine pre-labels in the workspace (issue #31): verify mode at desktop and phone width, the accept
key rating a step with its pre-label as the annotator's own rating, suggestions shown but never
accepted by a key, and hidden ones never on the page."""
import datetime

import pytest
from django.utils import timezone

from labeling.models import LabelSource, Project, StepLabel
from tests.factories import machine_labels, make_task, make_user

from .conftest import current, log_in, open_workspace, screenshot, stored_ratings, wait_saved
from .test_workspace_small_screens import PHONE

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

STEPS = ["Let $x$ be the number: $2x + 3 = 7$.", "Subtract 3: $2x = 4$.", "So $x = 3$.", "# Answer\n\n3"]


def judged(mode, reason="the algebra checks out", user=True):
    project, solution = make_task(STEPS, name=f"pre-labels {mode}")
    source = machine_labels(solution, [1, 1, -1, None], kind=LabelSource.JUDGE, name="judge v1")
    StepLabel.objects.filter(source=source).update(reason=reason,
                                                   created_at=timezone.now() - datetime.timedelta(minutes=5))
    Project.objects.filter(pk=project.pk).update(prelabel_mode=mode, prelabel_source=source)
    if user:
        make_user("ann", "annotator")
    return project


def prelabels_on_page(page):
    return {int(s.get_attribute("data-position")): s.locator(".ws-prelabel").inner_text()
            for s in page.locator(".ws-step").all() if s.locator(".ws-prelabel").count()}


def test_verify_mode_shows_each_pre_label_and_a_accepts_it_as_the_annotators_rating(browser, page, live_server):
    project = judged("verify")
    log_in(page, live_server, "ann", next_path=None)
    open_workspace(page, live_server, project)
    assert prelabels_on_page(page)[0] == "PRE-LABEL TO CHECK +1 · the algebra checks out"
    assert "accepts the pre-label" in page.inner_text(".ws-hint")
    assert page.locator('.ws-legend [data-action="accept"]').is_visible()
    screenshot(page, "workspace-verify-desktop")
    page.keyboard.press("a")  # step 1: its pre-label +1, confirmed
    page.keyboard.press("a")  # step 2: +1
    assert current(page) == ("2", "0")
    assert prelabels_on_page(page)[2].endswith("−1 · the algebra checks out")
    page.keyboard.press("1")  # step 3's pre-label says -1: corrected to +1 by hand
    page.keyboard.press("a")  # step 4 has no pre-label: the key says so and rates nothing
    assert "has no pre-label" in page.inner_text(".ws-hint")
    wait_saved(page)
    assert stored_ratings("ann") == {(0, 0): (1, False), (1, 0): (1, False), (2, 0): (1, False)}
    # On a phone the pre-label fits the card (the pass goes on at its fourth step).
    context = browser.new_context(**PHONE)
    phone = context.new_page()
    try:
        log_in(phone, live_server, "ann", next_path=None)
        open_workspace(phone, live_server, project)
        line = phone.locator('.ws-step[data-position="0"] .ws-prelabel')
        box = line.bounding_box()
        assert box and box["x"] >= 0 and box["x"] + box["width"] <= phone.viewport_size["width"]
        phone.locator('.ws-step[data-position="0"]').scroll_into_view_if_needed()
        screenshot(phone, "workspace-verify-phone")
    finally:
        context.close()


def test_suggestions_are_shown_but_only_rating_keys_rate_and_hidden_ones_never_reach_the_page(page, live_server):
    project = judged("suggest")
    log_in(page, live_server, "ann", next_path=None)
    open_workspace(page, live_server, project)
    assert prelabels_on_page(page)[0] == "SUGGESTION +1 · the algebra checks out"
    assert not page.locator('.ws-legend [data-action="accept"]').is_visible()
    page.keyboard.press("a")
    assert "rate the step yourself" in page.inner_text(".ws-hint")
    assert current(page) == ("0", "0") and stored_ratings("ann") == {}
    hidden = judged("hidden", reason="SECRET-REASON", user=False)
    open_workspace(page, live_server, hidden)
    assert page.locator(".ws-prelabel").count() == 0
    assert "SECRET-REASON" not in page.content()


def test_the_dashboard_shows_who_accepts_wrong_pre_labels_and_the_modes_compared(page, live_server):
    from labeling.models import Assignment
    from labeling.work import prelabels, queue, submission
    from tests.factories import make_annotator, make_gold, make_solution, rated_pass

    project = judged("verify")
    Project.objects.filter(pk=project.pk).update(quality_control_rate=1.0, trap_rate=1.0)
    project.refresh_from_db()
    item = make_gold(project, [1, 1, 1])
    source = project.prelabel_source
    machine_labels(item, [1, 1, 1], kind=source.kind, name=source.name)
    StepLabel.objects.filter(source=source).update(created_at=timezone.now() - datetime.timedelta(minutes=5))
    stamper = make_annotator("stamper")
    assignment = queue.next_assignment(stamper, project)
    from labeling.api.work_serializers import present

    shown = sorted(present(assignment)["prelabels"], key=lambda p: p["position"])
    values = [p["value"] for p in shown]
    values = values[:values.index(-1) + 1] if -1 in values else values
    submission.submit(assignment, finish_reason="found_error" if -1 in values else "solution",
                      ratings=[{"position": i, "value": v} for i, v in enumerate(values)])
    assert prelabels.wrong_prelabels(project) == {stamper.pk: (1, 1)}
    for who in ("p1", "p2"):  # passes without pre-labels, for the comparison
        a = rated_pass(make_solution(project, steps=2), make_annotator(who), [1, 1])
        Assignment.objects.filter(pk=a.pk).update(prelabel_mode="hidden")
    make_user("lead", "lead")
    log_in(page, live_server, "lead", next_path=None)
    page.goto(f"{live_server.url}/projects/{project.pk}/dashboard/")
    page.wait_for_selector('#dashboard[data-state="ready"]')
    row = page.locator(f'[data-testid="annotator-table"] tr[data-annotator="{stamper.pk}"]')
    assert row.locator('td[data-key="wrong_prelabels_accepted"]').inner_text() == "1 of 1"
    modes = page.locator('[data-testid="prelabel-modes"] tbody tr')
    assert modes.locator("td:first-child").all_inner_texts() == ["no pre-labels", "pre-labels to verify"]
    page.locator('[data-testid="prelabel-modes"]').scroll_into_view_if_needed()
    screenshot(page, "dashboard-prelabel-modes")
