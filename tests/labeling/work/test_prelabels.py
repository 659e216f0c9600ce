"""Machine pre-labels in the workspace (labeling/work/prelabels.py): the project's policy taken at the
hand-out, what the payload shows, traps on gold passes and who accepts them, the dashboard's
pre-label figures and the lead's settings (issue #31, items 2 and 3)."""
import datetime

import pytest
from django.urls import reverse
from django.utils import timezone

from labeling.models import Assignment, AuditEntry, LabelSource, Project, StepLabel
from labeling.stats import dashboard
from labeling.stats import prelabels as prelabel_stats
from labeling.work import prelabels, submission
from tests.factories import (
    client_for, machine_labels, make_annotator, make_gold, make_project, make_solution, make_user, rated_pass,
    score_gold, token_client,
)

pytestmark = pytest.mark.django_db


def judge_source(project, *solutions_and_values, reason="because"):
    source = None
    for solution, values in solutions_and_values:
        source = machine_labels(solution, values, kind=LabelSource.JUDGE, name="judge v1")
    StepLabel.objects.filter(source=source).update(reason=reason,
                                                   created_at=timezone.now() - datetime.timedelta(hours=1))
    return source


def set_policy(project, mode, source, trap_rate=0.0):
    Project.objects.filter(pk=project.pk).update(prelabel_mode=mode, prelabel_source=source, trap_rate=trap_rate)
    project.refresh_from_db()


def next_payload(client, project):
    answer = client.post(reverse("api:project-next", args=[project.pk]))
    assert answer.status_code == 201, answer.content
    return answer.json()


@pytest.fixture
def worker():
    user = make_user("pam", "annotator")
    return user, token_client(user)


def test_hidden_is_the_default_and_shows_nothing(worker):
    project = make_project(name="hidden")
    solution = make_solution(project, steps=2)
    judge_source(project, (solution, [1, -1]))
    payload = next_payload(worker[1], project)
    assert payload["prelabel_mode"] == "hidden" and payload["prelabels"] == []
    # A policy without a source shows nothing either.
    set_policy(project, "suggest", None)
    assert Assignment.objects.get(pk=payload["id"]).prelabel_mode == "hidden"


def test_suggestions_show_the_sources_labels_made_before_the_hand_out(worker):
    project = make_project(name="suggest")
    solution = make_solution(project, steps=3)
    source = judge_source(project, (solution, [1, None, -1]), reason="the sum is wrong")
    set_policy(project, "suggest", source)
    payload = next_payload(worker[1], project)
    assert payload["prelabel_mode"] == "suggest"
    assert payload["prelabels"] == [
        {"position": 0, "alternative": 0, "value": 1, "reason": "the sum is wrong"},
        {"position": 2, "alternative": 0, "value": -1, "reason": "the sum is wrong"},  # none where unparseable
    ]
    # A label the source writes after the hand-out never appears in this pass, even on a reload.
    StepLabel.objects.filter(source=source, step__position=1).update(value=0, status=StepLabel.OK,
                                                                      created_at=timezone.now())
    again = worker[1].get(reverse("api:assignment-detail", args=[payload["id"]])).json()
    assert again["prelabels"] == payload["prelabels"]
    # The policy is the pass's, from its hand-out: changing the project's leaves it alone.
    set_policy(project, "hidden", None)
    assert worker[1].get(reverse("api:assignment-detail", args=[payload["id"]])).json()["prelabel_mode"] == "suggest"


def test_a_trap_flips_one_gold_step_the_same_way_on_every_reload_and_hides_reasons(worker):
    project = make_project(name="traps", quality_control_rate=1.0)
    item = make_gold(project, [1, 1, 0, -1])
    ordinary = make_solution(project, steps=4)
    source = judge_source(project, (item, [1, 1, 0, -1]), (ordinary, [1, 1, 0, -1]))
    set_policy(project, "verify", source, trap_rate=1.0)
    payload = next_payload(worker[1], project)
    assignment = Assignment.objects.get(pk=payload["id"])
    assert assignment.is_quality_control and assignment.prelabel_trap
    shown = {p["position"]: p["value"] for p in payload["prelabels"]}
    truth = {0: 1, 1: 1, 2: 0, 3: -1}
    flipped = [p for p in truth if shown[p] != truth[p]]
    assert len(flipped) == 1 and shown[flipped[0]] == (-1 if truth[flipped[0]] >= 0 else 1)
    assert {p["reason"] for p in payload["prelabels"]} == {""}  # no reason while traps are set
    for _ in range(2):
        again = worker[1].get(reverse("api:assignment-detail", args=[payload["id"]])).json()
        assert again["prelabels"] == payload["prelabels"]
    # An ordinary pass is never trapped, and its payload has the same keys.
    Project.objects.filter(pk=project.pk).update(quality_control_rate=0)
    other = make_user("quinn", "annotator")
    plain = next_payload(token_client(other), project)
    plain_assignment = Assignment.objects.get(pk=plain["id"])
    assert not plain_assignment.is_quality_control and not plain_assignment.prelabel_trap
    assert {p["position"]: p["value"] for p in plain["prelabels"]} == truth
    assert set(plain) == set(payload) and [set(p) for p in plain["prelabels"]] == [set(p) for p in payload["prelabels"]]


def test_accepting_a_trap_is_counted_and_is_a_gold_miss(worker):
    project = make_project(name="rubber stamps", quality_control_rate=1.0, gold_min_passes=1)
    item = make_gold(project, [1, 1, 1])
    make_solution(project, steps=3)  # gold is served only where ordinary work is open
    source = judge_source(project, (item, [1, 1, 1]))
    set_policy(project, "verify", source, trap_rate=1.0)
    stamper, careful = make_annotator("stamper"), make_annotator("careful")
    for who, accept in ((stamper, True), (careful, False)):
        assignment, shown = prelabels_of(who, project)
        values = [p["value"] if accept else 1 for p in sorted(shown, key=lambda p: p["position"])]
        if -1 in values:  # phase 2: a -1 ends the pass
            values = values[:values.index(-1) + 1]
        submission.submit(assignment, finish_reason="found_error" if -1 in values else "solution",
                          ratings=[{"position": i, "value": v} for i, v in enumerate(values)])
    counts = prelabels.wrong_prelabels(project)
    assert counts == {stamper.pk: (1, 1), careful.pk: (1, 0)}
    score_gold()
    scores = dashboard.gold_scores(project)
    assert scores[careful.pk]["score"] == 1.0 and scores[stamper.pk]["score"] < 1.0
    rows = {r["id"]: r for r in dashboard.build_dashboard(project, replicates=0)["annotators"]}
    assert (rows[stamper.pk]["wrong_prelabels"], rows[stamper.pk]["wrong_prelabels_accepted"]) == (1, 1)
    assert (rows[careful.pk]["wrong_prelabels"], rows[careful.pk]["wrong_prelabels_accepted"]) == (1, 0)


def prelabels_of(annotator, project):
    from labeling.api.work_serializers import present
    from labeling.work import queue

    assignment = queue.next_assignment(annotator, project)
    return assignment, present(assignment)["prelabels"]


def test_time_and_agreement_are_compared_with_and_without_pre_labels():
    project = make_project(name="modes")
    people = [make_annotator(f"p{i}") for i in range(4)]
    for n in range(3):
        solution = make_solution(project, steps=2)
        for i, who in enumerate(people):
            shown = i % 2 == 1
            a = rated_pass(solution, who, [1, 1 if (shown or i == 0) else -1], seconds=20 if shown else 60)
            Assignment.objects.filter(pk=a.pk).update(prelabel_mode="suggest" if shown else "hidden")
    figures = {f["mode"]: f for f in prelabel_stats.by_mode(project)}
    assert set(figures) == {"hidden", "suggest"}
    assert figures["suggest"]["passes"] == figures["hidden"]["passes"] == 6
    assert figures["suggest"]["seconds_per_step"] == 10.0 and figures["hidden"]["seconds_per_step"] == 30.0
    # On step 2 the others' majority is +1 for everyone but p2's -1 (p0 and the two shown say +1).
    assert figures["suggest"]["agreement"] == 1.0 and figures["hidden"]["agreement"] == pytest.approx(9 / 12)
    assert prelabel_stats.by_mode(make_project(name="never shown")) == []
    assert dashboard.build_dashboard(project, replicates=0)["prelabels"] == prelabel_stats.by_mode(project)


def test_the_lead_sets_the_policy_within_the_project_and_it_is_logged():
    project, other = make_project(name="policy"), make_project(name="someone else's")
    ours = LabelSource.objects.create(project=project, kind=LabelSource.JUDGE, name="judge")
    theirs = LabelSource.objects.create(project=other, kind=LabelSource.JUDGE, name="judge")
    lead = make_user("lee", "lead")
    client = client_for(lead)
    url = reverse("api:project-prelabel-settings", args=[project.pk])
    assert client.get(url).json() == {"prelabel_mode": "hidden", "prelabel_source": None, "trap_rate": 0.0}
    changed = client.patch(url, {"prelabel_mode": "verify", "prelabel_source": ours.pk, "trap_rate": 0.2},
                           content_type="application/json")
    assert changed.status_code == 200 and changed.json()["prelabel_source"] == ours.pk
    project.refresh_from_db()
    assert (project.prelabel_mode, project.prelabel_source_id, project.trap_rate) == ("verify", ours.pk, 0.2)
    assert AuditEntry.objects.filter(project=project, action="settings.change").exists()
    for body, field in [({"prelabel_source": theirs.pk}, "prelabel_source"), ({"trap_rate": 1.5}, "trap_rate"),
                        ({"prelabel_mode": "always"}, "prelabel_mode")]:
        refused = client.patch(url, body, content_type="application/json")
        assert refused.status_code == 400 and field in refused.json(), (body, refused.json())
