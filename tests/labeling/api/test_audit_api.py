"""The audit log (labeling/audit/, labeling/api/audit.py): each lead and researcher action, done
through its own API, leaves one entry (who, the action, what before and after, why), in the
action's transaction; the log is filtered, paged and downloaded as CSV by the project's leads
and researchers only. And the reports inbox: give-up and bad-problem passes, resolved with a note.
"""
import csv
import datetime
import io
import json

import pytest
from django.db import transaction
from django.test import TestCase
from django.urls import reverse
from rest_framework.test import APIClient

from labeling import audit
from labeling.models import AnnotatorProjectStatus, AuditEntry, Membership, ReportResolution
from labeling.quality import proposals
from scoring.models import Checkpoint
from tests.factories import make_annotator, make_gold, make_solution, make_user, rated_pass, submit, take

pytestmark = pytest.mark.django_db


@pytest.fixture
def stage(project, users, settings, tmp_path, export_dir):
    """A gold item, a solution rated by three annotators (who disagree on step 2) with a pending
    proposal, a give-up and a bad-problem report, and a rejected checkpoint."""
    settings.STEPMARK_IMPORT_DIR = tmp_path / "imports"
    item = make_gold(project, [1, 1, -1])
    shared = make_solution(project, steps=2)
    project.overlap = 3
    project.save()
    people = [make_annotator() for _ in range(3)]
    for n, (ann, values) in enumerate(zip(people, ([1, 1], [1, -1], [1, -1]))):
        submit(take(ann, project, n), values)
    proposal = proposals.propose_gold_from_consensus(shared)
    reports = []
    for reason, note in (("give_up", "too long for me"), ("bad_problem", "the statement is cut off")):
        done = rated_pass(make_solution(project, steps=1), people[0], [None])
        done.finish_reason, done.finish_note = reason, note
        done.save()
        reports.append(done)
    ordinary = rated_pass(make_solution(project, steps=1), people[1], [1])
    checkpoint = Checkpoint.objects.create(project=project, status=Checkpoint.REJECTED, layout="token-classifier")
    AuditEntry.objects.all().delete()  # what the setup logged (the proposal) is not the test's
    return {"item": item, "shared": shared, "people": people, "proposal": proposal, "reports": reports,
            "ordinary": ordinary, "checkpoint": checkpoint, "newbie": make_user("newbie", projects=[])}


def paused(project, stage, clients):
    return clients["lead"].post(reverse("api:project-annotator-pause", args=[project.pk, stage["people"][0].pk]),
                                {"reason": "rated 40 steps in a minute"}, format="json")


def upload(project, clients):
    file = io.BytesIO(b'{"problem": "1+1?", "completion": "2"}\n')
    file.name = "outputs.jsonl"
    with TestCase.captureOnCommitCallbacks(execute=False):  # queued, not run: the log is of the request
        return clients["researcher"].post(reverse("api:project-import", args=[project.pk]),
                                          {"file": file, "format": "completions"}, format="multipart")


# action -> (who does it, how through the API: (project, stage, clients) -> response, what the entry holds)
ACTIONS = {
    audit.PAUSE: ("lead", paused, lambda e, s: (
        e.before == {"state": None, "reason": ""}
        and e.after == {"state": "paused", "reason": "rated 40 steps in a minute"}
        and e.reason == "rated 40 steps in a minute" and e.target.startswith(f"annotator {s['people'][0].pk}"))),
    # The pause's reason outlives the resume that replaces it in the standing.
    audit.RESUME: ("lead", lambda p, s, c: (paused(p, s, c), c["lead"].post(
        reverse("api:project-annotator-resume", args=[p.pk, s["people"][0].pk]), {"reason": "talked it over"},
        format="json"))[1], lambda e, s: (
        e.before == {"state": "paused", "reason": "rated 40 steps in a minute"}
        and e.after == {"state": "active", "reason": "talked it over"}
        and e.reason == "talked it over")),
    audit.RULING: ("lead", lambda p, s, c: c["lead"].put(
        reverse("api:solution-consensus", args=[s["shared"].pk]),
        {"ratings": [{"position": 1, "value": 0}], "note": "both readings hold"}, format="json"),
        lambda e, s: e.before == {"1.0": None} and e.after == {"1.0": 0} and e.reason == "both readings hold"),
    audit.RULING_UNDO: ("lead", lambda p, s, c: (c["lead"].put(
        reverse("api:solution-consensus", args=[s["shared"].pk]), {"ratings": [{"position": 1, "value": 0}]},
        format="json"), c["lead"].put(reverse("api:solution-consensus", args=[s["shared"].pk]),
                                      {"ratings": [{"position": 1, "value": None}], "note": "my mistake"},
                                      format="json"))[1],
        lambda e, s: e.before == {"1.0": 0} and e.after == {"1.0": None} and e.reason == "my mistake"),
    audit.GOLD_MADE: ("lead", lambda p, s, c: c["lead"].put(
        reverse("api:solution-gold", args=[s["shared"].pk]),
        {"ratings": [{"position": 0, "value": 1}, {"position": 1, "value": -1}], "reason": "clear case"},
        format="json"), lambda e, s: e.before is None and e.after == {
            "ratings": {"0.0": 1, "1.0": -1}, "is_screening": False} and e.reason == "clear case"),
    audit.GOLD_EDITED: ("lead", lambda p, s, c: c["lead"].put(
        reverse("api:solution-gold", args=[s["item"].pk]), {"ratings": [{"position": 0, "value": 0}]},
        format="json"), lambda e, s: e.before["ratings"] == {"0.0": 1, "1.0": 1, "2.0": -1}
        and e.after["ratings"] == {"0.0": 0}),
    audit.GOLD_RETIRED: ("lead", lambda p, s, c: c["lead"].delete(reverse("api:solution-gold", args=[s["item"].pk])),
                         lambda e, s: e.before["ratings"] == {"0.0": 1, "1.0": 1, "2.0": -1} and e.after is None),
    audit.GOLD_PROPOSED: ("lead", lambda p, s, c: c["lead"].post(
        reverse("api:solution-gold-propose", args=[s["shared"].pk])),
        lambda e, s: e.after["proposal"] == s["proposal"].pk and e.after["votes"] == 3),
    audit.PROPOSAL_REJECTED: ("lead", lambda p, s, c: c["lead"].post(
        reverse("api:gold-proposal-reject", args=[s["proposal"].pk])),
        lambda e, s: e.before["state"] == "pending" and e.after["state"] == "rejected"),
    audit.SETTINGS: ("lead", lambda p, s, c: c["lead"].patch(
        reverse("api:project-quality-settings", args=[p.pk]), {"gold_threshold": 0.75, "gold_window": 20},
        format="json"), lambda e, s: e.before == {"gold_threshold": 0.0, "gold_window": 10}
        and e.after == {"gold_threshold": 0.75, "gold_window": 20}),
    audit.MEMBER_ADDED: ("lead", lambda p, s, c: c["lead"].post(
        reverse("api:project-members", args=[p.pk]), {"username": "newbie", "role": "annotator"}, format="json"),
        lambda e, s: e.before is None and e.after["username"] == "newbie" and e.after["role"] == "annotator"),
    audit.MEMBER_REMOVED: ("lead", lambda p, s, c: c["lead"].delete(reverse(
        "api:project-member", args=[p.pk, Membership.objects.get(project=p, user__username="res").pk])),
        lambda e, s: e.before["username"] == "res" and e.before["role"] == "researcher" and e.after is None),
    audit.PROMOTION: ("researcher", lambda p, s, c: c["researcher"].post(
        reverse("scoring:checkpoint-champion", args=[s["checkpoint"].pk])),
        lambda e, s: e.before == {"champion": None, "status": "rejected"}
        and e.after == {"champion": s["checkpoint"].pk}),
    audit.IMPORT: ("researcher", lambda p, s, c: upload(p, c),
                   lambda e, s: e.after["format"] == "completions" and e.after["file"] == "outputs.jsonl"),
    audit.EXPORT: ("lead", lambda p, s, c: c["lead"].get(reverse("api:project-export", args=[p.pk]),
                                                         {"format": "trl", "quality_control": "false"}),
                   lambda e, s: e.after["format"] == "trl" and e.after["quality_control"] is False),
    audit.REPORT_RESOLVED: ("lead", lambda p, s, c: c["lead"].post(
        reverse("api:assignment-resolve", args=[s["reports"][0].pk]), {"note": "skipped the problem"},
        format="json"), lambda e, s: e.target.startswith("give_up report") and (e.before, e.after) == (
            {"resolved": False}, {"resolved": True}) and e.reason == "skipped the problem"),
}


@pytest.mark.parametrize("action", list(ACTIONS))
def test_each_action_through_its_api_leaves_one_entry_saying_who_what_and_why(project, stage, clients, action):
    who, perform, holds = ACTIONS[action]
    answer = perform(project, stage, clients)
    assert answer.status_code in (200, 201, 202, 204), (answer.status_code, getattr(answer, "content", b""))
    entries = list(AuditEntry.objects.filter(project=project, action=action))
    assert len(entries) == 1, [(e.action, e.before, e.after) for e in AuditEntry.objects.all()]
    entry = entries[0]
    assert entry.actor_name == {"lead": "lead", "researcher": "res"}[who] and entry.actor.username == entry.actor_name
    assert holds(entry, stage), (entry.target, entry.before, entry.after, entry.reason)


def test_the_log_names_every_action_of_the_vocabulary():
    # A new action must be performed in the test above too: the two lists are one.
    assert set(ACTIONS) | {audit.SNAPSHOT} == set(audit.ACTIONS)


def test_snapshot_now_is_logged_once_queued(project, stage, clients, eager):
    answer = clients["researcher"].post(reverse("api:project-snapshots", args=[project.pk]))
    assert answer.status_code == 202
    entry = AuditEntry.objects.get(project=project, action=audit.SNAPSHOT)
    assert entry.actor_name == "res" and entry.after == {"state": "queued"}


def test_the_loop_and_project_settings_are_logged_with_only_what_changed(project, stage, clients):
    answer = clients["researcher"].patch(reverse("scoring:project-loop-settings", args=[project.pk]),
                                         {"retrain_threshold": 321, "pool_limit": project.pool_limit}, format="json")
    assert answer.status_code == 200, answer.content
    clients["lead"].patch(reverse("api:project-detail", args=[project.pk]), {"overlap": 2}, format="json")
    loop, rules = AuditEntry.objects.filter(action=audit.SETTINGS).order_by("pk")
    assert (loop.actor_name, loop.after) == ("res", {"retrain_threshold": 321})
    assert (rules.actor_name, rules.before, rules.after) == ("lead", {"overlap": 3}, {"overlap": 2})
    # Saving what is already there changes nothing and logs nothing.
    clients["lead"].patch(reverse("api:project-detail", args=[project.pk]), {"overlap": 2}, format="json")
    assert AuditEntry.objects.filter(action=audit.SETTINGS).count() == 2


def test_the_flag_thresholds_are_logged_as_settings(project, clients):
    url = reverse("api:project-flag-settings", args=[project.pk])
    answer = clients["lead"].patch(url, {"flag_gold_margin": 0.3}, format="json")
    assert answer.status_code == 200 and answer.json()["flag_gold_margin"] == 0.3, answer.content
    entry = AuditEntry.objects.get(action=audit.SETTINGS)
    assert (entry.actor_name, entry.before, entry.after) == ("lead", {"flag_gold_margin": 0.15}, {"flag_gold_margin": 0.3})
    assert clients["lead"].patch(url, {"flag_gold_margin": 7}, format="json").status_code == 400
    assert AuditEntry.objects.filter(action=audit.SETTINGS).count() == 1


def test_a_pause_without_a_reason_is_a_400_naming_it_and_changes_and_logs_nothing(project, stage, clients):
    url = reverse("api:project-annotator-pause", args=[project.pk, stage["people"][0].pk])
    for body in ({}, {"reason": ""}, {"reason": "   "}):
        answer = clients["lead"].post(url, body, format="json")
        assert answer.status_code == 400 and answer.json()["field"] == "reason", answer.content
    assert not AnnotatorProjectStatus.objects.filter(annotator=stage["people"][0], state="paused").exists()
    assert not AuditEntry.objects.exists()


def test_the_annotator_reads_the_leads_reason_for_a_pause_by_hand(project, users, clients):
    me = users["annotator"].annotator
    rated_pass(make_solution(project, steps=1), me, [1])
    clients["lead"].post(reverse("api:project-annotator-pause", args=[project.pk, me.pk]),
                         {"reason": "please reread the guidelines on −1"}, format="json")
    status = clients["annotator"].get(reverse("api:project-my-status", args=[project.pk])).json()
    assert (status["state"], status["reason"]) == ("paused", "please reread the guidelines on −1")
    clients["lead"].post(reverse("api:project-annotator-resume", args=[project.pk, me.pk]), format="json")
    assert clients["annotator"].get(reverse("api:project-my-status", args=[project.pk])).json()["reason"] == ""


def test_a_refused_action_leaves_no_entry(project, stage, clients):
    # The last lead cannot leave (409), a ruling on a step that does not exist is a 400: nothing logged.
    lead = Membership.objects.get(project=project, user__username="lead")
    assert clients["lead"].delete(reverse("api:project-member", args=[project.pk, lead.pk])).status_code == 409
    assert clients["lead"].put(reverse("api:solution-consensus", args=[stage["shared"].pk]),
                               {"ratings": [{"position": 9, "value": 1}]}, format="json").status_code == 400
    assert not AuditEntry.objects.exists()


def test_record_refuses_an_action_it_does_not_know(project, users):
    with transaction.atomic(), pytest.raises(ValueError, match="made.up"):
        audit.record(project, users["lead"], "made.up")


@pytest.mark.django_db(transaction=True)
def test_record_refuses_to_run_outside_a_transaction(project, users):
    # An entry written on its own could outlive a change that rolled back.
    with pytest.raises(RuntimeError, match="inside the transaction"):
        audit.record(project, users["lead"], audit.PAUSE)
    assert not AuditEntry.objects.exists()


def test_gold_from_a_proposal_or_a_pass_is_logged_as_gold_made_saying_from_what(project, stage, clients):
    approved = clients["lead"].post(reverse("api:gold-proposal-approve", args=[stage["proposal"].pk]))
    assert approved.status_code == 200
    made = AuditEntry.objects.get(action=audit.GOLD_MADE)
    assert made.reason == f"approved proposal {stage['proposal'].pk}" and made.actor_name == "lead"
    assert made.after["ratings"] == {f"{p}.{a}": v for p, a, v in stage["proposal"].ratings}
    ordinary = make_solution(project, steps=2)
    done = rated_pass(ordinary, stage["people"][0], [1, -1])
    answer = clients["lead"].post(reverse("api:solution-gold-from-assignment", args=[ordinary.pk]),
                                  {"assignment": done.pk}, format="json")
    assert answer.status_code == 200
    second = AuditEntry.objects.filter(action=audit.GOLD_MADE).latest("pk")
    assert second.reason == f"from assignment {done.pk}" and second.after["ratings"] == {"0.0": 1, "1.0": -1}


def test_a_researcher_reads_that_gold_changed_but_not_its_values(project, stage, clients):
    clients["lead"].put(reverse("api:solution-gold", args=[stage["item"].pk]),
                        {"ratings": [{"position": 0, "value": 0}]}, format="json")
    url = reverse("api:project-audit", args=[project.pk])
    lead = clients["lead"].get(url).json()["results"][0]
    researcher = clients["researcher"].get(url).json()["results"][0]
    assert lead["after"]["ratings"] == {"0.0": 0} and lead["before"]["ratings"] == {"0.0": 1, "1.0": 1, "2.0": -1}
    assert researcher["action"] == audit.GOLD_EDITED and researcher["target"] == lead["target"]
    assert researcher["before"]["ratings"] == researcher["after"]["ratings"] == "hidden: gold ratings are for leads"
    sheet = b"".join(clients["researcher"].get(url, {"format": "csv"}).streaming_content).decode()
    assert "hidden: gold ratings are for leads" in sheet and '"0.0": 0' not in sheet


def test_the_members_page_logs_who_removed_whom(project, stage, users):
    page = APIClient()
    page.force_login(users["lead"])
    researcher = Membership.objects.get(project=project, user__username="res")
    answer = page.post(reverse("members", args=[project.pk]), {"action": "remove", "membership": researcher.pk})
    assert answer.status_code == 302
    entry = AuditEntry.objects.get(action=audit.MEMBER_REMOVED)
    assert (entry.actor_name, entry.before["username"]) == ("lead", "res")


# Browsing: filters, paging, CSV, who may --------------------------------------------------


def logged(project, user, action, day, reason=""):
    with transaction.atomic():
        entry = audit.record(project, user, action, target="annotator 1", before={"state": "active"},
                             after={"state": "paused"}, reason=reason)
    at = datetime.datetime(2026, 11, day, 12, tzinfo=datetime.UTC)
    AuditEntry.objects.filter(pk=entry.pk).update(at=at)
    return entry.pk


def test_the_log_filters_by_action_who_and_date_and_pages(project, users, clients):
    ids = [logged(project, users["lead"], audit.PAUSE, 20, "=HYPERLINK(\"x\")"),
           logged(project, users["lead"], audit.RESUME, 21),
           logged(project, users["researcher"], audit.EXPORT, 22),
           logged(project, users["researcher"], audit.IMPORT, 23)]
    url = reverse("api:project-audit", args=[project.pk])

    def got(**params):
        answer = clients["lead"].get(url, params)
        assert answer.status_code == 200, answer.content
        return [row["id"] for row in answer.json()["results"]]

    assert got() == ids[::-1]
    assert got(action=audit.PAUSE) == [ids[0]]
    assert got(actor="res") == [ids[3], ids[2]]
    assert got(since="2026-11-21", until="2026-11-22") == [ids[2], ids[1]]
    assert got(until="2026-11-20T12:00:00Z") == [ids[0]]
    assert got(limit=2, offset=2) == [ids[1], ids[0]]
    first = clients["lead"].get(url, {"limit": 2}).json()
    assert first["count"] == 4 and first["next"] and first["results"][0] == {
        "id": ids[3], "at": "2026-11-23T12:00:00Z", "actor": "res", "action": audit.IMPORT, "target": "annotator 1",
        "before": {"state": "active"}, "after": {"state": "paused"}, "reason": ""}
    for params, field in (({"action": "nuke"}, "action"), ({"since": "yesterday"}, "since"),
                          ({"until": "2026-13-01"}, "until"), ({"since": "2026-11-22", "until": "2026-11-21"}, "since"),
                          ({"format": "xml"}, "format"), ({"limit": "0"}, "limit")):
        answer = clients["lead"].get(url, params)
        assert answer.status_code == 400 and answer.json()["field"] == field, (params, answer.content)


def test_the_csv_holds_every_entry_the_filter_keeps(project, users, clients):
    ids = [logged(project, users["lead"], audit.PAUSE, 20, '=HYPERLINK("x")'),
           logged(project, users["lead"], audit.RESUME, 21),
           logged(project, users["researcher"], audit.EXPORT, 22)]
    answer = clients["researcher"].get(reverse("api:project-audit", args=[project.pk]),
                                       {"format": "csv", "actor": "lead", "limit": "1"})
    assert answer.status_code == 200 and answer["Content-Type"].startswith("text/csv")
    assert f'filename="audit-project-{project.pk}.csv"' in answer["Content-Disposition"]
    rows = list(csv.DictReader(io.StringIO(b"".join(answer.streaming_content).decode())))
    # The CSV is the whole filter, not one page of it; a formula is defused.
    assert [int(r["id"]) for r in rows] == [ids[1], ids[0]]
    assert rows[1]["reason"] == "'=HYPERLINK(\"x\")" and rows[1]["actor"] == "lead"
    assert json.loads(rows[1]["before"]) == {"state": "active"} and rows[1]["action"] == audit.PAUSE


def test_only_the_projects_leads_and_researchers_read_the_log(project, users, clients):
    logged(project, users["lead"], audit.PAUSE, 20)
    other = make_user("elsewhere-lead", projects=[])
    from labeling.access.roles import LEAD, grant_role
    from tests.factories import client_for, make_project
    theirs = make_project(name="theirs")
    grant_role(other, LEAD, theirs)
    for name in ("api:project-audit", "api:project-reports"):
        url = reverse(name, args=[project.pk])
        assert clients["annotator"].get(url).status_code == 403
        assert clients["nobody"].get(url).status_code == 403
        assert clients["anonymous"].get(url).status_code in (401, 403)
        assert client_for(other).get(url).status_code == 404
    assert clients["researcher"].get(reverse("api:project-audit", args=[project.pk])).status_code == 200
    assert clients["researcher"].get(reverse("api:project-reports", args=[project.pk])).status_code == 403
    pages = {}
    for role in ("lead", "researcher", "annotator"):
        pages[role] = APIClient()
        pages[role].force_login(users[role])  # the pages read the session
    for role, name, code in (("lead", "audit", 200), ("researcher", "audit", 200), ("lead", "inbox", 200),
                             ("annotator", "audit", 403), ("researcher", "inbox", 403), ("annotator", "inbox", 403)):
        assert pages[role].get(reverse(name, args=[project.pk])).status_code == code, (role, name)


# The reports inbox -----------------------------------------------------------------------


def test_the_inbox_lists_reports_across_the_project_and_resolve_closes_one_with_a_note(project, stage, clients):
    url = reverse("api:project-reports", args=[project.pk])
    give_up, bad = stage["reports"]
    listed = clients["lead"].get(url).json()
    assert [r["assignment"] for r in listed["results"]] == [bad.pk, give_up.pk] and listed["count"] == 2
    assert {r["reason"]: r["note"] for r in listed["results"]} == {
        "give_up": "too long for me", "bad_problem": "the statement is cut off"}
    resolve = reverse("api:assignment-resolve", args=[bad.pk])
    done = clients["lead"].post(resolve, {"note": "  fixed the statement  "}, format="json")
    assert done.status_code == 200, done.content
    assert (done.json()["resolved"], done.json()["resolved_by"], done.json()["resolution_note"]) == (
        True, "lead", "fixed the statement")
    assert [r["assignment"] for r in clients["lead"].get(url).json()["results"]] == [give_up.pk]
    assert [r["assignment"] for r in clients["lead"].get(url, {"state": "resolved"}).json()["results"]] == [bad.pk]
    assert clients["lead"].get(url, {"state": "all"}).json()["count"] == 2
    assert AuditEntry.objects.get(action=audit.REPORT_RESOLVED).reason == "fixed the statement"
    # Twice is a 409, an ordinary pass a 400 naming it, a bad state a 400 naming it: nothing more logged.
    again = clients["lead"].post(resolve, {"note": "again"}, format="json")
    assert again.status_code == 409 and again.json()["field"] == "assignment"
    ordinary = clients["lead"].post(reverse("api:assignment-resolve", args=[stage["ordinary"].pk]), format="json")
    assert ordinary.status_code == 400 and ordinary.json()["field"] == "assignment"
    assert clients["lead"].get(url, {"state": "closed"}).json()["field"] == "state"
    assert ReportResolution.objects.count() == 1 and AuditEntry.objects.count() == 1
    assert clients["researcher"].post(reverse("api:assignment-resolve", args=[give_up.pk])).status_code == 403
    assert clients["annotator"].post(reverse("api:assignment-resolve", args=[give_up.pk])).status_code == 403
