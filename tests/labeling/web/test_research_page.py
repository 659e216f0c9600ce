"""The researcher page: researchers only, linked from the home page, wired to the API."""
import pytest
from django.urls import reverse

from labeling.models import Project
from tests.factories import make_user, make_project

pytestmark = pytest.mark.django_db


@pytest.fixture
def project():
    return make_project(name="Phase 2 <b>bold</b>")


def test_researchers_get_the_page_with_its_api_urls(client, project):
    client.force_login(make_user("res", "researcher"))
    html = client.get(f"/projects/{project.pk}/research/").content.decode()
    assert "Phase 2 &lt;b&gt;bold&lt;/b&gt;" in html
    for name in ("api:project-generation-stats", "api:project-snapshots", "api:project-export",
                 "scoring:project-generations", "scoring:project-checkpoints", "scoring:project-retrain"):
        assert f'"{reverse(name, args=[project.pk])}"' in html, name
    assert 'src="/static/assets/research-' in html
    assert "csrftoken" in client.cookies  # the job buttons post with it


@pytest.mark.parametrize("roles, status", [(("annotator",), 403), (("lead",), 403), ((), 404)])
def test_others_are_refused(client, project, roles, status):
    client.force_login(make_user("someone", *roles))
    assert client.get(f"/projects/{project.pk}/research/").status_code == status


def test_home_links_researchers_only(client, project):
    link = f'href="/projects/{project.pk}/research/"'
    client.force_login(make_user("res", "researcher"))
    assert link in client.get("/").content.decode()
    client.force_login(make_user("lead", "lead"))
    assert link not in client.get("/").content.decode()


def test_unknown_project_is_404(client):
    client.force_login(make_user("res", "researcher"))
    assert client.get("/projects/999999/research/").status_code == 404
