"""The quality pages: the lead's /projects/{id}/quality/ and an annotator's gold results, who may open
them, and the links to them."""
import pytest

from tests.factories import make_project, make_solution, make_user, rated_pass

pytestmark = pytest.mark.django_db


@pytest.fixture
def project():
    return make_project(name="Quality")


def test_only_leads_open_the_quality_page(client, project):
    url = f"/projects/{project.pk}/quality/"
    for user, status in ((make_user("ann", "annotator"), 403), (make_user("res", "researcher"), 403),
                         (make_user("lead", "lead"), 200)):
        client.force_login(user)
        assert client.get(url).status_code == status, user
    html = client.get(url).content.decode()
    assert f'data-disagreements-url="/api/projects/{project.pk}/disagreements/"' in html
    assert client.get("/projects/999999/quality/").status_code == 404
    home = client.get("/").content.decode()
    assert f'href="{url}"' in home and f'href="/projects/{project.pk}/checks/"' not in home


def test_only_annotators_open_their_gold_results_linked_once_they_have_passes(client, project):
    url = f"/projects/{project.pk}/checks/"
    client.force_login(make_user("lead", "lead"))
    assert client.get(url).status_code == 403
    ann = make_user("ann", "annotator")
    client.force_login(ann)
    assert client.get(url).status_code == 200
    assert f'href="{url}"' not in client.get("/").content.decode()  # nothing submitted yet
    rated_pass(make_solution(project, steps=1), ann.annotator, [1])
    assert f'href="{url}"' in client.get("/").content.decode()
    project.is_active = False
    project.save()
    assert client.get(url).status_code == 404
