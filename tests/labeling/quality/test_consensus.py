"""Consensus ratings (labeling/quality/consensus.py) and the prm800k-consensus export.

Built on PRM800K's documented example record (phase 2, alternatives at its third step),
imported as the first pass and rated again by two more annotators.
"""
import json
from datetime import datetime, timezone

import pytest

from labeling.exports import ExportFilters, get_exporter, write_export
from labeling.imports import run_import
from labeling.models import Annotator, Assignment, Project, Solution, Step
from labeling.quality import consensus
from tests.factories import make_annotator, make_solution, rated_pass, make_project

pytestmark = pytest.mark.django_db

LATER = datetime(2023, 2, 1, 12, 0, 0, 123456, tzinfo=timezone.utc)
C0DE = "00000000-0000-0000-0000-00000000c0de"


@pytest.mark.parametrize("values, expected", [
    ([1, 1, 0], 1),
    ([1, 0], 0),  # a tie goes to the more critical value
    ([0, -1], -1),
    ([1, -1], -1),
    ([-1, 0, 1], -1),
    ([1, 1, 0, 0, -1], 0),
    ([1], 1),
    ([], None),
])
def test_majority_with_ties_to_the_lower_rating(values, expected):
    assert consensus.majority(values) == expected
    assert consensus.majority(list(reversed(values))) == expected  # order never matters


def add_pass(solution, values, *, alternatives=None, submitted_at=LATER):
    """A new annotator's submitted pass (generation 9); returns the annotator."""
    return rated_pass(solution, make_annotator(), values, at=submitted_at, generation=9,
                      alternatives=alternatives).annotator


@pytest.fixture
def example(data_dir, tmp_path):
    """The README record imported (labeler L), plus B: [0, 1, -1] and C: [1, 1, 1, 1]."""
    record = json.loads((data_dir / "prm800k" / "readme_example_record.json").read_text())
    project = make_project(name="consensus")
    source = tmp_path / "example.jsonl"
    source.write_text(json.dumps(record) + "\n")
    run_import("prm800k", source, project)
    solution = Solution.objects.get(project=project)
    b = add_pass(solution, [0, 1, -1], alternatives={(2, 1): 1})
    c = add_pass(solution, [1, 1, 1, 1], submitted_at=datetime(2023, 1, 30, tzinfo=timezone.utc))
    lonely = make_solution(project, steps=2)
    add_pass(lonely, [1, 1])  # rated once: not overlapping
    return dict(project=project, record=record, solution=solution, b=b, c=c)


def test_consensus_per_step_is_the_majority_and_a_ruling_overrides_it(example):
    solution = example["solution"]
    table = consensus.consensus_ratings(solution)
    # L: [0, 0, -1] with alternatives 0, -1, 0, 0 at step 2; B: [0, 1, -1] with 1 at (2, 1); C: [1, 1, 1, 1].
    assert {k: c.value for k, c in table.items()} == {
        (0, 0): 0, (1, 0): 1, (2, 0): -1, (2, 1): 0, (2, 2): -1, (2, 3): 0, (2, 4): 0, (3, 0): 1}
    assert table[(2, 0)] == consensus.Consensus(-1, {-1: 2, 1: 1}, False)
    assert table[(2, 1)].votes == {0: 1, 1: 1}  # a tie: 0
    consensus.adjudicate(solution, {(2, 1): 1, (0, 0): 1}, note="checked by hand")
    table = consensus.consensus_ratings(solution)
    assert (table[(2, 1)], table[(0, 0)].value) == (consensus.Consensus(1, {0: 1, 1: 1}, True), 1)
    consensus.adjudicate(solution, {(2, 1): None})
    assert consensus.consensus_ratings(solution)[(2, 1)].value == 0
    assert consensus.consensus_ratings(solution, adjudicated=False)[(0, 0)].value == 0


def test_adjudication_refuses_unknown_steps_and_bad_values(example):
    with pytest.raises(consensus.ConsensusError, match="no model step at position 99"):
        consensus.adjudicate(example["solution"], {(99, 0): 1})
    with pytest.raises(consensus.ConsensusError, match="-1, 0, 1 or null"):
        consensus.adjudicate(example["solution"], {(0, 0): 5})


def export_lines(project, **filters):
    return list(get_exporter("prm800k-consensus")(ExportFilters(project_id=project.pk, **filters)))


def test_one_consensus_record_per_overlapping_solution_in_the_prm800k_layout(example):
    record, solution = example["record"], example["solution"]
    [line] = export_lines(example["project"])
    out = json.loads(line)
    assert list(out) == list(record) and list(out["label"]) == list(record["label"])
    assert out["labeler"] == C0DE
    assert out["timestamp"] == "2023-02-01T12:00:00.123456"  # the latest voting pass
    assert (out["generation"], out["is_quality_control_question"], out["is_initial_screening_question"]) == (
        9, False, False)
    assert out["question"] == record["question"]
    steps = out["label"]["steps"]
    texts = [[c["text"] for c in step["completions"]] for step in steps]
    assert texts == [[c["text"] for c in step["completions"]] for step in record["label"]["steps"]]
    assert [[c["rating"] for c in step["completions"]] for step in steps] == [[0], [1], [-1, 0, -1, 0, 0]]
    assert [step["chosen_completion"] for step in steps] == [0, 0, None]
    assert {c["flagged"] for step in steps for c in step["completions"]} == {None}
    assert (out["label"]["total_time"], out["label"]["finish_reason"]) == (None, "found_error")
    # A ruling that the error is no error carries the trajectory on while votes last.
    consensus.adjudicate(solution, {(2, 0): 1})
    out = json.loads(export_lines(example["project"])[0])
    assert [step["chosen_completion"] for step in out["label"]["steps"]] == [0, 0, 0, 0]
    assert out["label"]["finish_reason"] is None


def test_the_export_filters_choose_the_voting_passes(example):
    project, c = example["project"], example["c"]
    without_c = json.loads(export_lines(project, exclude_annotator_ids=(c.pk,))[0])
    assert [[x["rating"] for x in s["completions"]] for s in without_c["label"]["steps"]][:2] == [[0], [0]]
    Assignment.objects.filter(annotator__in=[example["b"], c]).update(is_quality_control=True)
    assert export_lines(project, include_quality_control=False) == []  # one pass left: no overlap
    assert export_lines(project, generations=(10,)) == []
    assert json.loads(export_lines(project)[0])["is_quality_control_question"] is True


def test_the_consensus_export_round_trips_through_the_prm800k_importer(example, tmp_path):
    path = tmp_path / "consensus.jsonl"
    assert write_export("prm800k-consensus", ExportFilters(project_id=example["project"].pk), path) == 1
    fresh = make_project(name="consensus copy")
    run_import("prm800k", path, fresh)
    assert Annotator.objects.get(assignments__project=fresh).uuid.hex.endswith("c0de")
    back = list(get_exporter("prm800k")(ExportFilters(project_id=fresh.pk)))
    assert [json.loads(line) for line in back] == [json.loads(line) for line in path.read_text().splitlines()]
    assert back == path.read_text().splitlines()


def test_imported_consensus_records_never_vote(example, tmp_path):
    project = example["project"]
    before = export_lines(project)
    path = tmp_path / "consensus.jsonl"
    path.write_text("\n".join(before) + "\n")
    run_import("prm800k", path, project)  # the same solution, one more pass by the consensus labeler
    assert Assignment.objects.filter(solution=example["solution"], annotator__uuid=C0DE).count() == 1
    assert export_lines(project) == before
    assert Step.objects.filter(solution=example["solution"]).count() == 16 + 4
