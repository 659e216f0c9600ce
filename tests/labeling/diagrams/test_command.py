"""``manage.py draw_diagrams``: draw a project's diagrams now, and failed ones again."""
import io

import pytest
from django.core.management import CommandError, call_command

from labeling.diagrams.blocks import diagram_hash
from labeling.models import Diagram
from tests.factories import make_project, make_solution

pytestmark = pytest.mark.django_db


def draw(*args):
    out = io.StringIO()
    call_command("draw_diagrams", *args, stdout=out)
    return out.getvalue()


def test_it_draws_a_project_imported_before_diagrams_were_drawn():
    project = make_project(name="old import")
    make_solution(project, problem="[asy]draw(unitsquare);[/asy] [asy]draw(nosuchpath);[/asy]")
    assert draw("--project", "old import").startswith(
        "old import: 2 diagrams; drew 1, 1 could not be drawn, in ")
    assert draw("--project", "old import").startswith("old import: 2 diagrams; drew 0, 0 could not be drawn")


def test_redraw_failed_tries_a_failed_diagram_again():
    # Say it failed on the time limit of a busy worker: with --redraw-failed it is drawn now.
    project = make_project(name="busy")
    make_solution(project, problem="[asy]draw(unitsquare);[/asy]")
    Diagram.objects.create(sha256=diagram_hash("draw(unitsquare);"), code="draw(unitsquare);",
                           status=Diagram.FAILED, error="asy took longer than 30 s").projects.add(project)
    assert "drew 0, 0 could not be drawn" in draw("--project", "busy")
    assert "drew 1, 0 could not be drawn" in draw("--project", "busy", "--redraw-failed")
    assert Diagram.objects.get().status == Diagram.DRAWN


def test_an_unknown_project_is_refused_by_name():
    with pytest.raises(CommandError, match="no project named 'nope'"):
        draw("--project", "nope")
