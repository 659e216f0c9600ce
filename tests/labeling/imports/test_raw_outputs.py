"""Raw model outputs (labeling/imports/raw_outputs.py): each tool's real output shape, the step
splitting options, the preview, problems matched by text, all or nothing on a bad record."""
import json

import pytest
from django.core.management import CommandError, call_command

from formats.errors import FormatError
from labeling.imports import run_import
from labeling.imports.raw_outputs import preview
from labeling.imports.splitting import splitter
from labeling.models import Problem, Project, Solution
from tests.factories import write_jsonl, make_project

pytestmark = pytest.mark.django_db

PROBLEM = "What is $2 + 3$?"
RIGHT = "We add the two numbers.\n\n$2 + 3 = 5$.\n\nThe answer is $\\boxed{5}$."
WRONG = "We multiply.\n\n$2 \\cdot 3 = 6$, so the answer is $\\boxed{6}$."


@pytest.fixture
def project(tmp_path):
    project = make_project(name="raw outputs")
    # The problem as a MATH-style import left it: the outputs below give no ground truth.
    problems = write_jsonl(tmp_path / "problems.jsonl", [{"problem": PROBLEM, "solution": "$\\boxed{5}$", "answer": "5"}])
    run_import("problems", problems, project)
    return project


def chat_completion(*contents, model="gpt-4o-2024-08-06"):
    """A Chat Completions response object as the API returns it (platform.openai.com/docs/api-reference/chat/object)."""
    return {
        "id": "chatcmpl-B9MHDbslfkBeAs8l4bebGdFOJ6PeG", "object": "chat.completion", "created": 1741570283,
        "model": model,
        "choices": [{"index": i, "message": {"role": "assistant", "content": c, "refusal": None, "annotations": []},
                     "logprobs": None, "finish_reason": "stop"} for i, c in enumerate(contents)],
        "usage": {"prompt_tokens": 19, "completion_tokens": 10, "total_tokens": 29},
        "service_tier": "default", "system_fingerprint": "fp_fc9f1d7035",
    }


def messages(problem):
    return [{"role": "system", "content": "Solve the problem step by step."}, {"role": "user", "content": problem}]


def stored(project):
    """``{generator: (steps, final answer, is_correct, problem's ground-truth answer)}``."""
    out = {}
    for s in Solution.objects.filter(project=project).select_related("problem").order_by("id"):
        steps = list(s.steps.order_by("position").values_list("text", flat=True))
        out.setdefault(s.generator, []).append((steps, s.final_answer, s.is_correct, s.problem.ground_truth_answer))
    return out


def test_plain_completions_split_into_paragraphs_graded_on_the_matched_problem(project, tmp_path):
    path = write_jsonl(tmp_path / "plain.jsonl", [
        {"problem": PROBLEM, "completion": RIGHT, "model": "qwen"},
        {"prompt": PROBLEM, "response": WRONG, "generator": "llama"},
    ])
    result = run_import("completions", path, project)
    assert (result.records, result.created, result.details["problems"]) == (2, 2, 0)
    assert Problem.objects.filter(project=project).count() == 1  # matched by text, not created
    assert stored(project) == {
        "qwen": [(["We add the two numbers.", "$2 + 3 = 5$.", "The answer is $\\boxed{5}$."], "5", True, "5")],
        "llama": [(["We multiply.", "$2 \\cdot 3 = 6$, so the answer is $\\boxed{6}$."], "6", False, "5")],
    }
    assert run_import("completions", path, project).created == 0  # re-import adds nothing


def test_a_new_problem_without_ground_truth_is_created_and_left_ungraded(project, tmp_path):
    path = write_jsonl(tmp_path / "new.jsonl", [{"problem": "What is 7 - 2?", "completion": "7 - 2 = 5."}])
    result = run_import("completions", path, project)
    assert result.details["problems"] == 1
    problem = Problem.objects.get(project=project, problem="What is 7 - 2?")
    assert (problem.ground_truth_answer, problem.solutions.get().is_correct) == (None, None)


def test_openai_chat_lines_every_choice_a_solution(project, tmp_path):
    path = write_jsonl(tmp_path / "chat.jsonl", [{
        "request": {"model": "gpt-4o", "messages": messages(PROBLEM), "n": 2},
        "response": chat_completion(RIGHT, WRONG),
    }])
    run_import("openai-chat", path, project, options={"split": "lines"})
    [(right, _, right_ok, _), (wrong, _, wrong_ok, _)] = stored(project)["gpt-4o-2024-08-06"]
    assert (len(right), len(wrong), right_ok, wrong_ok) == (3, 2, True, False)


def test_openai_chat_takes_logged_chat_completions_with_their_messages(project, tmp_path):
    # A log of chat.completion objects, each with the request's messages (and parameters) merged
    # in beside "choices", as request loggers write them; one wrapped line in the same file.
    path = write_jsonl(tmp_path / "logged.jsonl", [
        {**chat_completion(RIGHT, WRONG, model="gpt-4o-mini"), "messages": messages(PROBLEM), "n": 2,
         "temperature": 0.7},
        {"request": {"messages": messages(PROBLEM)}, "response": chat_completion(WRONG + "\n\nChecked.")},
    ])
    assert [len(r["solutions"]) for r in preview("openai-chat", path)] == [2, 1]
    result = run_import("openai-chat", path, project)
    assert (result.records, result.created) == (2, 3)
    assert [(len(steps), ok) for steps, _, ok, _ in stored(project)["gpt-4o-mini"]] == [(3, True), (2, False)]
    assert [(len(steps), ok) for steps, _, ok, _ in stored(project)["gpt-4o-2024-08-06"]] == [(3, False)]


def test_openai_batch_output_takes_its_problems_from_the_batch_input_file(project, tmp_path):
    # platform.openai.com/docs/api-reference/batch/request-input and .../request-output
    requests = write_jsonl(tmp_path / "batch_input.jsonl", [
        {"custom_id": f"request-{i}", "method": "POST", "url": "/v1/chat/completions",
         "body": {"model": "gpt-4o-mini", "messages": messages(PROBLEM), "max_tokens": 1000}}
        for i in (1, 2, 3)
    ])
    output = write_jsonl(tmp_path / "batch_output.jsonl", [
        {"id": "batch_req_2", "custom_id": "request-2", "error": None,
         "response": {"status_code": 200, "request_id": "req_2", "body": chat_completion(WRONG, model="gpt-4o-mini")}},
        {"id": "batch_req_1", "custom_id": "request-1", "error": None,
         "response": {"status_code": 200, "request_id": "req_1", "body": chat_completion(RIGHT, model="gpt-4o-mini")}},
        {"id": "batch_req_3", "custom_id": "request-3", "response": None,
         "error": {"code": "server_error", "message": "The server had an error."}},
    ])
    result = run_import("openai-batch", output, project, options={"requests": requests})
    assert (result.created, result.details["failed_requests"]) == (2, 1)
    assert sorted(ok for *_, ok, _ in stored(project)["gpt-4o-mini"]) == [False, True]

    with pytest.raises(FormatError, match="field 'requests': is required"):
        run_import("openai-batch", output, project)
    strays = write_jsonl(tmp_path / "other_input.jsonl", [{"custom_id": "request-1", "body": {"messages": messages("x")}}])
    with pytest.raises(FormatError, match=r"batch_output.jsonl:1: field 'custom_id': has no request"):
        run_import("openai-batch", output, project, options={"requests": strays})


def test_vllm_request_outputs_as_a_json_array_and_as_lines(project, tmp_path):
    # vllm.outputs.RequestOutput / CompletionOutput fields, written with json.dump by the caller
    outputs = [{
        "request_id": "0", "prompt": PROBLEM, "prompt_token_ids": [3838, 374], "prompt_logprobs": None,
        "outputs": [{"index": i, "text": text, "token_ids": [1, 2], "cumulative_logprob": None, "logprobs": None,
                     "finish_reason": "stop", "stop_reason": None} for i, text in enumerate((RIGHT, WRONG))],
        "finished": True, "num_cached_tokens": 0,
    }]
    array = tmp_path / "vllm.json"
    array.write_text(json.dumps(outputs, indent=2))
    result = run_import("vllm", array, project, options={"generator": "Qwen2.5-Math-1.5B"})
    assert (result.records, result.details["solutions"]) == (1, 2)
    assert [ok for *_, ok, _ in stored(project)["Qwen2.5-Math-1.5B"]] == [True, False]
    lines = write_jsonl(tmp_path / "vllm.jsonl", outputs)
    assert run_import("vllm", lines, project, options={"generator": "Qwen2.5-Math-1.5B"}).created == 0


def test_hugging_face_parquet_prompt_and_completions_columns(project, tmp_path):
    datasets = pytest.importorskip("datasets")
    path = tmp_path / "generations.parquet"
    datasets.Dataset.from_dict({
        "prompt": [PROBLEM, "What is 10 / 2?"],
        "completions": [[RIGHT, WRONG], ["10 / 2 = 5.\n\nSo \\boxed{5}."]],
        "ground_truth_answer": [None, "5"],
    }).to_parquet(str(path))
    result = run_import("hf-parquet", path, project, options={"generator": "deepseek"})
    assert (result.records, result.details["solutions"], result.details["problems"]) == (2, 3, 1)
    assert [ok for *_, ok, _ in stored(project)["deepseek"]] == [True, False, True]

    labelled = tmp_path / "stepwise.parquet"
    datasets.Dataset.from_dict({"prompt": [PROBLEM], "completions": [["a", "b"]], "labels": [[True, False]]}).to_parquet(
        str(labelled))
    with pytest.raises(FormatError, match=r"stepwise.parquet:1: field 'labels': .*stepwise-supervision"):
        run_import("hf-parquet", labelled, project)
    not_parquet = write_jsonl(tmp_path / "x.parquet", [{"prompt": "p"}])
    with pytest.raises(FormatError, match="is not a Parquet file"):
        run_import("hf-parquet", not_parquet, project)


@pytest.mark.parametrize("split, pattern, expected", [
    ("paragraphs", None, ["Step 1: add.\nStill step 1.", "Step 2: done."]),
    ("lines", None, ["Step 1: add.", "Still step 1.", "Step 2: done."]),
    ("regex", r"(?=Step \d+:)", ["Step 1: add.\nStill step 1.", "Step 2: done."]),
    ("regex", r"\n+", ["Step 1: add.", "Still step 1.", "Step 2: done."]),
])
def test_split_options(split, pattern, expected):
    assert splitter(split, pattern)("Step 1: add.\nStill step 1.\n\n \nStep 2: done.\n") == expected


@pytest.mark.parametrize("options, message", [
    ({"split": "sentences"}, "field 'split': must be one of paragraphs, lines, regex"),
    ({"split": "regex"}, "field 'pattern': is required with split=regex"),
    ({"split": "regex", "pattern": "(unclosed"}, "field 'pattern': is not a regular expression"),
    ({"split": "regex", "pattern": r"(Step)"}, "field 'pattern': has a capturing group"),
    ({"split": "lines", "pattern": "x"}, "field 'pattern': is only used with split=regex"),
    ({"splitting": "lines"}, "field 'splitting': is not an option of this format"),
])
def test_bad_options_are_refused_before_reading(project, tmp_path, options, message):
    path = write_jsonl(tmp_path / "plain.jsonl", [{"problem": PROBLEM, "completion": RIGHT}])
    with pytest.raises(FormatError, match=message):
        run_import("completions", path, project, options=options)


def test_preview_shows_the_first_records_split_without_storing(project, tmp_path):
    path = write_jsonl(tmp_path / "plain.jsonl", [
        {"problem": PROBLEM, "completion": RIGHT}, {"problem": PROBLEM, "completion": WRONG},
        {"problem": PROBLEM, "completion": "Third."},
    ])
    shown = preview("completions", path, {"split": "lines"}, n=2)
    # No ground truth in the file and no project to take one from: the answers are ungraded.
    assert shown == [
        {"line": 1, "problem": PROBLEM, "generator": "", "ground_truth_answer": None, "solutions": [
            {"field": "completion", "steps": ["We add the two numbers.", "$2 + 3 = 5$.", "The answer is $\\boxed{5}$."],
             "final_answer": "5", "is_correct": None}]},
        {"line": 2, "problem": PROBLEM, "generator": "", "ground_truth_answer": None, "solutions": [
            {"field": "completion", "steps": ["We multiply.", "$2 \\cdot 3 = 6$, so the answer is $\\boxed{6}$."],
             "final_answer": "6", "is_correct": None}]},
    ]
    assert not Solution.objects.filter(project=project).exists()
    with pytest.raises(FormatError, match="not a raw-output format"):
        preview("candidates", path)


@pytest.mark.parametrize("fmt, bad, message", [
    ("completions", {"problem": PROBLEM, "completion": 7}, r"bad.jsonl:3: field 'completion': must be a string"),
    ("completions", {"problem": PROBLEM, "completion": RIGHT, "answer": "5"}, r"bad.jsonl:3: field 'answer': unknown key"),
    ("completions", {"problem": PROBLEM, "prompt": PROBLEM, "completion": RIGHT}, r"field 'problem': give one of"),
    ("openai-chat", {"request": {"messages": messages(PROBLEM)}, "response": chat_completion(None)},
     r"bad.jsonl:3: field 'response.choices\[0\].message.content': must not be null"),
    ("openai-chat", {"request": {"messages": [{"role": "system", "content": "x"}]}, "response": chat_completion(RIGHT)},
     r"bad.jsonl:3: field 'request.messages': has no message with role 'user'"),
    # A bare chat.completion, as the API returns it, holds no prompt: the message says how to add one.
    ("openai-chat", chat_completion(RIGHT), r"bad.jsonl:3: field 'messages': is a chat.completion object without "
     r"its prompt .*put the request's messages beside it, as \{\"messages\": \[\.\.\.\], \"choices\""),
    ("openai-chat", {**chat_completion(None), "messages": messages(PROBLEM)},
     r"bad.jsonl:3: field 'choices\[0\].message.content': must not be null"),
    ("vllm", {"prompt": PROBLEM, "outputs": [{"text": " \n\n "}]}, r"bad.jsonl:3: field 'outputs\[0\].text': must not be empty"),
])
def test_a_bad_record_stores_nothing_and_names_file_line_field(project, tmp_path, fmt, bad, message):
    good = {"completions": {"problem": PROBLEM, "completion": RIGHT},
            "openai-chat": {"request": {"messages": messages(PROBLEM)}, "response": chat_completion(RIGHT)},
            "vllm": {"prompt": PROBLEM, "outputs": [{"text": RIGHT}]}}[fmt]
    path = write_jsonl(tmp_path / "bad.jsonl", [good, good, bad])
    with pytest.raises(FormatError, match=message):
        run_import(fmt, path, project, options={"generator": "m"} if fmt == "vllm" else None)
    assert not Solution.objects.filter(project=project).exists()


def test_regex_that_leaves_no_text_names_the_field(project, tmp_path):
    path = write_jsonl(tmp_path / "plain.jsonl", [{"problem": PROBLEM, "completion": "---"}])
    with pytest.raises(FormatError, match="plain.jsonl:1: field 'completion': has no text left once split"):
        run_import("completions", path, project, options={"split": "regex", "pattern": "-"})


def test_the_command_passes_the_split_options(project, tmp_path, capsys):
    path = write_jsonl(tmp_path / "plain.jsonl", [{"problem": PROBLEM, "completion": "a\nb\nc \\boxed{5}"}])
    call_command("import_candidates", str(path), "--project", project.name, "--format", "completions",
                 "--split", "lines", "--generator", "m", "--quiet")
    assert stored(project)["m"] == [(["a", "b", "c \\boxed{5}"], "5", True, "5")]
    with pytest.raises(CommandError, match="field 'split': is not an option of this format"):
        call_command("import_candidates", str(path), "--project", project.name, "--split", "lines", "--quiet")
