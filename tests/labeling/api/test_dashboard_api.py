"""The lead dashboard API: figures, the annotator table (JSON and CSV), the drill-down; leads only."""
import csv
import io

import pytest
from django.urls import reverse

from labeling.models import Assignment, GoldRating, Rating
from labeling.quality import screening
from tests.factories import make_annotator, make_solution, rated_pass


@pytest.fixture
def rated(project):
    project.overlap = 2
    project.save()
    ann, bob = make_annotator("=ann"), make_annotator("bob")
    for values in ([1, 1, -1], [1, 0, 1]):
        solution = make_solution(project, steps=["step 0", "step 1", "step 2"], generation=0)
        rated_pass(solution, ann, values)
        rated_pass(solution, bob, [1, 1, 1])
    return ann, bob


def test_leads_get_the_dashboard(clients, project, rated):
    answer = clients["lead"].get(reverse("api:project-dashboard", args=[project.pk]))
    assert answer.status_code == 200
    body = answer.json()
    assert body["ratings"] == 12
    assert {"alpha", "over_time", "by_generation", "first_error"} <= set(body["agreement"])
    assert {row["label"] for row in body["annotators"]} == {"=ann", "bob"}
    assert body["cache"]["from_cache"] is False and body["statuses"] == {}
    again = clients["lead"].get(reverse("api:project-dashboard", args=[project.pk])).json()
    assert again["cache"]["from_cache"] is True


@pytest.mark.parametrize("role", ["annotator", "researcher", "nobody"])
@pytest.mark.parametrize("name", ["api:project-dashboard", "api:project-annotators"])
def test_others_are_refused(clients, project, rated, role, name):
    assert clients[role].get(reverse(name, args=[project.pk])).status_code == 403
    assert clients["anonymous"].get(reverse(name, args=[project.pk])).status_code in (401, 403)


def test_annotators_cannot_drill_down(clients, project, rated):
    ann, _ = rated
    url = reverse("api:project-annotator-passes", args=[project.pk, ann.pk])
    assert clients["annotator"].get(url).status_code == 403
    assert clients["lead"].get(url).status_code == 200


def test_a_pause_shows_at_once_without_a_submit(clients, project, rated):
    _, bob = rated
    url = reverse("api:project-dashboard", args=[project.pk])
    clients["lead"].get(url)
    screening.pause(bob, project, reason="rolling gold score 0.40 < 0.70 over last 5 gold passes")
    body = clients["lead"].get(url).json()
    assert body["cache"]["from_cache"] is True
    assert body["statuses"] == {str(bob.pk): {"status": "paused",
                                              "status_reason": "rolling gold score 0.40 < 0.70 over last 5 gold passes"}}


def test_bad_filters_are_400_naming_the_field(clients, project, rated):
    url = reverse("api:project-dashboard", args=[project.pk])
    answer = clients["lead"].get(url, {"since": "2025-03-04T00:00:00Z", "until": "2025-03-03T00:00:00Z"})
    assert answer.status_code == 400 and "until" in answer.json()
    assert "generation" in clients["lead"].get(url, {"generation": "x"}).json()
    assert clients["lead"].get(url, {"generation": 0}).json()["filters"]["generation"] == 0


def test_annotator_table_as_json_and_csv(clients, project, rated):
    ann, bob = rated
    screening.pause(bob, project, reason="paused by a lead")
    url = reverse("api:project-annotators", args=[project.pk])
    rows = {row["id"]: row for row in clients["lead"].get(url).json()["annotators"]}
    assert rows[bob.pk]["share_plus"] == 1.0 and rows[bob.pk]["status"] == "paused"
    assert rows[ann.pk]["status"] == "active" and rows[ann.pk]["passes"] == 2
    answer = clients["lead"].get(url, {"format": "csv"})
    assert answer.status_code == 200 and answer["Content-Type"].startswith("text/csv")
    table = list(csv.DictReader(io.StringIO(answer.content.decode())))
    by_id = {int(r["id"]): r for r in table}
    assert by_id[bob.pk]["status_reason"] == "paused by a lead" and by_id[bob.pk]["share_plus"] == "1.0"
    assert by_id[ann.pk]["label"] == "'=ann"  # not a formula when opened in a spreadsheet
    assert clients["lead"].get(url, {"format": "xml"}).status_code == 400


def test_drill_down_shows_gold_and_the_other_annotators(clients, project, rated):
    ann, bob = rated
    first = Assignment.objects.filter(annotator=ann).order_by("pk").first()
    step = Rating.objects.get(assignment=first, step__position=2).step
    GoldRating.objects.create(step=step, value=1)
    answer = clients["lead"].get(reverse("api:project-annotator-passes", args=[project.pk, ann.pk]), {"limit": 5})
    body = answer.json()
    assert body["annotator"] == {"id": ann.pk, "label": "=ann", "status": "active", "status_reason": ""}
    assert body["count"] == 2
    passed = next(p for p in body["passes"] if p["id"] == first.pk)
    cell = passed["steps"][2]
    assert (cell["value"], cell["gold"], cell["others"]) == (-1, 1, [{"annotator": bob.pk, "label": "bob", "value": 1}])
    assert passed["problem"] == "Find $x$." and cell["text"] == "step 2"
    url = reverse("api:project-annotator-passes", args=[project.pk, 10**9])
    assert clients["lead"].get(url).status_code == 404
    assert clients["lead"].get(reverse("api:project-annotator-passes", args=[project.pk, ann.pk]),
                               {"limit": 0}).status_code == 400
