"""The TRL export and the PRM core's reader give the same passes the same labels.

Both take the rule from ``formats.prm800k``; this holds them to it end to end: PRM800K records
are imported, exported as TRL lines and as PRM800K, and the exported file (what a retrain
trains on) and the original records are read by ``scoring.prm.data.read_prm800k``. Every
trajectory must be the same steps with the same labels, whichever neutral policy.
"""
import copy
import json
import uuid

import pytest

from labeling.data import open_text
from labeling.exports import ExportFilters, get_exporter
from labeling.imports import run_import
from scoring.prm.data import read_prm800k
from tests.factories import make_project, write_jsonl

pytestmark = pytest.mark.django_db


def edge_cases(example, native):
    """Real records changed where the two used to part: each a new pass (a labeler of its own)."""

    def changed(record, change, finish_reason=None):
        record = copy.deepcopy(record)
        record["labeler"] = str(uuid.uuid4())
        change(record["label"]["steps"])
        if finish_reason:
            record["label"]["finish_reason"] = finish_reason
        return record

    def set_rating(position, index, rating):
        return lambda steps: steps[position]["completions"][index].update(rating=rating)

    def no_own_step(steps):
        steps[1]["human_completion"] = None  # phase 1: nothing continues after the rated -1s

    return [
        changed(native[0], set_rating(3, 0, None)),  # a chosen step left unrated, rated steps after it
        changed(native[0], lambda steps: steps[1]["human_completion"].update(rating=0)),  # an own step rated 0
        changed(native[0], lambda steps: steps[1]["human_completion"].update(rating=-1)),  # ... and rated -1
        changed(native[0], no_own_step, "give_up"),
        changed(native[0], set_rating(2, 0, -1)),  # a chosen -1 in phase 1: ends there
        changed(example, set_rating(2, 0, None), "give_up"),  # phase 2, given up on an unrated step
        changed(example, set_rating(1, 0, None), "give_up"),  # phase 2, an unrated chosen step
    ]


def trl_rows(project, fmt):
    return [(r["prompt"], r["completions"], r["labels"])
            for r in map(json.loads, get_exporter(fmt)(ExportFilters(project_id=project.id)))]


def reader_rows(path, neutral):
    return [(e.problem, e.steps, [bool(label) for label in e.labels])
            for e in read_prm800k(path, neutral=neutral, alternatives=False)]


def test_the_export_and_the_reader_label_every_pass_alike(tmp_path, data_dir, example, native):
    with open_text(data_dir / "prm800k" / "phase1_test.reconstructed.jsonl.gz") as f:
        phase1_test = [json.loads(line) for line in f]
    records = phase1_test + native + [example] + edge_cases(example, native)
    source = write_jsonl(tmp_path / "passes.jsonl", records)
    project = make_project(name="trl and reader")
    assert run_import("prm800k", source, project).created == len(records)
    exported = tmp_path / "export.jsonl"
    exported.write_text("".join(line + "\n" for line in get_exporter("prm800k")(ExportFilters(project_id=project.id))))

    for fmt, neutral in (("trl", "positive"), ("trl_neutral_negative", "negative")):
        trl = trl_rows(project, fmt)
        assert len(trl) > 100
        # the export a retrain reads, in the same (assignment) order
        assert reader_rows(exported, neutral) == trl, fmt
        # the records as they came: the same trajectories, in file order
        assert sorted(reader_rows(source, neutral)) == sorted(trl), fmt
