"""PRM800K export: filters, files (plain and gzip), and assignments made in Stepmark."""
import datetime
import gzip
import json

import pytest

from labeling.exports import ExportFilters, get_exporter, stream_export, write_export
from labeling.imports import run_import
from labeling.models import Annotator, Assignment, Generation, Problem, Project, Rating, Solution, Step
from tests.factories import make_project

pytestmark = pytest.mark.django_db
UTC = datetime.timezone.utc


@pytest.fixture
def project(tmp_path, native):
    project = make_project(name="export")
    path = tmp_path / "native.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in native))
    run_import("prm800k", path, project)
    return project


def exported(project, **filters):
    lines = get_exporter("prm800k")(ExportFilters(project_id=project.id, **filters))
    return [json.loads(line) for line in lines]


def test_generation_filter(project, native):
    assert exported(project, generations=(6,)) == [r for r in native if r["generation"] == 6]
    assert exported(project, generations=(6, -1)) == [r for r in native if r["generation"] in (6, -1)]
    assert exported(project, generations=()) == []


def test_time_range_filter(project, native):
    since = datetime.datetime(2022, 7, 29, tzinfo=UTC)
    until = datetime.datetime(2022, 11, 22, 16, 51, 29, 980606, tzinfo=UTC)  # record 2's own time: excluded

    def when(r):
        return datetime.datetime.fromisoformat(r["timestamp"]).replace(tzinfo=UTC)

    expected = [r for r in native if since <= when(r) < until]
    assert 0 < len(expected) < len(native)
    assert exported(project, since=since, until=until) == expected


def test_quality_control_and_annotator_filters(project, native):
    gold = Assignment.objects.filter(project=project).order_by("id")[1]
    Assignment.objects.filter(pk=gold.pk).update(is_quality_control=True)
    objects = exported(project, include_quality_control=False)
    assert len(objects) == len(native) - 1
    assert all(not o["is_quality_control_question"] for o in objects)
    assert exported(project)[1]["is_quality_control_question"] is True

    someone = Annotator.objects.get(uuid=native[0]["labeler"])
    kept = exported(project, exclude_annotator_ids=(someone.pk,))
    assert [r["timestamp"] for r in kept] == [r["timestamp"] for r in native if r["labeler"] != native[0]["labeler"]]


def test_only_submitted_assignments_of_the_project(project, native):
    Assignment.objects.filter(project=project, generation=6).update(state=Assignment.ACTIVE)
    assert exported(project) == [r for r in native if r["generation"] != 6]
    other = make_project(name="empty")
    assert exported(other) == []


def test_files_plain_and_gzip(project, native, tmp_path):
    filters = ExportFilters(project_id=project.id)
    plain, packed = tmp_path / "out.jsonl", tmp_path / "out.jsonl.gz"
    assert write_export("prm800k", filters, plain) == len(native)
    assert write_export("prm800k", filters, packed) == len(native)
    text = plain.read_text(encoding="utf-8")
    assert gzip.decompress(packed.read_bytes()).decode() == text
    assert [json.loads(line) for line in text.splitlines()] == native
    streamed = b"".join(stream_export("prm800k", filters, compress=True, chunk_size=1000))
    assert gzip.decompress(streamed).decode() == text


def test_small_batches_page_through_everything(project, native, monkeypatch):
    from labeling.exports import prm800k_passes

    monkeypatch.setattr(prm800k_passes, "BATCH", 3)
    assert exported(project) == native


def make_live_pass(*, pre_generated, ground_truth_solution):
    project = make_project(name=f"live {pre_generated}")
    problem = Problem.objects.create(
        project=project, problem="1+1?", ground_truth_solution=ground_truth_solution, ground_truth_answer="2",
        content_hash=f"p{pre_generated}",
    )
    generation = Generation.objects.create(project=project, number=3)
    solution = Solution.objects.create(
        project=project, problem=problem, has_pre_generated=pre_generated, final_answer="2", verifier_score=0.75,
        num_steps=2, content_hash=f"s{pre_generated}", generation=generation,
    )
    first = Step.objects.create(solution=solution, position=0, text="One plus one.")
    second = Step.objects.create(solution=solution, position=1, text="# Answer\n\n2")
    other = Step.objects.create(solution=solution, position=1, alternative=1, text="It is 3.")
    annotator = Annotator.objects.create()
    assignment = Assignment.objects.create(
        project=project, solution=solution, annotator=annotator, state=Assignment.SUBMITTED,
        submitted_at=datetime.datetime(2024, 5, 1, 12, 0, 0, 123456, tzinfo=UTC), total_time=4200,
        finish_reason="solution", generation=3,
    )
    human = Step.objects.create(solution=solution, position=1, alternative=2, text="Two.", source="human",
                                author=assignment)
    Rating.objects.create(assignment=assignment, step=first, value=1, chosen=True)
    Rating.objects.create(assignment=assignment, step=second, value=1, flagged=True, chosen=True)
    Rating.objects.create(assignment=assignment, step=other, value=-1)
    Rating.objects.create(assignment=assignment, step=human, value=None, flagged=False)
    return project, annotator


def test_live_phase2_assignment(db):
    project, annotator = make_live_pass(pre_generated=True, ground_truth_solution="Add.")
    [record] = exported(project)
    assert list(record) == ["labeler", "timestamp", "generation", "is_quality_control_question",
                            "is_initial_screening_question", "question", "label"]
    assert record["labeler"] == str(annotator.uuid)
    assert record["timestamp"] == "2024-05-01T12:00:00.123456"
    assert record["question"] == {
        "problem": "1+1?", "ground_truth_solution": "Add.", "ground_truth_answer": "2",
        "pre_generated_steps": ["One plus one.", "# Answer\n\n2"], "pre_generated_answer": "2",
        "pre_generated_verifier_score": 0.75,
    }
    assert record["label"] == {
        "steps": [
            {"completions": [{"text": "One plus one.", "rating": 1, "flagged": None}],
             "human_completion": None, "chosen_completion": 0},
            {"completions": [{"text": "# Answer\n\n2", "rating": 1, "flagged": True},
                             {"text": "It is 3.", "rating": -1, "flagged": None}],
             "human_completion": {"text": "Two.", "rating": None, "source": "human", "flagged": False},
             "chosen_completion": 0},
        ],
        "total_time": 4200,
        "finish_reason": "solution",
    }


def test_live_phase1_assignment_without_reference_solution(db):
    project, _ = make_live_pass(pre_generated=False, ground_truth_solution=None)
    [record] = exported(project)
    assert record["question"] == {"problem": "1+1?", "ground_truth_answer": "2"}


def test_export_command_with_filters_and_gzip(project, native, tmp_path):
    from io import StringIO

    from django.core.management import call_command

    out = tmp_path / "gen6"  # no .gz suffix: --gzip decides
    stdout = StringIO()
    call_command("export_prm800k", "--project", "export", "--output", str(out), "--gzip", "--generation", "6",
                 "--generation", "-1", "--no-quality-control", "--since", "2022-01-01", stdout=stdout, stderr=StringIO())
    lines = gzip.decompress(out.read_bytes()).decode().splitlines()
    assert [json.loads(x) for x in lines] == [r for r in native if r["generation"] in (6, -1)]
    assert "2 records" in stdout.getvalue()
    call_command("export_prm800k", "--project", "export", "--output", str(out), "--until", "2022-07-14",
                 "--quiet", stdout=stdout)
    assert [json.loads(x)["timestamp"] for x in out.read_text().splitlines()] == ["2022-07-13T18:55:54.496450"]
