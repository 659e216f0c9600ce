"""TRL stepwise-supervision export: trajectories, labels, where they stop, the command."""
import copy
import json

import pytest
from django.core.management import call_command

from labeling.exports import ExportFilters, get_exporter
from labeling.imports import run_import
from labeling.models import Project
from tests.factories import make_project

pytestmark = pytest.mark.django_db


def trl_lines(tmp_path, records, fmt="trl"):
    project = make_project(name=f"trl {len(list(tmp_path.iterdir()))}")
    path = tmp_path / f"in{project.pk}.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    run_import("prm800k", path, project)
    return [json.loads(line) for line in get_exporter(fmt)(ExportFilters(project_id=project.id))]


def test_phase2_found_error_ends_on_the_wrong_step(tmp_path, example):
    [line] = trl_lines(tmp_path, [example])
    steps = example["question"]["pre_generated_steps"]
    # Positions 0 and 1 are rated 0 (neutral counts as true); position 2 has no chosen
    # completion: the solution's own step there is the -1 that ended the pass.
    assert line == {"prompt": example["question"]["problem"], "completions": steps[:3], "labels": [True, True, False]}


def test_neutral_negative_format(tmp_path, example):
    [line] = trl_lines(tmp_path, [example], fmt="trl_neutral_negative")
    assert line["labels"] == [False, False, False]


def test_phase1_trajectory_follows_chosen_and_human_steps(tmp_path, native):
    record = native[0]
    [line] = trl_lines(tmp_path, [record])
    steps = record["label"]["steps"]
    expected = [
        steps[0]["completions"][0]["text"],
        steps[1]["human_completion"]["text"],  # nothing chosen: the annotator's own step, unrated = true
        steps[2]["completions"][0]["text"],
        steps[3]["completions"][0]["text"],
        steps[4]["completions"][0]["text"],
        steps[5]["completions"][4]["text"],
    ]
    assert line["completions"] == expected
    assert line["labels"] == [True] * 6


def test_stops_after_the_first_negative_chosen_step(tmp_path, native):
    record = copy.deepcopy(native[0])
    record["label"]["steps"][2]["completions"][0]["rating"] = -1
    record["label"]["steps"][4]["completions"][0]["rating"] = -1
    [line] = trl_lines(tmp_path, [record])
    assert line["labels"] == [True, True, False]
    assert len(line["completions"]) == 3


def test_stops_before_an_unrated_chosen_step_and_skips_empty_passes(tmp_path, native):
    record = copy.deepcopy(native[0])
    record["label"]["steps"][3]["completions"][0]["rating"] = None
    empty = copy.deepcopy(native[2])
    empty["label"]["steps"][0]["completions"][0]["rating"] = None
    lines = trl_lines(tmp_path, [record, empty])
    assert len(lines) == 1
    assert lines[0]["labels"] == [True, True, True]


def test_export_trl_command(tmp_path, example, native):
    project = make_project(name="trl command")
    source = tmp_path / "in.jsonl"
    source.write_text("".join(json.dumps(r) + "\n" for r in [example] + native))
    run_import("prm800k", source, project)
    out = tmp_path / "trl.jsonl"
    call_command("export_trl", "--project", "trl command", "--output", str(out), "--quiet", "--generation", "9")
    [line] = [json.loads(x) for x in out.read_text().splitlines()]
    assert line["labels"] == [True, True, False]
    call_command("export_trl", "--project", "trl command", "--output", str(out), "--quiet", "--generation", "9",
                 "--neutral-negative")
    assert json.loads(out.read_text())["labels"] == [False, False, False]
