"""GET /api/projects/{id}/diagrams/{sha256}.svg: who may fetch a drawing, and how it is sent."""
import pytest
from django.test import Client

from labeling.diagrams.blocks import diagram_hash
from labeling.models import Diagram, Project
from tests.factories import make_project

SVG = '<svg xmlns="http://www.w3.org/2000/svg" width="10pt" height="10pt"><path d="M0 0L1 1"></path></svg>'


def diagram(code, *projects, status=Diagram.DRAWN):
    row = Diagram.objects.create(sha256=diagram_hash(code), code=code, status=status,
                                 svg=SVG if status == Diagram.DRAWN else "")
    row.projects.set(projects)
    return row


def url(project, code_or_hash):
    name = code_or_hash if len(code_or_hash) == 64 else diagram_hash(code_or_hash)
    return f"/api/projects/{project.pk}/diagrams/{name}.svg"


def test_a_drawn_diagram_is_svg_that_runs_and_loads_nothing(clients, project):
    diagram("draw(unitsquare);", project)
    answer = clients["annotator"].get(url(project, "draw(unitsquare);"))
    assert answer.status_code == 200
    assert answer["Content-Type"] == "image/svg+xml; charset=utf-8"
    assert answer.content.decode() == SVG
    assert answer["Content-Security-Policy"] == "default-src 'none'; style-src 'unsafe-inline'; sandbox"
    assert answer["X-Content-Type-Options"] == "nosniff"
    assert answer["Cache-Control"] == "private, max-age=31536000, immutable"
    assert answer["ETag"] == f'"{diagram_hash("draw(unitsquare);")}"'


@pytest.mark.parametrize("role", ["annotator", "lead", "researcher"])
def test_every_role_that_sees_the_project_gets_its_diagrams(clients, project, role):
    diagram("dot((0,0));", project)
    assert clients[role].get(url(project, "dot((0,0));")).status_code == 200


def test_a_session_cookie_is_enough_as_for_an_img(users, project):
    diagram("dot((0,0));", project)
    browser = Client()
    browser.force_login(users["annotator"])
    assert browser.get(url(project, "dot((0,0));")).status_code == 200


def test_anonymous_and_roleless_users_are_refused(clients, project):
    diagram("dot((0,0));", project)
    assert clients["anonymous"].get(url(project, "dot((0,0));")).status_code in (401, 403)
    assert clients["nobody"].get(url(project, "dot((0,0));")).status_code == 403


def test_an_annotator_gets_nothing_of_a_paused_project(clients, project):
    diagram("dot((0,0));", project)
    Project.objects.filter(pk=project.pk).update(is_active=False)
    assert clients["annotator"].get(url(project, "dot((0,0));")).status_code == 404
    assert clients["lead"].get(url(project, "dot((0,0));")).status_code == 200


def test_a_diagram_of_another_project_is_not_found_through_this_one(clients, project):
    other = make_project(name="other")
    diagram("dot((0,0));", other)
    assert clients["annotator"].get(url(project, "dot((0,0));")).status_code == 404
    assert clients["annotator"].get(url(other, "dot((0,0));")).status_code == 200


def test_pending_is_202_to_ask_again_failed_and_unknown_are_404(clients, project):
    diagram("dot((0,0));", project, status=Diagram.PENDING)
    diagram("draw(nosuchpath);", project, status=Diagram.FAILED)
    pending = clients["annotator"].get(url(project, "dot((0,0));"))
    assert pending.status_code == 202 and pending["Retry-After"] == "5"
    assert pending["Cache-Control"] == "no-store" and pending.content == b""
    assert clients["annotator"].get(url(project, "draw(nosuchpath);")).status_code == 404
    assert clients["annotator"].get(url(project, "never imported")).status_code == 404


@pytest.mark.parametrize("name", ["ABC", "0" * 63, "F" * 64, "g" * 64])
def test_a_name_that_is_not_a_sha256_is_404(clients, project, name):
    assert clients["annotator"].get(f"/api/projects/{project.pk}/diagrams/{name}.svg").status_code == 404
