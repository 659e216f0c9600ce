"""The lead dashboard API: figures, the annotator table (JSON and CSV), the drill-down; leads only."""
import collections
import csv
import io
import json

import pytest
from django.urls import reverse

from labeling.exports import ExportFilters, get_exporter
from labeling.models import Assignment, GoldRating, Rating
from labeling.quality import screening
from tests.factories import careless_team, make_annotator, make_solution, rated_pass


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


def test_the_annotator_table_carries_the_exports_labeler_id_to_join_on(clients, project, rated):
    # The PRM800K export's ``labeler`` of each pass is the id in the table's ``labeler`` column.
    exported = [json.loads(line) for line in get_exporter("prm800k")(ExportFilters(project_id=project.pk))]
    passes_by_labeler = collections.Counter(record["labeler"] for record in exported)
    url = reverse("api:project-annotators", args=[project.pk])
    table = list(csv.DictReader(io.StringIO(clients["lead"].get(url, {"format": "csv"}).content.decode())))
    assert {row["labeler"]: int(row["passes"]) for row in table} == passes_by_labeler
    ann, bob = rated
    assert {row["label"]: row["labeler"] for row in table} == {"'=ann": str(ann.uuid), "bob": str(bob.uuid)}
    rows = clients["lead"].get(url).json()["annotators"]
    assert {row["id"]: row["labeler"] for row in rows} == {ann.pk: str(ann.uuid), bob.pk: str(bob.uuid)}
    dashboard = clients["lead"].get(reverse("api:project-dashboard", args=[project.pk])).json()
    assert dashboard["labelers"] == {str(ann.pk): str(ann.uuid), str(bob.pk): str(bob.uuid)}


def test_drill_down_shows_gold_and_the_other_annotators(clients, project, rated):
    ann, bob = rated
    first = Assignment.objects.filter(annotator=ann).order_by("pk").first()
    step = Rating.objects.get(assignment=first, step__position=2).step
    GoldRating.objects.create(step=step, value=1)
    answer = clients["lead"].get(reverse("api:project-annotator-passes", args=[project.pk, ann.pk]), {"limit": 5})
    body = answer.json()
    assert body["annotator"] == {"id": ann.pk, "labeler": str(ann.uuid), "label": "=ann", "status": "active",
                                 "status_reason": ""}
    assert body["count"] == 2
    passed = next(p for p in body["passes"] if p["id"] == first.pk)
    cell = passed["steps"][2]
    assert (cell["value"], cell["gold"], cell["others"]) == (-1, 1, [{"annotator": bob.pk, "label": "bob", "value": 1}])
    assert passed["problem"] == "Find $x$." and cell["text"] == "step 2"
    url = reverse("api:project-annotator-passes", args=[project.pk, 10**9])
    assert clients["lead"].get(url).status_code == 404
    assert clients["lead"].get(reverse("api:project-annotator-passes", args=[project.pk, ann.pk]),
                               {"limit": 0}).status_code == 400


# Outlier flags and their thresholds (issue #30) ------------------------------------------------


@pytest.fixture
def careless(project):
    project.overlap = 4
    project.save()
    return careless_team(project)


def test_the_dashboard_flags_the_careless_annotator_in_words(clients, project, careless):
    eve = careless["eve"]
    url = reverse("api:project-dashboard", args=[project.pk])
    body = clients["lead"].get(url).json()
    assert set(body["flags"]) == {str(eve.pk)}
    assert {f["label"] for f in body["flags"][str(eve.pk)]} == {
        "too fast", "low gold score", "low agreement", "one-sided ratings"}
    assert body["flag_settings"] == {"flag_fast_share": 0.33, "flag_gold_margin": 0.15,
                                     "flag_agreement_margin": 0.2, "flag_distribution_margin": 0.25}
    rows = {row["id"]: row for row in body["annotators"]}
    assert rows[eve.pk]["kappa_majority"] < min(rows[careless[n].pk]["kappa_majority"] for n in ("bea", "cal", "dan"))
    assert rows[eve.pk]["kappa_majority_low"] <= rows[eve.pk]["kappa_majority"] <= rows[eve.pk]["kappa_majority_high"]

    # A new threshold shows at once, on the cached figures (flags are not cached).
    settings_url = reverse("api:project-flag-settings", args=[project.pk])
    answer = clients["lead"].patch(settings_url, {"flag_fast_share": 0, "flag_gold_margin": 0.5}, format="json")
    assert answer.status_code == 200 and answer.json()["flag_fast_share"] == 0
    body = clients["lead"].get(url).json()
    assert body["cache"]["from_cache"] is True
    assert {f["kind"] for f in body["flags"][str(eve.pk)]} == {"agreement", "one_sided"}

    table = clients["lead"].get(reverse("api:project-annotators", args=[project.pk]), {"format": "csv"})
    by_label = {r["label"]: r for r in csv.DictReader(io.StringIO(table.content.decode()))}
    assert by_label["eve"]["flags"].startswith("low agreement: κ ")
    assert "; one-sided ratings: +1 on 92% of main steps" in by_label["eve"]["flags"]
    assert by_label["bea"]["flags"] == "" and float(by_label["bea"]["kappa_majority"]) > 0.5


@pytest.mark.parametrize("field, value", [
    ("flag_fast_share", 1.5), ("flag_fast_share", -0.1), ("flag_gold_margin", 2), ("flag_agreement_margin", 2.5),
    ("flag_distribution_margin", "lots"), ("flag_gold_margin", None),
])
def test_bad_thresholds_are_400_naming_the_field(clients, project, field, value):
    url = reverse("api:project-flag-settings", args=[project.pk])
    answer = clients["lead"].patch(url, {"flag_fast_share": 0.2, field: value}, format="json")
    assert answer.status_code == 400 and field in answer.json(), answer.json()
    project.refresh_from_db()
    assert project.flag_fast_share == 0.33  # nothing stored


@pytest.mark.parametrize("role", ["annotator", "researcher", "nobody"])
def test_only_leads_set_thresholds(clients, project, role):
    url = reverse("api:project-flag-settings", args=[project.pk])
    assert clients[role].get(url).status_code == 403
    assert clients[role].patch(url, {"flag_fast_share": 0.1}, format="json").status_code == 403
    assert clients["lead"].get(url).json()["flag_agreement_margin"] == 0.2
