"""An import queues the drawing of its diagrams once it commits (eager Celery, real asy)."""
import pytest

from formats.errors import FormatError
from labeling.diagrams.blocks import asy_blocks, diagram_hash
from labeling.imports import run_import
from labeling.models import Diagram
from tests.factories import make_project, write_jsonl

pytestmark = pytest.mark.django_db


def test_an_import_draws_its_diagrams_after_it_commits(asy_problems, eager, tmp_path,
                                                        django_capture_on_commit_callbacks):
    records = asy_problems[:3]
    project = make_project()
    with django_capture_on_commit_callbacks(execute=False) as queued:
        run_import("problems", write_jsonl(tmp_path / "math.jsonl", records), project)
    assert len(queued) == 1 and not Diagram.objects.exists()  # nothing drawn inside the import
    queued[0]()  # the commit: the job runs (eagerly here, in a worker in production)
    hashes = {diagram_hash(asy_blocks(r["problem"])[0]) for r in records}
    assert set(project.diagrams.values_list("sha256", flat=True)) == hashes
    assert set(project.diagrams.values_list("status", flat=True)) == {Diagram.DRAWN}


def test_a_failed_import_queues_nothing(asy_problems, tmp_path, django_capture_on_commit_callbacks):
    bad = [asy_problems[0], {"problem": ""}]
    with django_capture_on_commit_callbacks(execute=False) as queued, pytest.raises(FormatError):
        run_import("problems", write_jsonl(tmp_path / "bad.jsonl", bad), make_project())
    assert queued == []
