"""The LLM judge's job against a real OpenAI-compatible server on 127.0.0.1 (tests/openai_server.py).

Scripted answers (well-formed, malformed, refusals, a timeout, 429 then success) and a tiny random
GPT-2 behind the same API: the labels and statuses stored, the retries within the attempts and
the budget, the key the server received, and re-runs that skip what is labelled.
"""
import pytest

from labeling.models import LabelSource, StepLabel
from scoring import judge_job
from scoring.judge_runs import start_judge_run
from scoring.models import JudgeRun, JudgeSettings
from tests.factories import make_project, make_solution
from tests.openai_server import ModelServer, ScriptedServer, ok, refusal, sleep, status, text

KEY = "sk-test-4f1c9e"


@pytest.fixture
def project(db, monkeypatch):
    monkeypatch.setenv("STEPMARK_JUDGE_API_KEY", KEY)
    return make_project(name="judged")


def set_judge(project, server, **fields):
    values = {"base_url": server.url, "model": "judge-model", "api_key_env": "STEPMARK_JUDGE_API_KEY",
              "rate_limit": 0, "concurrency": 4, "budget": 100, "max_attempts": 3, "timeout_s": 5.0, **fields}
    return JudgeSettings.objects.update_or_create(project=project, defaults=values)[0]


def judge(project, **asked):
    run = start_judge_run(project, **asked)
    return judge_job.run(run.pk, backoff_s=0.01)


def labels_of(solution):
    return [(label.value, label.status, label.reason) for label in
            StepLabel.objects.filter(step__solution=solution).order_by("step__position")]


def test_well_formed_answers_become_labels_of_one_judge_source_and_a_rerun_asks_nothing(project):
    first = make_solution(project, steps=["$2x = 4$", "$x = 2$"], generation=0, problem="Solve A")
    second = make_solution(project, steps=["$y = 3$", "$y^2 = 6$", "so 6"], generation=0, problem="Solve B")
    other = make_solution(project, steps=1, generation=1, problem="Not asked")
    with ScriptedServer({"Solve B": [ok([1, -1, -1], reason="squared wrong")]}) as server:
        set_judge(project, server)
        run = judge(project, generation=0)
        assert run.state == JudgeRun.DONE, run.error
        assert labels_of(first) == [(1, "ok", "checked 1"), (1, "ok", "checked 2")]
        assert labels_of(second) == [(1, "ok", "squared wrong 1"), (-1, "ok", "squared wrong 2"),
                                     (-1, "ok", "squared wrong 3")]
        assert labels_of(other) == []
        source = LabelSource.objects.get(project=project)
        assert run.source == source and source.kind == LabelSource.JUDGE
        assert {key: source.details[key] for key in ("base_url", "model", "prompt_version")} == {
            "base_url": server.url, "model": "judge-model", "prompt_version": "prm800k-v1"}
        assert KEY not in str(source.details) and KEY not in source.name
        # The key sent is the environment variable's value; the prompt shows the problem and numbered steps.
        assert [auth for auth, _ in server.requests] == [f"Bearer {KEY}"] * 2
        prompt = server.prompts("Solve B")[0]["messages"][0]["content"]
        assert "Step 1: $y = 3$\n\nStep 2: $y^2 = 6$\n\nStep 3: so 6" in prompt and "(3 steps)" in prompt
        assert server.prompts("Solve B")[0]["model"] == "judge-model"
        assert run.result == {"solutions": 2, "already_labelled": 0, "judged": 2, "over_budget": 0, "stopped": 0,
                              "labelled": 5, "unparseable": 0, "refused": 0, "errors": 0, "requests": 2,
                              "budget": 100, "source": source.pk}
        assert run.progress["done"] == run.progress["total"] == 2
        again = judge(project, solution_ids=[first.pk, second.pk])
        assert again.state == JudgeRun.DONE and again.source == source
        assert again.result["already_labelled"] == 2 and again.result["requests"] == 0
        assert len(server.requests) == 2
        assert StepLabel.objects.filter(source=source).count() == 5


def test_a_malformed_answer_and_a_refusal_are_asked_again_then_recorded_never_guessed(project):
    fixed = make_solution(project, steps=2, problem="Malformed once")
    garbled = make_solution(project, steps=2, problem="Always garbled")
    refused = make_solution(project, steps=1, problem="Always refused")
    partial = make_solution(project, steps=3, problem="Two of three")
    with ScriptedServer({
        "Malformed once": [text("The steps look fine to me."), ok([0, 1])],
        "Always garbled": [text("Step 1: maybe\nStep 2: +1 | fine")],
        "Always refused": [refusal()],
        "Two of three": [text("Step 1: +1 | a\nStep 2: -1 | b")],
    }) as server:
        set_judge(project, server, max_attempts=3)
        run = judge(project, solution_ids=[fixed.pk, garbled.pk, refused.pk, partial.pk])
        assert run.state == JudgeRun.DONE
        assert labels_of(fixed) == [(0, "ok", "checked 1"), (1, "ok", "checked 2")]
        assert labels_of(garbled) == [(None, "unparseable", "Step 1: maybe\nStep 2: +1 | fine")] * 2
        assert labels_of(refused) == [(None, "refused", "I can't help with grading this.")]
        assert [(value, state) for value, state, _ in labels_of(partial)] == [(None, "unparseable")] * 3
        assert [len(server.prompts(marker)) for marker in
                ("Malformed once", "Always garbled", "Always refused", "Two of three")] == [2, 3, 3, 3]
        assert {key: run.result[key] for key in ("labelled", "unparseable", "refused", "errors", "requests")} == {
            "labelled": 2, "unparseable": 5, "refused": 1, "errors": 0, "requests": 11}
        # A re-run asks again about what was not labelled only, and overwrites those rows.
        server.rules["Always refused"] = [ok([-1])]
        again = judge(project, solution_ids=[fixed.pk, refused.pk])
        assert again.result["already_labelled"] == 1 and again.result["requests"] == 1
        assert labels_of(refused) == [(-1, "ok", "checked 1")]


def test_429_and_timeouts_are_retried_with_backoff_within_the_attempts(project):
    limited = make_solution(project, steps=1, problem="Rate limited")
    slow_once = make_solution(project, steps=1, problem="Slow once")
    always_slow = make_solution(project, steps=1, problem="Always slow")
    with ScriptedServer({
        "Rate limited": [status(429, retry_after=0), status(429), ok([-1])],
        "Slow once": [sleep(1.5), ok()],
        "Always slow": [sleep(1.5)],
    }) as server:
        set_judge(project, server, timeout_s=0.5, max_attempts=3)
        run = judge(project, solution_ids=[limited.pk, slow_once.pk, always_slow.pk])
        assert labels_of(limited) == [(-1, "ok", "checked 1")]
        assert labels_of(slow_once) == [(1, "ok", "checked 1")]
        [(value, state, reason)] = labels_of(always_slow)
        assert (value, state) == (None, "error") and "timeout" in reason
        assert [len(server.prompts(m)) for m in ("Rate limited", "Slow once", "Always slow")] == [3, 2, 3]
        assert run.result["requests"] == 8 and run.result["errors"] == 1 and run.result["labelled"] == 2


def test_the_budget_caps_the_requests_of_a_run_retries_included(project):
    solutions = [make_solution(project, steps=1, generation=0, problem=f"Budget {i}") for i in range(5)]
    with ScriptedServer({"Budget 0": [text("no idea")]}) as server:
        set_judge(project, server, budget=4, max_attempts=3, concurrency=1)
        run = judge(project, generation=0)
        assert len(server.requests) == 4 and run.result["requests"] == 4
        # Budget 0 spends 3 requests, one more labels Budget 1; the rest are never asked nor stored.
        assert labels_of(solutions[0]) == [(None, "unparseable", "no idea")]
        assert labels_of(solutions[1]) == [(1, "ok", "checked 1")]
        assert all(labels_of(solution) == [] for solution in solutions[2:])
        assert {key: run.result[key] for key in ("judged", "over_budget", "labelled", "unparseable")} == {
            "judged": 2, "over_budget": 3, "labelled": 1, "unparseable": 1}


def test_a_wrong_key_stops_the_run_and_keeps_what_it_stored(project):
    solutions = [make_solution(project, steps=1, problem=f"Unauthorised {i}") for i in range(3)]
    with ScriptedServer({"Unauthorised": [status(401, message="invalid api key")]}) as server:
        set_judge(project, server, concurrency=1, max_attempts=3)
        run = judge(project, solution_ids=[s.pk for s in solutions])
        assert run.state == JudgeRun.FAILED and "invalid api key" in run.error
        assert len(server.requests) == 1  # not retried, and no other solution asked
        assert run.result["errors"] == 1 and run.result["stopped"] == 2


@pytest.mark.parametrize("change, words", [
    ({"api_key_env": "NOT_ALLOWED"}, "not one of STEPMARK_JUDGE_KEY_VARS"),
    ({"api_key_env": "OPENAI_API_KEY"}, "OPENAI_API_KEY is not set on the worker"),
])
def test_a_key_the_worker_cannot_read_fails_the_run_before_any_request(project, monkeypatch, change, words):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    solution = make_solution(project, steps=1)
    with ScriptedServer() as server:
        set_judge(project, server)
        run = start_judge_run(project, solution_ids=[solution.pk])
        JudgeSettings.objects.filter(project=project).update(**change)
        run = judge_job.run(run.pk)
        assert run.state == JudgeRun.FAILED and words in run.error and server.requests == []


def test_a_template_changed_under_the_same_prompt_version_is_refused(project):
    solution = make_solution(project, steps=1, problem="Templated")
    with ScriptedServer() as server:
        set_judge(project, server)
        assert judge(project, solution_ids=[solution.pk]).state == JudgeRun.DONE
        other = make_solution(project, steps=1, problem="Templated again")
        set_judge(project, server, prompt_template="Rate: {problem}\n{steps}")
        run = judge(project, solution_ids=[other.pk])
        assert run.state == JudgeRun.FAILED and "prompt_version of its own" in run.error
        set_judge(project, server, prompt_template="Rate: {problem}\n{steps}", prompt_version="short-v2")
        run = judge(project, solution_ids=[other.pk])
        assert run.state == JudgeRun.DONE and labels_of(other) == [(1, "ok", "checked 1")]
        assert LabelSource.objects.filter(project=project).count() == 2
        assert server.prompts("Templated again")[-1]["messages"][0]["content"].startswith("Rate: Templated again\n")


def test_a_tiny_random_model_behind_the_api_answers_garbage_which_is_recorded_unparseable(project):
    solution = make_solution(project, steps=["$2 + 2 = 4$", "The answer is $4$."], problem="What is $2 + 2$?")
    with ModelServer(max_new_tokens=16) as server:
        set_judge(project, server, api_key_env="", model="tiny-gpt2", max_attempts=2, max_tokens=16, timeout_s=30)
        run = judge(project, solution_ids=[solution.pk])
        assert run.state == JudgeRun.DONE
        labels = labels_of(solution)
        assert [(value, state) for value, state, _ in labels] == [(None, "unparseable")] * 2
        assert labels[0][2].strip()  # the model's own words, kept as the reason
        assert len(server.requests) == 2 and run.result["requests"] == 2
        assert server.requests[0][0] == "Bearer none"  # no key named: a placeholder, as vLLM takes


def test_the_command_judges_in_this_process_and_prints_the_result(project):
    from io import StringIO

    from django.core.management import CommandError, call_command

    solution = make_solution(project, steps=2, generation=3, problem="By command")
    with ScriptedServer({"By command": [ok([1, 0])]}) as server:
        set_judge(project, server)
        out = StringIO()
        call_command("judge_labels", "--project", "judged", "--generation", "3", stdout=out)
        assert '"labelled": 2' in out.getvalue() and '"requests": 1' in out.getvalue()
        assert labels_of(solution) == [(1, "ok", "checked 1"), (0, "ok", "checked 2")]
        with pytest.raises(CommandError, match="No generation 9"):
            call_command("judge_labels", "--project", "judged", "--generation", "9")
        with pytest.raises(CommandError, match="no project named"):
            call_command("judge_labels", "--project", "nobody", "--solutions", str(solution.pk))


def test_a_generation_run_also_judges_the_gold_items_so_pre_labels_never_tell_gold(project):
    from tests.factories import make_gold

    ordinary = make_solution(project, steps=2, generation=3, problem="Ordinary")
    item = make_gold(project, [1, -1], problem="Gold item")
    with ScriptedServer({}) as server:
        set_judge(project, server)
        run = judge(project, generation=3)
        assert run.state == JudgeRun.DONE, run.error
        assert len(labels_of(ordinary)) == len(labels_of(item)) == 2
        assert run.result["solutions"] == 2
        again = judge(project, generation=3)  # the gold item is asked once
        assert again.result["already_labelled"] == 2 and again.result["requests"] == 0
