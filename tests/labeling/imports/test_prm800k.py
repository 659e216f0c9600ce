"""PRM800K import: how records land in the tables, located errors, all or nothing, gzip."""
import copy
import json

import pytest

from formats.errors import FormatError
from labeling.exports import ExportFilters, get_exporter
from labeling.imports import prm800k, prm800k_bulk, run_import
from labeling.models import Annotator, Assignment, Generation, Problem, Project, Rating, Solution, Step
from tests.factories import write_jsonl, make_project

pytestmark = pytest.mark.django_db


@pytest.fixture
def project():
    return make_project(name="import")


def export_objects(project):
    return [json.loads(line) for line in get_exporter("prm800k")(ExportFilters(project_id=project.id))]


def table_counts(project):
    return (
        Problem.objects.filter(project=project).count(),
        Solution.objects.filter(project=project).count(),
        Step.objects.filter(solution__project=project).count(),
        Assignment.objects.filter(project=project).count(),
        Rating.objects.filter(assignment__project=project).count(),
    )


def test_phase2_record_maps_onto_solution_steps_and_ratings(tmp_path, project, example):
    result = run_import("prm800k", write_jsonl(tmp_path / "a.jsonl", [example]), project)
    assert (result.records, result.created, result.skipped) == (1, 1, 0)

    solution = Solution.objects.get(project=project)
    question = example["question"]
    assert solution.has_pre_generated
    assert solution.num_steps == len(question["pre_generated_steps"])
    assert solution.final_answer == question["pre_generated_answer"]
    assert solution.verifier_score == question["pre_generated_verifier_score"]
    assert solution.generation.number == 9
    assert solution.live_assignments == 1
    own = list(solution.steps.filter(alternative=0).order_by("position").values_list("text", flat=True))
    assert own == question["pre_generated_steps"]

    assignment = Assignment.objects.get(project=project)
    assert assignment.state == Assignment.SUBMITTED
    assert str(assignment.annotator.uuid) == example["labeler"]
    assert assignment.annotator.user is None
    assert assignment.submitted_at.isoformat() == example["timestamp"] + "+00:00"
    assert (assignment.finish_reason, assignment.total_time, assignment.generation) == (
        "found_error", example["label"]["total_time"], 9)
    assert assignment.source_shape is None  # the default phase-2 shape

    # Position 2 lists five completions: alternatives 0..4, in that order, the first rated -1.
    rows = list(
        Rating.objects.filter(assignment=assignment, step__position=2)
        .order_by("step__alternative")
        .values_list("step__alternative", "value", "chosen")
    )
    assert rows == [(0, -1, False), (1, 0, False), (2, -1, False), (3, 0, False), (4, 0, False)]
    assert Rating.objects.filter(assignment=assignment, chosen=True).count() == 2  # positions 0 and 1


def test_second_pass_shares_solution_and_matching_alternatives(tmp_path, project, example):
    other = copy.deepcopy(example)
    other["labeler"] = "00000000-0000-4000-8000-000000000001"
    other["timestamp"] = "2023-01-23T10:00:00.000001"
    at2 = other["label"]["steps"][2]["completions"]
    # Keep the solution's own step and the fourth alternative, add a new text and repeat one.
    other["label"]["steps"][2]["completions"] = [at2[0], at2[3], {"text": "New idea.", "rating": 1, "flagged": False},
                                                 at2[3]]
    run_import("prm800k", write_jsonl(tmp_path / "a.jsonl", [example, other]), project)

    assert Solution.objects.filter(project=project).count() == 1
    assert Assignment.objects.get(annotator__uuid=other["labeler"]).solution.live_assignments == 2
    second = Assignment.objects.get(annotator__uuid=other["labeler"])
    alternatives = list(
        Rating.objects.filter(assignment=second, step__position=2)
        .order_by("step__alternative")
        .values_list("step__alternative", "step__text")
    )
    # at2[0] -> 0, at2[3] -> 3, the new text -> 5, the repeat of at2[3] -> a new 6.
    assert [a for a, _ in alternatives] == [0, 3, 5, 6]
    assert alternatives[3][1] == alternatives[1][1]
    assert export_objects(project) == [example, other]


@pytest.mark.parametrize("row_triggers", ["off where allowed", "on"])
def test_chunk_boundaries_do_not_change_the_data(tmp_path, project, native, example, monkeypatch, row_triggers):
    records = native + [example] + native[:3]  # the last three are exact repeats: skipped
    path = write_jsonl(tmp_path / "a.jsonl", records)
    monkeypatch.setattr(prm800k_bulk, "SKIP_ROW_TRIGGERS", row_triggers != "on")
    monkeypatch.setattr(prm800k, "CHUNK", 2)
    small = run_import("prm800k", path, project)
    assert (small.created, small.skipped) == (9, 3)
    other = make_project(name="one chunk")
    monkeypatch.setattr(prm800k, "CHUNK", 2000)
    run_import("prm800k", path, other)
    assert table_counts(project) == table_counts(other)
    assert export_objects(project) == export_objects(other) == native + [example]


def test_foreign_key_checks_are_back_on_after_an_import(tmp_path, project, native):
    from django.db import connection

    run_import("prm800k", write_jsonl(tmp_path / "a.jsonl", native), project)
    with connection.cursor() as cursor:
        cursor.execute("SHOW session_replication_role")
        assert cursor.fetchone()[0] == "origin"


def test_large_import_refreshes_planner_statistics(tmp_path, project, native, monkeypatch):
    from django.db import connection

    monkeypatch.setattr(prm800k, "ANALYZE_AFTER_ROWS", 1)
    run_import("prm800k", write_jsonl(tmp_path / "a.jsonl", native), project)
    with connection.cursor() as cursor:
        cursor.execute("SELECT reltuples FROM pg_class WHERE relname = 'labeling_rating'")
        assert cursor.fetchone()[0] == Rating.objects.count()


def test_labelers_and_generations_are_created_once(tmp_path, project, native):
    run_import("prm800k", write_jsonl(tmp_path / "a.jsonl", native), project)
    labelers = {r["labeler"] for r in native}
    assert Annotator.objects.filter(uuid__in=labelers).count() == len(labelers)
    assert set(Generation.objects.filter(project=project).values_list("number", flat=True)) == {6, -1}
    screening = Solution.objects.get(project=project, generation__number=-1)
    assert screening.is_screening and not screening.is_gold


def test_gzip_input(tmp_path, project, native):
    result = run_import("prm800k", write_jsonl(tmp_path / "a.jsonl.gz", native, gz=True), project)
    assert result.created == len(native)
    assert export_objects(project) == native


def test_same_labeler_twice_on_one_solution_is_refused_at_its_line(tmp_path, project, example):
    later = copy.deepcopy(example)
    later["timestamp"] = "2023-02-01T00:00:00.000001"
    path = write_jsonl(tmp_path / "twice.jsonl", [example, later])
    with pytest.raises(FormatError) as info:
        run_import("prm800k", path, project)
    assert (info.value.line, info.value.field) == (2, "labeler")
    assert table_counts(project) == (0, 0, 0, 0, 0)


BAD = [
    (lambda r: r["label"]["steps"][1]["completions"].__getitem__(0).update(rating=2),
     "label.steps[1].completions[0].rating"),
    (lambda r: r["label"]["steps"][2]["completions"][3].update(rating="x"), "label.steps[2].completions[3].rating"),
    (lambda r: r["label"]["steps"][2]["completions"][1].update(flagged="no"), "label.steps[2].completions[1].flagged"),
    (lambda r: r["label"]["steps"][0].update(chosen_completion=1), "label.steps[0].chosen_completion"),
    (lambda r: r["label"]["steps"][0]["completions"][0].pop("text"), "label.steps[0].completions[0].text"),
    (lambda r: r["label"]["steps"][0].update(note="?"), "label.steps[0].note"),
    (lambda r: r["question"].update(pre_generated_steps="one step"), "question.pre_generated_steps"),
    (lambda r: r["question"].update(pre_generated_verifier_score=float("nan")), "question.pre_generated_verifier_score"),
    (lambda r: r["label"].update(finish_reason="done"), "label.finish_reason"),
    (lambda r: r["label"].update(total_time=-5), "label.total_time"),
    (lambda r: r.update(labeler="alice"), "labeler"),
    (lambda r: r.update(timestamp="yesterday"), "timestamp"),
    (lambda r: r.update(generation=-2), "generation"),
    (lambda r: r.update(is_quality_control_question=0), "is_quality_control_question"),
    (lambda r: r["question"].update(problem="a\x00b"), "question.problem"),
]


@pytest.mark.parametrize("spoil, field", BAD, ids=[f for _, f in BAD])
def test_bad_field_fails_the_whole_file_naming_file_line_and_field(tmp_path, project, native, example, spoil, field):
    records = native[:4] + [copy.deepcopy(example)] + native[4:]
    spoil(records[4])
    path = write_jsonl(tmp_path / "bad.jsonl", records)
    with pytest.raises(FormatError) as info:
        run_import("prm800k", path, project)
    error = info.value
    assert (error.path, error.line, error.field) == (str(path), 5, field)
    assert str(path) in str(error) and ":5" in str(error) and field in str(error)
    assert table_counts(project) == (0, 0, 0, 0, 0)
    assert not Annotator.objects.exists()


def test_bad_json_line_is_located(tmp_path, project, native):
    path = tmp_path / "broken.jsonl"
    path.write_text(json.dumps(native[0]) + "\n{not json\n")
    with pytest.raises(FormatError) as info:
        run_import("prm800k", path, project)
    assert info.value.line == 2
    assert table_counts(project) == (0, 0, 0, 0, 0)


def test_odd_but_valid_values_survive_the_round_trip(tmp_path, project, example):
    odd = copy.deepcopy(example)
    odd["labeler"] = odd["labeler"].upper()  # not the canonical UUID spelling
    odd["timestamp"] = "2023-01-22T04:34:27"  # no microseconds
    odd["question"]["pre_generated_verifier_score"] = 1  # an integer
    odd["question"].pop("ground_truth_solution")
    odd["label"]["steps"][1].update(completions=[], chosen_completion=None)
    odd["label"]["steps"].append({"completions": None, "human_completion": None, "chosen_completion": None})
    run_import("prm800k", write_jsonl(tmp_path / "odd.jsonl", [odd]), project)
    [out] = export_objects(project)
    assert json.dumps(out) == json.dumps(odd)


def test_import_command_reports_and_is_idempotent(tmp_path, native):
    from io import StringIO

    from django.core.management import call_command

    path = write_jsonl(tmp_path / "native.jsonl.gz", native, gz=True)
    out, err = StringIO(), StringIO()
    call_command("import_prm800k", str(path), "--project", "cmd", "--create-project", stdout=out, stderr=err)
    assert f"{len(native)} records ({len(native)} new, 0 already there)" in out.getvalue()
    assert "records" in err.getvalue()  # the final progress line
    call_command("import_prm800k", str(path), "--project", "cmd", stdout=out, stderr=err)
    assert f"(0 new, {len(native)} already there)" in out.getvalue()
    assert Assignment.objects.filter(project__name="cmd").count() == len(native)


def test_import_command_fails_with_the_location(tmp_path, native):
    from django.core.management import call_command
    from django.core.management.base import CommandError

    make_project(name="cmd")
    bad = copy.deepcopy(native)
    bad[4]["label"]["steps"][7]["completions"][1]["rating"] = "x"
    path = write_jsonl(tmp_path / "bad.jsonl", bad)
    with pytest.raises(CommandError) as info:
        call_command("import_prm800k", str(path), "--project", "cmd", "--quiet")
    message = str(info.value)
    assert f"{path}:5" in message and "label.steps[7].completions[1].rating" in message
    assert not Assignment.objects.exists()
    with pytest.raises(CommandError, match="no project"):
        call_command("import_prm800k", str(path), "--project", "missing")


# The tests above run inside a transaction that is never committed; these commit for real, so
# PostgreSQL's deferred foreign-key checks run (with row triggers on) and a failed import
# really rolls back at the top level.
ORPHANS = [
    "SELECT count(*) FROM labeling_rating r LEFT JOIN labeling_step s ON s.id = r.step_id WHERE s.id IS NULL",
    "SELECT count(*) FROM labeling_rating r LEFT JOIN labeling_assignment a ON a.id = r.assignment_id WHERE a.id IS NULL",
    "SELECT count(*) FROM labeling_step st LEFT JOIN labeling_solution s ON s.id = st.solution_id WHERE s.id IS NULL",
    "SELECT count(*) FROM labeling_step st LEFT JOIN labeling_assignment a ON a.id = st.author_id "
    "WHERE st.author_id IS NOT NULL AND a.id IS NULL",
    "SELECT count(*) FROM labeling_assignment a LEFT JOIN labeling_solution s ON s.id = a.solution_id WHERE s.id IS NULL",
    "SELECT count(*) FROM labeling_solution s LEFT JOIN labeling_problem p ON p.id = s.problem_id WHERE p.id IS NULL",
]


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("row_triggers", ["off where allowed", "on"])
def test_committed_import_has_no_dangling_references(tmp_path, native, example, monkeypatch, row_triggers):
    from django.db import connection

    monkeypatch.setattr(prm800k_bulk, "SKIP_ROW_TRIGGERS", row_triggers != "on")
    monkeypatch.setattr(prm800k, "CHUNK", 3)
    project = make_project(name="committed")
    second = copy.deepcopy(example)
    second["labeler"] = "00000000-0000-4000-8000-000000000002"
    run_import("prm800k", write_jsonl(tmp_path / "a.jsonl", native + [example, second]), project)
    with connection.cursor() as cursor:
        for sql in ORPHANS:
            cursor.execute(sql)
            assert cursor.fetchone()[0] == 0, sql
        cursor.execute("SHOW session_replication_role")
        assert cursor.fetchone()[0] == "origin"
    assert export_objects(project) == native + [example, second]


@pytest.mark.django_db(transaction=True)
def test_committed_failure_leaves_nothing(tmp_path, native):
    project = make_project(name="committed failure")
    bad = copy.deepcopy(native)
    bad[6]["label"]["steps"][2]["completions"][0]["rating"] = 2
    with pytest.raises(FormatError) as info:
        run_import("prm800k", write_jsonl(tmp_path / "bad.jsonl", bad), project)
    assert (info.value.line, info.value.field) == (7, "label.steps[2].completions[0].rating")
    assert table_counts(project) == (0, 0, 0, 0, 0)
    assert not Annotator.objects.exists()
    run_import("prm800k", write_jsonl(tmp_path / "good.jsonl", native), project)  # the connection is fine
    assert export_objects(project) == native


def test_imported_passes_fill_their_solutions_as_hand_outs_would(tmp_path, project, example):
    project.overlap = 2
    project.save()
    run_import("prm800k", write_jsonl(tmp_path / "a.jsonl", [example]), project)
    assert not Solution.objects.get(project=project).is_full  # one pass of two: still in the queue

    other = copy.deepcopy(example)
    other["labeler"] = "00000000-0000-4000-8000-000000000001"
    run_import("prm800k", write_jsonl(tmp_path / "b.jsonl", [other]), project)  # a pass of a known solution
    solution = Solution.objects.get(project=project)
    assert (solution.live_assignments, solution.is_full) == (2, True)
