"""Problem imports (MATH-500 and GSM8K shapes, detected per line) on real data slices."""
import io

import pytest
from django.core.management import CommandError, call_command

from formats.errors import FormatError
from labeling.imports import problems, run_import
from labeling.models import Problem, Project, Solution
from tests.factories import first_lines, write_jsonl, make_project

pytestmark = pytest.mark.django_db


@pytest.fixture
def project():
    return make_project(name="problems")


@pytest.fixture(scope="module")
def math50(data_dir):
    return first_lines(data_dir / "math" / "math500.jsonl.gz", 50)


@pytest.fixture(scope="module")
def gsm50(data_dir):
    return first_lines(data_dir / "gsm8k" / "test.jsonl.gz", 50)


def test_math500_slice(project, math50, data_dir, tmp_path):
    path = write_jsonl(tmp_path / "math.jsonl", math50)
    result = run_import("problems", path, project)
    assert (result.records, result.created, result.skipped) == (50, 50, 0)
    stored = {p.source_id: p for p in Problem.objects.filter(project=project)}
    assert len(stored) == 50
    for record in math50:
        p = stored[record["unique_id"]]
        assert (p.problem, p.ground_truth_solution, p.ground_truth_answer, p.subject, p.level) == (
            record["problem"], record["solution"], record["answer"], record["subject"], record["level"],
        )


def test_gsm8k_slice_and_mixed_file(project, math50, gsm50, tmp_path):
    mixed = [r for pair in zip(math50[:10], gsm50[:10]) for r in pair]
    result = run_import("problems", write_jsonl(tmp_path / "mixed.jsonl", mixed), project)
    assert result.created == 20
    janet = Problem.objects.get(problem=gsm50[0]["question"])
    assert janet.ground_truth_answer == "18"
    assert janet.ground_truth_solution == gsm50[0]["answer"]
    assert (janet.subject, janet.level, janet.source_id) == ("", None, "")
    answers = dict(Problem.objects.filter(subject="").values_list("problem", "ground_truth_answer"))
    assert answers == {r["question"]: r["answer"].rsplit("#### ", 1)[1] for r in gsm50[:10]}


@pytest.mark.parametrize("chunk", [problems.CHUNK, 7])  # 7: 103 records in 15 chunks, the last of 5
def test_reimport_adds_nothing(project, math50, gsm50, tmp_path, chunk, monkeypatch):
    monkeypatch.setattr(problems, "CHUNK", chunk)
    path = write_jsonl(tmp_path / "p.jsonl", math50 + gsm50 + math50[:3])
    first = run_import("problems", path, project)
    again = run_import("problems", path, project)
    assert (first.created, first.skipped) == (100, 3)
    assert (again.created, again.skipped) == (0, 103)
    assert Problem.objects.filter(project=project).count() == 100


def test_gzip_input(project, gsm50, tmp_path):
    result = run_import("problems", write_jsonl(tmp_path / "gsm.jsonl.gz", gsm50, gz=True), project)
    assert result.created == 50


def test_original_math_shape(project, math50, tmp_path):
    # The MATH data set itself: no answer field, "type" for subject, "Level N".
    r = math50[1]
    original = {"problem": r["problem"], "level": f"Level {r['level']}", "type": r["subject"], "solution": r["solution"]}
    run_import("problems", write_jsonl(tmp_path / "orig.jsonl", [original]), project)
    p = Problem.objects.get()
    assert (p.ground_truth_answer, p.level, p.subject) == (r["answer"], r["level"], r["subject"])


def test_candidate_problems_get_their_metadata_filled_in(project, math50, tmp_path):
    r = math50[0]
    candidate = {"problem": r["problem"], "ground_truth_solution": r["solution"], "ground_truth_answer": r["answer"],
                 "steps": ["# Answer\n\n(3, \\pi/2)"]}
    run_import("candidates", write_jsonl(tmp_path / "c.jsonl", [candidate]), project)
    assert Problem.objects.get().subject == ""
    result = run_import("problems", write_jsonl(tmp_path / "m.jsonl", math50[:1]), project)
    assert (result.created, result.details["filled_in"]) == (0, 1)
    p = Problem.objects.get()
    assert (p.subject, p.level, p.source_id) == (r["subject"], r["level"], r["unique_id"])
    assert Solution.objects.get().problem_id == p.id


@pytest.mark.parametrize(
    "bad, field, message",
    [
        ({"problem": "x", "solution": "y", "level": "hard"}, "level", "'Level N'"),
        ({"problem": "x", "solution": "y", "level": True}, "level", "integer"),
        ({"question": "x", "answer": "no hashes"}, "answer", "#### <answer>"),
        ({"question": "x"}, "answer", "is missing"),
        ({"statement": "x"}, "problem", "is missing"),
        ({"problem": "", "solution": "y"}, "problem", "must not be empty"),
        ({"problem": "x", "solution": 3}, "solution", "must be a string"),
        ({"problem": "x", "solution": "y", "unique_id": "u" * 201}, "unique_id", "longer than 200"),
        ({"problem": "x", "solution": "y", "subjet": "Algebra"}, "subjet", "unknown key"),
    ],
)
def test_bad_line_names_file_line_field_and_imports_nothing(project, math50, tmp_path, bad, field, message):
    path = write_jsonl(tmp_path / "bad.jsonl.gz", math50[:20] + [bad] + math50[20:], gz=True)
    with pytest.raises(FormatError) as failed:
        run_import("problems", path, project)
    err = failed.value
    assert (err.path, err.line, err.field) == (str(path), 21, field)
    assert message in str(err)
    assert Problem.objects.count() == 0


def test_command(tmp_path, data_dir, gsm50):
    stdout = io.StringIO()
    path = write_jsonl(tmp_path / "gsm.jsonl", gsm50)
    call_command("import_problems", str(path), project="cmd", create_project=True, quiet=True, stdout=stdout)
    call_command("import_problems", str(path), project="cmd", quiet=True, stdout=stdout)
    lines = stdout.getvalue().splitlines()
    assert "50 records (50 problems new, 0 already there)" in lines[0] and "added 50 problems" in lines[0]
    assert "50 records (0 problems new, 50 already there)" in lines[1]
    bad = write_jsonl(tmp_path / "bad.jsonl", gsm50[:2] + [{"question": "q", "answer": 5}])
    with pytest.raises(CommandError, match=r"bad.jsonl:3: field 'answer': must be a string"):
        call_command("import_problems", str(bad), project="cmd", quiet=True)
    assert Problem.objects.filter(project__name="cmd").count() == 50



def test_a_gsm8k_file_into_a_new_project_reads_dollars_as_text(math50, gsm50, tmp_path):
    gsm8k = make_project(name="gsm8k")
    run_import("problems", write_jsonl(tmp_path / "gsm.jsonl", gsm50), gsm8k)
    assert Project.objects.get(pk=gsm8k.pk).dollar_math is False

    # MATH needs "$" math; a mixed file keeps it too (the Pandoc rule keeps most prices text).
    for name, records in [("math", math50), ("mixed", math50[:5] + gsm50[:5])]:
        project = make_project(name=name)
        run_import("problems", write_jsonl(tmp_path / f"{name}.jsonl", records), project)
        assert Project.objects.get(pk=project.pk).dollar_math is True, name

    # A project that already holds problems keeps the setting its lead chose.
    chosen = make_project(name="chosen")
    run_import("problems", write_jsonl(tmp_path / "first.jsonl", math50[:1]), chosen)
    run_import("problems", write_jsonl(tmp_path / "gsm.jsonl", gsm50), chosen)
    assert Project.objects.get(pk=chosen.pk).dollar_math is True
