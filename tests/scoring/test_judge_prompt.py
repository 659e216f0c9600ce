"""The judge's prompt and the reading of its answers (``scoring.judge_prompt``), and its shared limits."""
import threading

import pytest

from scoring.judge import Budget, RateLimiter
from scoring.judge_prompt import DEFAULT_PROMPT, parse_answer, render_prompt


def test_the_default_prompt_shows_the_problem_and_numbered_steps_and_asks_for_the_line_form():
    prompt = render_prompt(DEFAULT_PROMPT, "  Find $x$ if $\\{x\\} = 2$.  ", ["$x = 2$", " So {steps}. "])
    assert "# Problem\n\nFind $x$ if $\\{x\\} = 2$.\n" in prompt
    assert "# Solution (2 steps)\n\nStep 1: $x = 2$\n\nStep 2: So {steps}.\n" in prompt  # braces shown as written
    assert "Write exactly 2 lines" in prompt and "Step 1: +1 | a short reason" in prompt


@pytest.mark.parametrize("answer, expected", [
    ("Step 1: +1 | right\nStep 2: -1 | 3 * 4 is 12, not 14", [(1, "right"), (-1, "3 * 4 is 12, not 14")]),
    ("Here is my grading.\n**Step 1:** 0 — neutral\n- Step 2: 1: fine\n", [(0, "neutral"), (1, "fine")]),
    ("step 1 (−1): sign error\nSTEP 2 = +1", [(-1, "sign error"), (1, "")]),
    ('```json\n{"steps": [{"step": 2, "rating": -1, "reason": "b"}, {"step": 1, "rating": "+1"}]}\n```',
     [(1, ""), (-1, "b")]),
    ('[{"step": 1, "value": 0, "reason": "ok"}, {"step": 2, "value": 1}]', [(0, "ok"), (1, "")]),
    ("<think>Step 1: -1 | maybe?\nStep 2: 0</think>\nStep 1: +1 | fine\nStep 2: +1 | fine",
     [(1, "fine"), (1, "fine")]),
])
def test_an_answer_that_rates_every_step_once_is_read(answer, expected):
    assert parse_answer(answer, 2) == expected


@pytest.mark.parametrize("answer", [
    "", "The solution is correct.", "Step 1: +1 | a",  # a step missing
    "Step 1: +1\nStep 2: -1\nStep 3: 0",  # a step the solution does not have
    "Step 1: +1\nStep 1: -1\nStep 2: 0",  # rated twice
    "Step 1: 2 | b\nStep 2: +1", "Step 1: 1.5\nStep 2: +1", "Step 1: 12 apples\nStep 2: +1",
    "Step 1: correct\nStep 2: wrong",
    '[{"step": 1, "rating": 2}, {"step": 2, "rating": 1}]', '[{"step": 1, "rating": true}, {"step": 2, "rating": 1}]',
    '{"steps": "all fine"}',
    "<think>Step 1: +1\nStep 2: +1",  # thinking cut off by max_tokens: no answer
])
def test_anything_else_is_unparseable_never_guessed(answer):
    assert parse_answer(answer, 2) is None


def test_the_budget_is_spent_once_per_request_across_threads():
    budget = Budget(100)
    taken = []
    threads = [threading.Thread(target=lambda: taken.extend(budget.take() for _ in range(30))) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert taken.count(True) == 100 and budget.used == 100


def test_the_rate_limiter_spaces_request_starts_evenly():
    now, slept = [100.0], []

    def sleep(seconds):
        slept.append(seconds)
        now[0] += seconds

    limiter = RateLimiter(120, clock=lambda: now[0], sleep=sleep)  # one start every 0.5 s
    for _ in range(4):
        limiter.wait()
    assert slept == [0.5, 0.5, 0.5]
    now[0] += 10  # idle: no credit saved up beyond the next slot
    limiter.wait()
    assert len(slept) == 3
    RateLimiter(0, clock=lambda: now[0], sleep=sleep).wait()  # 0: no limit
    assert len(slept) == 3
