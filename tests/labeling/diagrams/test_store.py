"""The Diagram rows of a project and drawing them, each code once (real asy, real PostgreSQL)."""
import pytest

from labeling.diagrams import store
from labeling.diagrams.blocks import diagram_hash
from labeling.models import Diagram
from tests.factories import make_project, make_solution

pytestmark = pytest.mark.django_db

SQUARE = "draw(unitsquare);"
BROKEN = "draw(nosuchpath);"


def test_collect_finds_the_diagrams_of_problems_and_steps_once():
    project = make_project()
    make_solution(project, problem=f"A square [asy]{SQUARE}[/asy]. Again: [asy]{SQUARE}[/asy]",
                  steps=["no diagram", f"see [asy]{BROKEN}[/asy]"])
    make_solution(make_project(), problem="[asy]dot((0,0));[/asy]")  # another project's
    assert store.collect(project) == 2
    assert set(project.diagrams.values_list("sha256", "status")) == {
        (diagram_hash(SQUARE), Diagram.PENDING), (diagram_hash(BROKEN), Diagram.PENDING),
    }
    assert store.collect(project) == 2 and Diagram.objects.count() == 2  # again: nothing new


def test_drawing_stores_the_sanitised_svg_or_the_error():
    project = make_project()
    make_solution(project, problem=f"[asy]{SQUARE}[/asy] and [asy]{BROKEN}[/asy]")
    store.collect(project)
    assert store.draw_pending(project) == (1, 1)
    square = Diagram.objects.get(sha256=diagram_hash(SQUARE))
    assert square.status == Diagram.DRAWN and square.svg.startswith('<svg xmlns="http://www.w3.org/2000/svg"')
    assert square.error == "" and square.draw_seconds > 0 and square.drawn_at is not None
    broken = Diagram.objects.get(sha256=diagram_hash(BROKEN))
    assert broken.status == Diagram.FAILED and broken.svg == ""
    assert "no matching variable 'nosuchpath'" in broken.error


def test_a_code_is_drawn_once_across_projects():
    first, second = make_project(), make_project()
    make_solution(first, problem=f"[asy]{SQUARE}[/asy]")
    make_solution(second, problem=f"Same figure: [asy]{SQUARE}[/asy]")
    store.collect(first)
    assert store.draw_pending(first) == (1, 0)
    drawn = Diagram.objects.get()
    store.collect(second)
    assert store.draw_pending(second) == (0, 0)  # already drawn: nothing to do
    assert Diagram.objects.get().drawn_at == drawn.drawn_at
    assert set(drawn.projects.all()) == {first, second}


def test_without_asymptote_the_diagrams_stay_pending_not_failed(monkeypatch, tmp_path):
    project = make_project()
    make_solution(project, problem=f"[asy]{SQUARE}[/asy]")
    store.collect(project)
    monkeypatch.setenv("PATH", str(tmp_path))  # a machine where make asymptote never ran
    assert store.draw_pending(project) == (0, 0)
    assert Diagram.objects.get().status == Diagram.PENDING
    monkeypatch.undo()
    assert store.draw_pending(project) == (1, 0)  # installed: the next run draws it
