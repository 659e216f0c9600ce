"""Every problem and step line of the data the repository carries (data/README.md), with the
rendering options its import gives it, for tests/browser/test_rendering.py.

A line is ``(where, text, options)``: ``where`` names the file, the record (1-based) and the
field (``answer/2`` is the answer's third line, ``steps/3/completions/1`` PRM800K's second
completion at the fourth step); ``options`` are math.js's: MATH-500 and PRM800K keep "$" math;
GSM8K's imports (``problems`` with GSM8K records, ``gsm8k-examples``) turn it off
(labeling/imports/problems.py ``dollars_as_text``); ProcessBench's GSM8K solutions come in as
``candidates``, which keep it (its models write "$\\boxed{18}$").
"""
import json

from labeling.data import open_data

DOLLAR_MATH = {"dollarMath": True, "calculatorMarkup": False}
PLAIN_TEXT = {"dollarMath": False, "calculatorMarkup": False}


def answer_text(answer):
    """A reference answer as the workspace shows it (frontend/src/workspace/view.js showTask):
    LaTeX without delimiters is set in \\(...\\)."""
    if any(mark in answer for mark in ("$", "\\(", "\\[")):
        return answer
    return f"\\({answer}\\)"


def _records(relpath):
    with open_data(relpath) as f:
        if relpath.endswith(".json.gz"):
            yield from enumerate(json.load(f), 1)
        else:
            for n, line in enumerate(f, 1):
                yield n, json.loads(line)


def _lines(where, text):
    """Each non-blank line of a solution written one step per line (GSM8K), with its index."""
    for k, line in enumerate(text.split("\n")):
        if line.strip():
            yield f"{where}/{k}", line


def math500():
    rel = "math/math500.jsonl.gz"
    for n, r in _records(rel):
        yield f"{rel}:{n}:problem", r["problem"]
        yield f"{rel}:{n}:solution", r["solution"]
        yield f"{rel}:{n}:answer", answer_text(r["answer"])


def prm800k():
    for name in ("native_records", "phase1_test.reconstructed", "phase1_train.reconstructed"):
        rel = f"prm800k/{name}.jsonl.gz"
        for n, r in _records(rel):
            question = r["question"]
            yield f"{rel}:{n}:problem", question["problem"]
            if question.get("ground_truth_solution"):
                yield f"{rel}:{n}:ground_truth_solution", question["ground_truth_solution"]
            if question.get("ground_truth_answer"):
                yield f"{rel}:{n}:ground_truth_answer", answer_text(question["ground_truth_answer"])
            for s, step in enumerate(r["label"]["steps"]):
                for c, completion in enumerate(step["completions"] or []):
                    yield f"{rel}:{n}:steps/{s}/completions/{c}", completion["text"]
                if step.get("human_completion"):
                    yield f"{rel}:{n}:steps/{s}/human_completion", step["human_completion"]["text"]


def gsm8k():
    rel = "gsm8k/test.jsonl.gz"
    for n, r in _records(rel):
        yield f"{rel}:{n}:question", r["question"]
        yield from _lines(f"{rel}:{n}:answer", r["answer"])
    rel = "gsm8k/example_model_solutions.jsonl.gz"
    for n, r in _records(rel):  # the question is test.jsonl's
        yield from _lines(f"{rel}:{n}:ground_truth", r["ground_truth"])
        for model, entry in r.items():
            if isinstance(entry, dict):
                yield from _lines(f"{rel}:{n}:{model}", entry["solution"])


def processbench():
    rel = "processbench/gsm8k.json.gz"
    for n, r in _records(rel):
        yield f"{rel}:{n}:problem", r["problem"]
        for s, step in enumerate(r["steps"]):
            yield f"{rel}:{n}:steps/{s}", step


# (name, lines, options): each data set as its import renders it.
DATA_SETS = [
    ("MATH-500", math500, DOLLAR_MATH),
    ("PRM800K", prm800k, DOLLAR_MATH),
    ("GSM8K", gsm8k, PLAIN_TEXT),
    ("ProcessBench GSM8K", processbench, DOLLAR_MATH),
]


def every_line():
    """``(where, text, options)`` for every line of every data set."""
    for _, lines, options in DATA_SETS:
        for where, text in lines():
            yield where, text, options
