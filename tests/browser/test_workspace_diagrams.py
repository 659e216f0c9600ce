"""[asy] diagrams in the workspace: imported, drawn by the job the import queued, shown by the page.

The whole path in real Chromium: ``run_import`` (candidates) commits, its job (eager here, a
worker in production) draws the diagram with the real Asymptote, and the page asks
``/api/projects/{id}/diagrams/{sha256}.svg`` for it by the hash it computes itself
(frontend/src/diagram.js). A diagram Asymptote cannot draw is shown folded, with its code.
"""
import pytest

from labeling.diagrams.blocks import asy_blocks, diagram_hash
from labeling.imports import run_import
from labeling.models import Diagram
from tests.factories import make_project, make_user, write_jsonl

from .conftest import log_in, open_workspace, screenshot

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def import_problem(record, tmp_path):
    """A project holding one candidate solution (MATH's reference solution) of ``record``."""
    project = make_project(name=f"MATH-500 {record['unique_id']}")
    candidate = {"problem": record["problem"], "ground_truth_answer": record["answer"],
                 "steps": record["solution"].split("\n\n"), "final_answer": record["answer"], "is_correct": True}
    run_import("candidates", write_jsonl(tmp_path / "candidate.jsonl", [candidate]), project)
    return project


def by_id(asy_problems, unique_id):
    return next(r for r in asy_problems if r["unique_id"] == unique_id)


def test_an_imported_graph_below_is_drawn_in_the_problem(page, live_server, asy_problems, eager, tmp_path):
    # "The results of a cross-country team's training run are graphed below": unanswerable
    # from the Asymptote code alone.
    record = by_id(asy_problems, "test/algebra/1349.json")
    project = import_problem(record, tmp_path)
    code = asy_blocks(record["problem"])[0]
    assert project.diagrams.get().status == Diagram.DRAWN  # the import's job drew it
    make_user("ann", "annotator")
    log_in(page, live_server, "ann", next_path=None)
    open_workspace(page, live_server, project)
    image = page.locator(".ws-problem figure.diagram img")
    page.wait_for_function("""() => { const img = document.querySelector('.ws-problem figure.diagram img');
                                      return img && img.complete && img.naturalWidth > 0; }""")

    assert image.get_attribute("src") == f"/api/projects/{project.pk}/diagrams/{diagram_hash(code)}.svg"
    box = image.bounding_box()
    assert box["width"] > 100 and box["height"] > 70  # drawn at its size, not a few points
    assert page.locator(".ws-problem .diagram-code").count() == 0
    assert "[asy]" not in page.locator(".ws-problem").text_content()
    screenshot(page, "workspace-asy-graph-drawn")


def test_a_diagram_that_cannot_be_drawn_shows_its_code_folded(page, live_server, asy_problems, eager, tmp_path):
    # It imports TrigMacros, a module of the MATH authors' own that no Asymptote ships.
    record = by_id(asy_problems, "test/precalculus/1199.json")
    project = import_problem(record, tmp_path)
    code = asy_blocks(record["problem"])[0]
    failed = project.diagrams.get()
    assert failed.status == Diagram.FAILED and "TrigMacros" in failed.error
    make_user("ann", "annotator")
    log_in(page, live_server, "ann", next_path=None)
    open_workspace(page, live_server, project)
    fold = page.locator(".ws-problem figure.diagram-failed details.diagram-code")
    fold.wait_for()

    assert fold.locator("summary").text_content() == "diagram could not be drawn"
    assert not fold.evaluate("details => details.open")  # folded until asked
    assert page.locator(".ws-problem figure.diagram img").count() == 0
    fold.locator("summary").click()
    assert fold.locator("pre.asy code").text_content() == code  # the code as text, exactly
    screenshot(page, "workspace-asy-diagram-failed")
