"""The annotator workspace in real Chromium, end to end on real PRM800K data.

A new annotator logs in, rates the phase-2 solution of PRM800K's documented example record
from the keyboard until the first error, rates the alternatives at the error, submits, and
the PRM800K export holds exactly that pass.
"""
import json

import pytest

from labeling.exports import ExportFilters, get_exporter
from labeling.imports import run_import
from labeling.models import Annotator, Assignment, Solution, Step
from tests.factories import make_user, make_project

from .conftest import log_in, screenshot

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def imported(example, tmp_path):
    """A phase-2 project holding the example record; overlap 2 leaves a slot for a new annotator."""
    project = make_project(
        name="PRM800K phase 2", overlap=2, stop_at_first_error=True, allow_alternatives=True,
        instructions="Rate **every** step: +1 good, 0 neutral, -1 wrong.",
    )
    source = tmp_path / "example.jsonl"
    source.write_text(json.dumps(example) + "\n")
    run_import("prm800k", source, project)
    return project


def error_position(example):
    return next(i for i, s in enumerate(example["label"]["steps"]) if s["chosen_completion"] is None)


def test_new_annotator_rates_by_keyboard_to_the_first_error_and_the_export_holds_it(
    page, live_server, imported, example
):
    project = imported
    solution = Solution.objects.get(project=project)
    pre = example["question"]["pre_generated_steps"]
    error = error_position(example)  # 2: "200,000 = 2^9 5^4" is wrong
    alternatives = list(
        Step.objects.filter(solution=solution, position=error, alternative__gt=0)
        .order_by("alternative").values_list("text", flat=True)
    )
    assert error == 2 and len(alternatives) >= 2

    make_user("newbie", "annotator")
    log_in(page, live_server, "newbie")
    page.click(f'[data-project-id="{project.pk}"] a.start-work')
    page.wait_for_url(f"{live_server.url}/projects/{project.pk}/work/")

    steps = page.locator(".ws-step")
    current = page.locator(".ws-step.current")
    # The problem, the answer as the current guess, and only the first step.
    page.wait_for_selector('#workspace[data-state="working"]')
    assert "Current guess of the correct answer" in page.inner_text(".ws-answer")
    assert page.locator(".ws-problem .katex").count() >= 3  # $20 !$, $200,\!000$, ...
    assert steps.count() == 1 and current.get_attribute("data-position") == "0"
    legend = page.inner_text(".ws-legend")  # the keys are on the page
    assert all(word in legend for word in ("good", "bad", "unsure", "undo", "submit", "give up", "instructions"))

    page.keyboard.press("+")  # step 1: +1
    page.keyboard.press("f")  # step 2 is unsure ...
    assert page.locator(".ws-step.current .ws-flag").is_visible()
    page.keyboard.press("2")  # ... and neutral
    assert current.get_attribute("data-position") == "2" and current.get_attribute("data-alternative") == "0"
    screenshot(page, "workspace-rating-a-step")
    page.keyboard.press("3")  # step 3: -1, the first error

    # The alternatives at the error come next, one at a time, with the same keys.
    given = []
    keys = {"1": 1, "2": 0, "3": -1}
    for i, text in enumerate(alternatives, start=1):
        assert current.get_attribute("data-position") == str(error)
        assert current.get_attribute("data-alternative") == str(i)
        key = "123"[i % 3]
        if i == 1:
            screenshot(page, "workspace-alternatives-at-error")
        page.keyboard.press(key)
        given.append(keys[key])
    assert current.count() == 0
    assert "Found an error" in page.inner_text(".ws-hint")
    assert steps.count() == 3 + len(alternatives)  # nothing after the error is shown

    page.keyboard.press("Enter")
    page.wait_for_selector('#workspace[data-state="empty"]')  # the only solution is done
    assert "No more work" in page.inner_text(".ws-panel")
    screenshot(page, "workspace-no-more-work")

    annotator = Annotator.objects.get(user__username="newbie")
    mine = Assignment.objects.get(annotator=annotator)
    assert mine.state == Assignment.SUBMITTED and mine.submit_key
    lines = [json.loads(line) for line in get_exporter("prm800k")(ExportFilters(project_id=project.pk))]
    assert len(lines) == 2  # the imported pass and the new one
    records = [r for r in lines if r["labeler"] == str(annotator.uuid)]
    assert len(records) == 1
    record = records[0]
    assert record["question"] == example["question"]
    assert record["generation"] == example["generation"]
    label = record["label"]
    assert label["finish_reason"] == "found_error"
    assert isinstance(label["total_time"], int) and label["total_time"] > 0
    assert label["steps"] == [
        {"completions": [{"text": pre[0], "rating": 1, "flagged": False}], "human_completion": None,
         "chosen_completion": 0},
        {"completions": [{"text": pre[1], "rating": 0, "flagged": True}], "human_completion": None,
         "chosen_completion": 0},
        {"completions": [{"text": pre[2], "rating": -1, "flagged": False}]
         + [{"text": t, "rating": v, "flagged": False} for t, v in zip(alternatives, given)],
         "human_completion": None, "chosen_completion": None},
    ]


def test_a_long_solution_fits_the_window_and_keeps_the_current_step_in_view(page, live_server, imported, example):
    make_user("newbie", "annotator")
    log_in(page, live_server, "newbie", next_path=None)
    page.goto(f"{live_server.url}/projects/{imported.pk}/work/")
    page.wait_for_selector('#workspace[data-state="working"]')
    last = len(example["question"]["pre_generated_steps"]) - 1
    for _ in range(last):
        page.keyboard.press("1")
    current = page.locator(".ws-step.current")
    assert current.get_attribute("data-position") == str(last)
    screenshot(page, "workspace-long-solution")
    # The page itself does not scroll at 1280x720; the steps pane does, and shows the current step.
    assert page.evaluate("document.scrollingElement.scrollHeight <= window.innerHeight")
    pane, step = page.locator(".ws-steps").bounding_box(), current.bounding_box()
    assert pane["y"] <= step["y"] and step["y"] + step["height"] <= pane["y"] + pane["height"] + 1
    assert page.locator(".ws-bar").bounding_box()["y"] + 10 < 720  # the keys bar is on screen
