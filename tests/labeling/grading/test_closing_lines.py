"""Final answers in every common style (issue #26 item 3): a held-out set of closing lines.

``tests/vectors/closing_lines.jsonl`` holds closing lines written in the styles real generators
use (one JSON object a line: ``style``, ``line``, ``expected``): Minerva / Llama-3's "Final
Answer: The final answer is X. I hope it is correct.", Llama-3.1's boxed variant, MetaMath's and
WizardMath's "The answer is: X", chain-of-thought "So the answer is X.", choice letters,
Qwen / DeepSeek boxes, GSM8K's ``#### X``, Mistral's "Final answer: X", Gemma's bold answers,
Phi, GPT / Claude "**Answer:** X" and PRM800K's ``# Answer``; the answers are intervals, tuples,
equations, fractions, radicals, complex numbers, percentages, degrees, numbers with thousands
separators, negatives and choice letters, some followed by a unit or prose. The lines were
written before extraction was changed for them; the expected answer is what a person grading
would take. An extracted answer counts when the product's own grading
(``labeling.grading.answers.grade``) finds it equivalent to the expected one, as it would
against a ground truth.
"""
import json
from collections import Counter
from pathlib import Path

import pytest

from labeling.grading.answers import grade, grade_pairs
from labeling.grading.extraction import extract_answer
from labeling.imports import run_import
from labeling.models import Solution
from tests.factories import make_project, write_jsonl

VECTORS = Path(__file__).resolve().parents[2] / "vectors" / "closing_lines.jsonl"
GOAL = 0.99


def closing_lines():
    with VECTORS.open(encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def test_the_set_is_large_and_covers_the_styles():
    lines = closing_lines()
    styles = Counter(r["style"] for r in lines)
    assert len(lines) >= 150
    assert len(styles) >= 12 and min(styles.values()) >= 2
    assert len({r["line"] for r in lines}) == len(lines)  # no line counted twice


def test_at_least_99_percent_of_closing_lines_give_their_answer():
    lines = closing_lines()
    found = [extract_answer(r["line"]) for r in lines]
    verdicts = grade_pairs([(answer, r["expected"]) for answer, r in zip(found, lines)])
    missed = [
        f"{r['style']}: {r['line']!r} gave {answer!r}, expected {r['expected']!r}"
        for answer, r in zip(found, lines)
        if not verdicts[(answer, r["expected"])]
    ]
    assert len(lines) - len(missed) >= GOAL * len(lines), "\n".join(missed)


def test_a_cut_answer_is_not_graded_as_the_whole():
    # The check above cannot pass on truncated answers: the product's grading tells them apart.
    assert grade("-12", "-12+15i") is False
    assert grade("2", "2-\\sqrt{3}") is False
    assert grade("(1", "(1,-2)") is False


@pytest.mark.django_db
def test_imported_completions_ending_in_each_style_are_graded_right(tmp_path):
    # What a generator's raw outputs go through: each closing line ends a completion of its own
    # problem whose ground truth is the expected answer; the import extracts and grades it.
    lines = closing_lines()
    path = write_jsonl(tmp_path / "outputs.jsonl", [
        {"problem": f"Problem {n} ({r['style']})", "completion": f"We work it out.\n\n{r['line']}",
         "ground_truth_answer": r["expected"], "model": r["style"]}
        for n, r in enumerate(lines)
    ])
    project = make_project(name="closing lines")
    assert run_import("completions", path, project).created == len(lines)
    graded = Counter(Solution.objects.filter(project=project).values_list("is_correct", flat=True))
    assert graded[True] >= GOAL * len(lines), graded
