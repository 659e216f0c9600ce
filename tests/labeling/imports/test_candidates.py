"""Candidate-solution imports (``candidates`` and ``gsm8k-examples``) on real data slices."""
import gzip
import io
import json
from itertools import islice

import pytest
from django.core.management import CommandError, call_command

from formats.errors import FormatError
from labeling.data import open_text
from labeling.imports import run_import
from labeling.imports import candidates as candidates_format
from labeling.imports.hashing import problem_hash
from labeling.models import Problem, Project, Solution, Step
from tests.factories import first_lines, write_jsonl, make_project

pytestmark = pytest.mark.django_db


def counts():
    return {m.__name__: m.objects.count() for m in (Problem, Solution, Step)}


@pytest.fixture
def project():
    return make_project(name="candidates")


@pytest.fixture(scope="module")
def processbench_candidates(data_dir):
    """The first 50 ProcessBench GSM8K solutions as candidates, ground truth from GSM8K test."""
    truths = {}
    with open_text(data_dir / "gsm8k" / "test.jsonl.gz") as f:
        for line in f:
            r = json.loads(line)
            truths[r["question"]] = r["answer"].rsplit("####", 1)[1].strip()
    with open_text(data_dir / "processbench" / "gsm8k.json.gz") as f:
        bench = json.load(f)[:50]
    candidates = [
        {"id": r["id"], "problem": r["problem"], "ground_truth_answer": truths[r["problem"]],
         "steps": r["steps"], "generator": r["generator"]}
        for r in bench
    ]
    return candidates, {r["id"]: r["final_answer_correct"] for r in bench}


def test_candidates_land_with_steps_and_grades(project, tmp_path, processbench_candidates):
    records, labelled_correct = processbench_candidates
    path = write_jsonl(tmp_path / "pb.jsonl", records)

    result = run_import("candidates", path, project)

    assert (result.records, result.created, result.skipped) == (50, 50, 0)
    assert Solution.objects.filter(project=project).count() == 50
    assert Problem.objects.filter(project=project).count() == len({r["problem"] for r in records})
    by_steps = {}
    for solution in Solution.objects.filter(project=project).select_related("problem"):
        steps = list(solution.steps.values_list("position", "alternative", "text", "source"))
        by_steps[tuple(text for _, _, text, _ in steps)] = solution
        assert [(p, a, s) for p, a, _, s in steps] == [(i, 0, "model") for i in range(len(steps))]
        assert solution.num_steps == len(steps)
        assert solution.has_pre_generated
    graded = 0
    for record in records:
        solution = by_steps[tuple(record["steps"])]
        assert solution.generator == record["generator"]
        assert solution.problem.ground_truth_answer == record["ground_truth_answer"]
        if solution.final_answer is None:  # the model never boxed an answer
            assert solution.is_correct is None
        else:
            # math-verify's grade agrees with ProcessBench's label on this slice.
            assert solution.is_correct == labelled_correct[record["id"]]
            graded += 1
    assert graded >= 30
    assert result.details["graded"] == 50
    sample = by_steps[tuple(records[0]["steps"])]
    assert sample.final_answer == "30" and sample.is_correct is False  # "\boxed{30}" against 24


@pytest.mark.parametrize("chunk", [candidates_format.CHUNK, 4])  # 4: the duplicates land in later chunks
def test_reimport_adds_nothing(project, tmp_path, processbench_candidates, chunk, monkeypatch):
    monkeypatch.setattr(candidates_format, "CHUNK", chunk)
    records, _ = processbench_candidates
    path = write_jsonl(tmp_path / "pb.jsonl", records[:20] + records[:5])  # duplicates inside too
    first = run_import("candidates", path, project)
    before = counts()
    again = run_import("candidates", path, project)
    assert (first.created, first.skipped) == (20, 5)
    assert (again.created, again.skipped, again.records) == (0, 25, 25)
    assert counts() == before


def test_the_same_steps_are_one_solution_whatever_generator_and_answer_say(project, tmp_path, processbench_candidates):
    records, _ = processbench_candidates
    first = run_import("candidates", write_jsonl(tmp_path / "a.jsonl", records[:3]), project)
    renamed = [dict(r, generator="another-name", final_answer="12345") for r in records[:3]] + \
        [{k: v for k, v in r.items() if k != "generator"} for r in records[:3]]
    again = run_import("candidates", write_jsonl(tmp_path / "b.jsonl", renamed), project)
    assert (first.created, again.created, again.skipped, again.details["solutions"]) == (3, 0, 6, 0)
    assert sorted(Solution.objects.filter(project=project).values_list("generator", flat=True)) == \
        sorted(r["generator"] for r in records[:3])  # the first import's rows, as they were


def test_gzip_input(project, tmp_path, processbench_candidates):
    records, _ = processbench_candidates
    result = run_import("candidates", write_jsonl(tmp_path / "pb.jsonl.gz", records[:10], gz=True), project)
    assert result.created == 10
    assert Step.objects.filter(solution__project=project).count() == sum(len(r["steps"]) for r in records[:10])


def test_given_answers_and_grades_are_kept(project, tmp_path, data_dir):
    math = first_lines(data_dir / "math" / "math500.jsonl.gz", 1)[0]  # answer (3, pi/2)
    base = {"problem": math["problem"], "ground_truth_solution": math["solution"], "ground_truth_answer": math["answer"]}
    records = [
        dict(base, steps=["r = 3 and the angle is pi/2.", r"So the answer is $\boxed{(3, \frac{\pi}{2})}$."]),
        dict(base, steps=["The point is on the y axis.", "# Answer\n\n(3, \\pi)"], generator="g"),
        dict(base, steps=["A guess."], final_answer=r"\left(3,\frac{\pi}{2}\right)", is_correct=False),
        dict(base, steps=["Another guess.", "# Answer\n\n(3, \\pi/2)"], is_correct=None),
        dict(base, steps=["No answer here."], final_answer=None),
    ]
    run_import("candidates", write_jsonl(tmp_path / "c.jsonl", records), project)
    got = list(Solution.objects.filter(project=project).order_by("id").values_list("final_answer", "is_correct", "generator"))
    assert got == [
        (r"(3, \frac{\pi}{2})", True, ""),  # extracted from the last step, graded
        (r"(3, \pi)", False, "g"),
        (r"\left(3,\frac{\pi}{2}\right)", False, ""),  # the file's grade wins
        (r"(3, \pi/2)", None, ""),  # explicitly unknown stays unknown
        (None, None, ""),
    ]
    # The same problem (same hash) as a MATH import would create: one row.
    assert Problem.objects.filter(project=project).count() == 1
    assert Problem.objects.get().content_hash == problem_hash(math["problem"], math["solution"], math["answer"])


GOOD = {"problem": "What is 1+1?", "ground_truth_answer": "2", "steps": ["1+1=2", "# Answer\n\n2"]}


@pytest.mark.parametrize(
    "bad, field, message",
    [
        (dict(GOOD, steps=["1+1=2", "so", 2]), "steps[2]", "must be a string"),
        (dict(GOOD, steps=["1+1=2", "  "]), "steps[1]", "must not be empty"),
        (dict(GOOD, steps=[]), "steps", "non-empty list"),
        ({k: v for k, v in GOOD.items() if k != "steps"}, "steps", "is missing"),
        ({k: v for k, v in GOOD.items() if k != "ground_truth_answer"}, "ground_truth_answer", "is missing"),
        (dict(GOOD, problem=None), "problem", "must not be null"),
        (dict(GOOD, problem="a\x00b"), "problem", "NUL"),
        (dict(GOOD, is_correct="yes"), "is_correct", "true, false or null"),
        (dict(GOOD, generator="g" * 201), "generator", "longer than 200"),
        (dict(GOOD, final_anwser="2"), "final_anwser", "unknown key"),
    ],
)
def test_bad_line_names_file_line_field_and_imports_nothing(project, tmp_path, processbench_candidates, bad, field, message):
    records, _ = processbench_candidates
    path = write_jsonl(tmp_path / "bad.jsonl", records[:6] + [bad] + records[6:10])
    with pytest.raises(FormatError) as failed:
        run_import("candidates", path, project)
    err = failed.value
    assert (err.path, err.line, err.field) == (str(path), 7, field)
    assert message in str(err)
    assert str(err).startswith(f"{path}:7: field '{field}'")
    assert counts() == {"Problem": 0, "Solution": 0, "Step": 0}


def test_failed_import_leaves_earlier_imports_intact(project, tmp_path, processbench_candidates):
    records, _ = processbench_candidates
    run_import("candidates", write_jsonl(tmp_path / "ok.jsonl", records[:5]), project)
    before = counts()
    bad = write_jsonl(tmp_path / "bad.jsonl", records[5:600] + [dict(GOOD, steps="one step")])
    with pytest.raises(FormatError, match=r"bad.jsonl:46: field 'steps'"):
        run_import("candidates", bad, project)
    assert counts() == before


def test_gsm8k_examples(project, tmp_path, data_dir):
    source = data_dir / "gsm8k" / "example_model_solutions.jsonl.gz"
    lines = first_lines(source, 50)
    path = write_jsonl(tmp_path / "examples.jsonl", lines)
    # The problems first, from GSM8K's own test file: the examples attach to the same rows.
    run_import("problems", write_jsonl(tmp_path / "test.jsonl", first_lines(data_dir / "gsm8k" / "test.jsonl.gz", 50)), project)

    result = run_import("gsm8k-examples", path, project)

    assert (result.records, result.created, result.unit) == (50, 200, "solutions")  # counted in solutions
    assert result.details == {"problems": 0, "solutions": 200, "steps": result.details["steps"], "graded": 0}
    assert Problem.objects.filter(project=project).count() == 50
    first = lines[0]
    solutions = {s.generator: s for s in Solution.objects.filter(problem__problem=first["question"])}
    assert set(solutions) == {"6b_finetuning", "6b_verification", "175b_finetuning", "175b_verification"}
    s = solutions["6b_finetuning"]
    assert s.final_answer == "26" and s.is_correct is False and s.problem.ground_truth_answer == "18"
    expected_steps = [line for line in first["6b_finetuning"]["solution"].split("\n") if line.strip()]
    assert list(s.steps.values_list("text", flat=True)) == expected_steps
    assert s.problem.ground_truth_solution.endswith("\n#### 18")
    file_grades = sum(1 for r in lines for k, v in r.items() if isinstance(v, dict) and v["is_correct"])
    assert Solution.objects.filter(project=project, is_correct=True).count() == file_grades

    again = run_import("gsm8k-examples", path, project)
    assert (again.created, again.skipped) == (0, 200)
    assert Solution.objects.filter(project=project).count() == 200


def test_gsm8k_examples_into_a_new_project_read_dollars_as_text(tmp_path, data_dir, processbench_candidates):
    source = data_dir / "gsm8k" / "example_model_solutions.jsonl.gz"
    examples = write_jsonl(tmp_path / "examples.jsonl", first_lines(source, 5))
    fresh = make_project(name="fresh")
    run_import("gsm8k-examples", examples, fresh)
    assert Project.objects.get(pk=fresh.pk).dollar_math is False

    # ``candidates`` keeps "$" math: ProcessBench's models write "$\boxed{18}$".
    candidates, _ = processbench_candidates
    pool = make_project(name="pool")
    run_import("candidates", write_jsonl(tmp_path / "c.jsonl", candidates[:5]), pool)
    run_import("gsm8k-examples", examples, pool)  # no longer a new project: the setting stays
    assert Project.objects.get(pk=pool.pk).dollar_math is True


def test_gsm8k_examples_bad_line(project, tmp_path, data_dir):
    lines = first_lines(data_dir / "gsm8k" / "example_model_solutions.jsonl.gz", 5)
    lines[3]["175b_verification"]["is_correct"] = "true"
    path = write_jsonl(tmp_path / "examples.jsonl.gz", lines, gz=True)
    with pytest.raises(FormatError) as failed:
        run_import("gsm8k-examples", path, project)
    assert (failed.value.line, failed.value.field) == (4, "175b_verification.is_correct")
    assert counts() == {"Problem": 0, "Solution": 0, "Step": 0}


def test_command(tmp_path, data_dir):
    source = tmp_path / "examples.jsonl.gz"
    with gzip.open(data_dir / "gsm8k" / "example_model_solutions.jsonl.gz", "rb") as f, gzip.open(source, "wb") as out:
        out.writelines(islice(f, 10))
    stdout = io.StringIO()
    call_command("import_candidates", str(source), project="cmd", create_project=True, format="gsm8k-examples",
                 quiet=True, stdout=stdout)
    assert "10 records (40 solutions new, 0 already there)" in stdout.getvalue()
    assert "40 solutions" in stdout.getvalue()
    assert Solution.objects.filter(project__name="cmd").count() == 40

    bad = write_jsonl(tmp_path / "bad.jsonl", [GOOD, dict(GOOD, steps=[1])])
    with pytest.raises(CommandError, match=r"nothing from .*bad.jsonl was imported: .*bad.jsonl:2: field 'steps\[0\]'"):
        call_command("import_candidates", str(bad), project="cmd", quiet=True)
    with pytest.raises(CommandError, match="no project named 'nope'"):
        call_command("import_candidates", str(bad), project="nope", quiet=True)


def test_shares_problems_with_the_prm800k_import(project, tmp_path, data_dir):
    example = data_dir / "prm800k" / "readme_example_record.json"
    run_import("prm800k", example, project)
    question = json.loads(example.read_text(encoding="utf-8"))["question"]
    candidate = {
        "problem": question["problem"],
        "ground_truth_solution": question["ground_truth_solution"],
        "ground_truth_answer": question["ground_truth_answer"],
        "steps": question["pre_generated_steps"],
        "generator": "gpt-4",
    }
    result = run_import("candidates", write_jsonl(tmp_path / "c.jsonl", [candidate]), project)
    assert result.details["problems"] == 0
    assert Problem.objects.filter(project=project).count() == 1
    mine = Solution.objects.get(project=project, generator="gpt-4")
    assert (mine.final_answer, mine.is_correct) == ("320,000", False)  # against 40,\!000
