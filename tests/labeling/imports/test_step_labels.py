"""Machine step labels from Monte Carlo rollouts (``math-shepherd``, ``mc-rollouts``): solutions
stored as candidates are, one LabelSource per file with its provenance, StepLabels beside people's
ratings, all or nothing, a re-import adding nothing."""
import io
import json

import pytest
from django.core.management import call_command

from formats.errors import FormatError
from labeling.exports import ExportFilters, stream_export
from labeling.imports import run_import
from labeling.imports.hashing import problem_hash
from labeling.imports.registry import get_importer
from labeling.models import LabelSource, Problem, Rating, Solution, Step, StepLabel
from tests.factories import make_annotator, make_project, rated_pass, write_jsonl

pytestmark = pytest.mark.django_db

# Two lines in the data set's own shape (peiyi9979/Math-Shepherd): the problem, a space, then
# "Step 1:"; each step ends with " ки", which `label` replaces by + or -.
JANET = ("Janet pays $40/hour for 3 hours per week of clarinet lessons and $28/hour for 5 hours a week of piano "
         "lessons. How much more does she spend on piano lessons than clarinet lessons in a year?")
JANET_STEPS = [
    "Step 1: She spends 40 * 3 = <<40*3=120>>120 on clarinet lessons per week.",
    "Step 2: She spends 28 * 5 = <<28*5=140>>140 on piano lessons per week.",
    "Step 3: She spends 140 + 120 = <<140+120=260>>260 a week. The answer is: 260",
]
DUCKS = ("Janet's ducks lay 16 eggs per day. She eats 3 and bakes with 4. She sells the rest at $2. "
         "How much does she make?")
DUCKS_STEPS = ["Step 1: She sells 16 - 3 - 4 = <<16-3-4=9>>9 eggs.", "Step 2: She makes 9 * 2 = $<<9*2=18>>18.",
               "Step 3: The answer is: 18"]


def shepherd(problem, steps, marks, task="GSM8K", tag="ки"):
    body = "\n".join(f"{step} {tag}" for step in steps)
    marked = "\n".join(f"{step} {mark}" for step, mark in zip(steps, marks))
    return {"input": f"{problem} {body}", "label": f"{problem} {marked}", "task": task}


SHEPHERD_LINES = [shepherd(JANET, JANET_STEPS, "++-"), shepherd(DUCKS, DUCKS_STEPS, "+++")]
ROLLOUT_LINES = [
    {"problem": "What is $2 + 3$?", "ground_truth_answer": "5",
     "steps": ["First, $2 + 3 = 6$.", "So the answer is $\\boxed{6}$."],
     "rollouts": [{"successes": 3, "total": 8}, {"successes": 0, "total": 8}], "generator": "tiny-llm"},
    {"problem": "What is $4 + 4$?", "ground_truth_answer": "8",
     "steps": ["$4 + 4 = 8$.", "The answer is $\\boxed{8}$."],
     "success_rates": [0.75, 1.0], "rollouts_per_step": 8},
    {"problem": "What is $1 + 1$?", "ground_truth_answer": "2", "steps": ["$1 + 1 = 3$.", "The answer is 3."],
     "success_rates": [0.0, None]},
]


def counts():
    return {m.__name__: m.objects.count() for m in (Problem, Solution, Step, LabelSource, StepLabel, Rating)}


def labels_of(source):
    """``{(problem, position): (value, score, rollouts, successes)}`` of a source's labels."""
    return {(label.step.solution.problem.problem, label.step.position): (label.value, label.score, label.rollouts,
                                                                        label.successes)
            for label in StepLabel.objects.filter(source=source).select_related("step__solution__problem")}


@pytest.fixture
def project():
    return make_project(name="rollouts")


def test_math_shepherd_lines_become_solutions_with_their_labels_and_provenance(project, tmp_path):
    path = write_jsonl(tmp_path / "shepherd.jsonl", SHEPHERD_LINES)

    result = run_import("math-shepherd", path, project)

    assert (result.records, result.created, result.skipped, result.unit) == (2, 6, 0, "labels")
    assert result.details["solutions"] == 2 and result.details["problems"] == 2
    source = LabelSource.objects.get(project=project)
    assert (source.kind, source.name) == (LabelSource.ROLLOUTS, "math-shepherd: shepherd.jsonl")
    assert source.details == {"file": "shepherd.jsonl", "format": "math-shepherd", "import_job_id": None,
                              "estimation": "hard", "tasks": {"GSM8K": 2}}
    assert result.details["label_source"] == source.pk
    # The problem is the text before "Step 1:"; each step keeps its "Step N:", without its tag.
    janet = Solution.objects.get(project=project, problem__problem=JANET)
    assert list(janet.steps.order_by("position").values_list("text", flat=True)) == JANET_STEPS
    assert janet.final_answer == "260" and janet.is_correct is None and janet.has_pre_generated
    assert labels_of(source) == {
        (JANET, 0): (1, None, None, None), (JANET, 1): (1, None, None, None), (JANET, 2): (-1, None, None, None),
        (DUCKS, 0): (1, None, None, None), (DUCKS, 1): (1, None, None, None), (DUCKS, 2): (1, None, None, None),
    }
    # A file of GSM8K lines only, into a project that held no problems: "$" is a currency sign there.
    project.refresh_from_db()
    assert not project.dollar_math


def test_a_math_shepherd_line_lands_on_the_problem_of_its_text_and_takes_its_ground_truth(project, tmp_path):
    # Math-Shepherd gives no ground truth: as with raw outputs, the project's problem of that text lends its own.
    there = Problem.objects.create(project=project, problem=DUCKS, ground_truth_answer="18",
                                   content_hash=problem_hash(DUCKS, None, "18"))
    line = shepherd(DUCKS, DUCKS_STEPS, "+++", task="MATH")
    result = run_import("math-shepherd", write_jsonl(tmp_path / "ducks.jsonl", [line]), project)
    solution = Solution.objects.get(project=project)
    assert solution.problem_id == there.pk and result.details["problems"] == 0
    assert solution.final_answer == "18" and solution.is_correct is True
    project.refresh_from_db()
    assert project.dollar_math  # MATH lines keep "$" math (the project held a problem anyway)


def test_another_step_tag_is_an_option(project, tmp_path):
    path = write_jsonl(tmp_path / "tagged.jsonl", [shepherd(DUCKS, DUCKS_STEPS, "+-+", tag="<step>")])
    run_import("math-shepherd", path, project, options={"tag": "<step>", "label_source": "Shepherd, our tag"})
    source = LabelSource.objects.get(project=project)
    assert source.name == "Shepherd, our tag"
    assert sorted(labels_of(source).values()) == [(-1, None, None, None), (1, None, None, None), (1, None, None, None)]


def test_mc_rollouts_give_rates_and_counts_with_the_hard_estimation(project, tmp_path):
    path = write_jsonl(tmp_path / "mc.jsonl", ROLLOUT_LINES)

    result = run_import("mc-rollouts", path, project)

    # 6 steps, one without an estimate (null): 5 labels.
    assert (result.records, result.created, result.skipped) == (3, 5, 0)
    source = LabelSource.objects.get(project=project)
    assert source.details == {"file": "mc.jsonl", "format": "mc-rollouts", "import_job_id": None,
                              "estimation": "hard", "rollouts": None}  # 8 per step, and unknown on line 3
    assert labels_of(source) == {
        ("What is $2 + 3$?", 0): (1, 0.375, 8, 3), ("What is $2 + 3$?", 1): (-1, 0.0, 8, 0),
        ("What is $4 + 4$?", 0): (1, 0.75, 8, 6), ("What is $4 + 4$?", 1): (1, 1.0, 8, 8),
        ("What is $1 + 1$?", 0): (-1, 0.0, None, None),
    }
    graded = dict(Solution.objects.filter(project=project).values_list("problem__problem", "is_correct"))
    assert graded == {"What is $2 + 3$?": False, "What is $4 + 4$?": True, "What is $1 + 1$?": False}
    assert Solution.objects.get(problem__problem="What is $2 + 3$?").generator == "tiny-llm"


def test_one_rollout_count_for_every_step_is_the_sources(project, tmp_path):
    run_import("mc-rollouts", write_jsonl(tmp_path / "mc.jsonl", ROLLOUT_LINES[:2]), project)
    assert LabelSource.objects.get(project=project).details["rollouts"] == 8


def test_a_reimport_adds_nothing(project, tmp_path):
    for fmt, lines in (("math-shepherd", SHEPHERD_LINES), ("mc-rollouts", ROLLOUT_LINES)):
        path = write_jsonl(tmp_path / f"{fmt}.jsonl", lines)
        first = run_import(fmt, path, project)
        before = counts()
        again = run_import(fmt, path, project)
        assert counts() == before, fmt
        assert (again.created, again.skipped) == (0, first.created), fmt
        assert again.details["label_source"] == first.details["label_source"]
    # The same solution twice in one file is labelled once.
    doubled = run_import("math-shepherd", write_jsonl(tmp_path / "twice.jsonl", SHEPHERD_LINES[:1] * 2), project)
    assert (doubled.created, doubled.skipped) == (3, 3)


def test_labels_go_on_the_solution_a_candidate_import_stored(project, tmp_path):
    line = ROLLOUT_LINES[0]
    candidate = {"problem": line["problem"], "ground_truth_answer": "5", "steps": line["steps"]}
    run_import("candidates", write_jsonl(tmp_path / "c.jsonl", [candidate]), project)
    (solution,) = Solution.objects.filter(project=project)

    result = run_import("mc-rollouts", write_jsonl(tmp_path / "mc.jsonl", [line]), project)

    assert result.details["solutions"] == 0 and Solution.objects.filter(project=project).count() == 1
    assert set(StepLabel.objects.values_list("step__solution", flat=True)) == {solution.pk}


BAD = [
    ("math-shepherd", {"input": "No steps here ки", "label": "No steps here +"}, "input", "no 'Step 1:'"),
    ("math-shepherd", {"input": "Q? Step 1: a", "label": "Q? Step 1: a"}, "input", "no step tag"),
    ("math-shepherd", {"input": "Q? Step 1: a ки b", "label": "Q? Step 1: a + b"}, "input", "after its last step tag"),
    ("math-shepherd", {"input": "Q? Step 1: a ки\nStep 2: b ки", "label": "Q? Step 1: a +\nStep 2: b ?"}, "label",
     "step 2: expected + or -"),
    ("math-shepherd", {"input": "Q? Step 1: a ки", "label": "Q? Step 1: A +"}, "label", "differs from input"),
    ("math-shepherd", {"input": "Q? Step 1: a ки", "label": "Q? Step 1: a +", "answer": "1"}, "answer", "unknown key"),
    ("math-shepherd", {"input": "Q? Step 1: a ки", "label": 3}, "label", "must be a string"),
    ("mc-rollouts", {"problem": "Q?", "steps": ["a", "b"], "rollouts": [{"successes": 1, "total": 4}]}, "rollouts",
     "list of 2 entries"),
    ("mc-rollouts", {"problem": "Q?", "steps": ["a"], "rollouts": [{"successes": 5, "total": 4}]},
     "rollouts[0].successes", "more than total"),
    ("mc-rollouts", {"problem": "Q?", "steps": ["a"], "rollouts": [{"successes": 1, "total": 0}]},
     "rollouts[0].total", "at least 1"),
    ("mc-rollouts", {"problem": "Q?", "steps": ["a"], "success_rates": [1.5]}, "success_rates[0]", "from 0 to 1"),
    ("mc-rollouts", {"problem": "Q?", "steps": ["a"], "success_rates": [0.3], "rollouts_per_step": 8},
     "success_rates[0]", "whole number of successes"),
    ("mc-rollouts", {"problem": "Q?", "steps": ["a"]}, "rollouts", "give either"),
    ("mc-rollouts", {"problem": "Q?", "steps": ["a"], "success_rates": [1], "rollouts": [None]}, "rollouts",
     "give either"),
    ("mc-rollouts", {"problem": "Q?", "steps": [], "success_rates": []}, "steps", "non-empty"),
]


@pytest.mark.parametrize("fmt, bad, field, words", BAD,
                         ids=[f"{fmt}-{field}-{i}" for i, (fmt, _, field, _) in enumerate(BAD)])
def test_a_bad_line_names_file_line_and_field_and_nothing_is_written(project, tmp_path, fmt, bad, field, words):
    good = SHEPHERD_LINES if fmt == "math-shepherd" else ROLLOUT_LINES
    path = write_jsonl(tmp_path / "bad.jsonl", [*good, bad])
    before = counts()

    with pytest.raises(FormatError) as caught:
        run_import(fmt, path, project)

    error = caught.value
    assert (error.path, error.line, error.field) == (str(path), len(good) + 1, field)
    assert words in error.message
    assert counts() == before  # the good lines before it are rolled back too, and no source is left


def test_bad_options_are_refused_naming_them(project, tmp_path):
    path = write_jsonl(tmp_path / "s.jsonl", SHEPHERD_LINES)
    for options, field in (({"tag": "+"}, "tag"), ({"split": "lines"}, "split"), ({"tag": "   "}, "tag")):
        with pytest.raises(FormatError) as caught:
            run_import("math-shepherd", path, project, options=options)
        assert caught.value.field == field
    with pytest.raises(FormatError) as caught:
        run_import("mc-rollouts", path, project, options={"tag": "ки"})
    assert caught.value.field == "tag"
    assert StepLabel.objects.count() == 0


def test_a_source_name_holds_one_format(project, tmp_path):
    run_import("math-shepherd", write_jsonl(tmp_path / "s.jsonl", SHEPHERD_LINES), project,
               options={"label_source": "shared"})
    with pytest.raises(FormatError) as caught:
        run_import("mc-rollouts", write_jsonl(tmp_path / "m.jsonl", ROLLOUT_LINES), project,
                   options={"label_source": "shared"})
    assert caught.value.field == "label_source" and "math-shepherd" in caught.value.message


def test_the_preview_shows_steps_and_labels_and_stores_nothing(project, tmp_path):
    path = write_jsonl(tmp_path / "mc.jsonl", ROLLOUT_LINES)
    load = get_importer("mc-rollouts")

    shown = load.preview("mc-rollouts", path, None, n=2, path="mc.jsonl", project=project)

    assert [r["line"] for r in shown] == [1, 2]
    (solution,) = shown[0]["solutions"]
    assert solution["steps"] == ROLLOUT_LINES[0]["steps"] and solution["final_answer"] == "6"
    assert solution["is_correct"] is False and shown[0]["ground_truth_answer"] == "5"
    assert solution["labels"] == [{"value": 1, "score": 0.375, "rollouts": 8, "successes": 3},
                                  {"value": -1, "score": 0.0, "rollouts": 8, "successes": 0}]
    shepherd_preview = get_importer("math-shepherd").preview(
        "math-shepherd", write_jsonl(tmp_path / "s.jsonl", SHEPHERD_LINES), None, path="s.jsonl", project=project)
    assert shepherd_preview[0]["problem"] == JANET
    assert [label["value"] for label in shepherd_preview[0]["solutions"][0]["labels"]] == [1, 1, -1]
    assert counts() == {name: 0 for name in counts()}
    with pytest.raises(FormatError) as caught:
        load.preview("mc-rollouts", write_jsonl(tmp_path / "bad.jsonl", [{"problem": "Q?"}]), None, path="bad.jsonl")
    assert (caught.value.path, caught.value.line, caught.value.field) == ("bad.jsonl", 1, "steps")


def test_machine_labels_leave_ratings_and_the_prm800k_export_as_they_were(project, tmp_path):
    line = ROLLOUT_LINES[0]
    candidate = {"problem": line["problem"], "ground_truth_answer": "5", "steps": line["steps"]}
    run_import("candidates", write_jsonl(tmp_path / "c.jsonl", [candidate]), project)
    solution = Solution.objects.get(project=project)
    rated_pass(solution, make_annotator("rater"), [1, -1])
    ratings = list(Rating.objects.order_by("pk").values_list("pk", "step_id", "value", "flagged"))

    def export():
        return {fmt: b"".join(stream_export(fmt, ExportFilters(project_id=project.id)))
                for fmt in ("prm800k", "trl")}

    before = export()
    assert before["prm800k"].count(b"\n") == 1

    run_import("mc-rollouts", write_jsonl(tmp_path / "mc.jsonl", [line]), project)

    assert StepLabel.objects.filter(step__solution=solution).count() == 2
    assert list(Rating.objects.order_by("pk").values_list("pk", "step_id", "value", "flagged")) == ratings
    assert export() == before
    # The labels are the source's, people's values are theirs: the first step is +1 to the
    # rollouts and to the rater, the second -1 to both, stored apart.
    assert json.loads(before["prm800k"])["label"]["steps"][1]["completions"][0]["rating"] == -1


def test_the_command_line_imports_a_step_label_file(project, tmp_path):
    path = write_jsonl(tmp_path / "s.jsonl", SHEPHERD_LINES)
    out = io.StringIO()
    call_command("import_candidates", str(path), project=project.name, format="math-shepherd",
                 label_source="Shepherd", quiet=True, stdout=out)
    source = LabelSource.objects.get(project=project, name="Shepherd")
    assert f"6 step labels (label source {source.pk})" in out.getvalue()
    assert "6 labels new, 0 already there" in out.getvalue()
    assert StepLabel.objects.filter(source=source).count() == 6
