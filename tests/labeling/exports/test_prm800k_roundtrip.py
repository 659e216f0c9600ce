"""PRM800K import then export gives back every real record, key order included."""
import json

import pytest

from labeling.data import open_text
from labeling.exports import ExportFilters, get_exporter
from labeling.imports import run_import
from labeling.models import Assignment, Problem, Project, Rating, Solution, Step
from tests.factories import make_project

FILES = [
    "readme_example_record.json",
    "native_records.jsonl.gz",
    "phase1_test.reconstructed.jsonl.gz",
    "phase1_train.reconstructed.jsonl.gz",
]


def source_lines(data_dir):
    lines = []
    for name in FILES:
        with open_text(data_dir / "prm800k" / name) as f:
            lines.extend(line.rstrip("\n") for line in f if line.strip())
    return lines


def counts():
    return {m.__name__: m.objects.count() for m in (Problem, Solution, Step, Assignment, Rating)}


@pytest.fixture
def imported(db, data_dir):
    project = make_project(name="prm800k")
    results = [run_import("prm800k", data_dir / "prm800k" / name, project) for name in FILES]
    return project, results


@pytest.mark.slow
def test_every_record_comes_back_exactly(imported, data_dir):
    project, results = imported
    sources = source_lines(data_dir)
    assert sum(r.created for r in results) == len(sources) == 1010
    exported = list(get_exporter("prm800k")(ExportFilters(project_id=project.id)))
    assert len(exported) == len(sources)
    for line, (source, out) in enumerate(zip(sources, exported), start=1):
        source_obj, out_obj = json.loads(source), json.loads(out)
        assert out_obj == source_obj, f"record {line} differs"
        # Same objects with the same key order everywhere: the serialisations agree.
        assert json.dumps(out_obj, ensure_ascii=False) == json.dumps(source_obj, ensure_ascii=False)
        # The data files are written as json.dumps(ensure_ascii=False) writes: byte for byte too.
        assert out == source


@pytest.mark.slow
def test_reimport_adds_nothing(imported, data_dir):
    project, _ = imported
    before = counts()
    again = [run_import("prm800k", data_dir / "prm800k" / name, project) for name in FILES]
    assert counts() == before
    assert sum(r.skipped for r in again) == 1010
    assert sum(r.created for r in again) == 0


@pytest.mark.slow
def test_repeated_texts_at_a_position_keep_their_own_ratings(imported):
    # 1,899 positions repeat a completion text; each listed completion must still get its own
    # rating row, so the numbers match the source exactly.
    project, _ = imported
    assert Rating.objects.filter(assignment__project=project).count() == 54907 + 2320
    assert Step.objects.filter(solution__project=project, source="human").count() == 2320
