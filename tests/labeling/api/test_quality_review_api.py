"""The lead's review queues and the annotator's missed checks (labeling/api/quality.py): the
adjudication queue, proposals with their evidence, the drill-down's flags, and what an annotator
learns of a checked pass only once it is submitted and scored."""
import json
from datetime import datetime, timedelta

import pytest
from django.urls import reverse
from django.utils import timezone

from labeling.models import Annotator, Assignment, GoldScore, Rating
from labeling.quality import consensus, gold, proposals
from tests.factories import (
    FORBIDDEN_IN_KEYS,
    keys,
    make_annotator,
    make_gold,
    make_solution,
    rated_pass,
    score_gold,
    submit,
)

pytestmark = pytest.mark.django_db


@pytest.fixture
def split(project):
    """Two ordinary solutions with three passes each: one split on step 1, one unanimous; and a gold item
    its passes disagree on."""
    project.overlap = 3
    project.save()
    people = [make_annotator(f"p{n}") for n in range(3)]
    split_on_one = make_solution(project, steps=2, problem="Split $x$")
    unanimous = make_solution(project, steps=2, problem="Agreed")
    item = make_gold(project, [1, -1])
    for solution, rows in ((split_on_one, ([1, 1], [1, -1], [1, -1])), (unanimous, ([1, 1],) * 3),
                           (item, ([1, -1], [1, 1]))):
        for person, values in zip(people, rows):
            rated_pass(solution, person, values)
    return {"split": split_on_one, "unanimous": unanimous, "item": item, "people": people}


def test_the_adjudication_queue_lists_split_solutions_until_ruled(clients, project, split):
    url = reverse("api:project-disagreements", args=[project.pk])
    lead = clients["lead"]
    body = lead.get(url).json()
    assert body["count"] == 1  # the unanimous solution and the gold item are not in it
    entry = body["results"][0]
    assert (entry["solution"], entry["problem"], entry["passes"]) == (split["split"].pk, "Split $x$", 3)
    assert entry["steps"] == [
        {"position": 0, "alternative": 0, "text": "step 0.0", "votes": {"1": 3}, "voters": {"1": ["p0", "p1", "p2"]},
         "value": 1, "ruling": None, "note": "", "disagree": False},
        {"position": 1, "alternative": 0, "text": "step 1.0", "votes": {"-1": 2, "1": 1},
         "voters": {"-1": ["p1", "p2"], "1": ["p0"]}, "value": -1, "ruling": None, "note": "", "disagree": True},
    ]
    ruled = lead.put(reverse("api:solution-consensus", args=[split["split"].pk]),
                     {"ratings": [{"position": 1, "value": 1}], "note": "the step holds"}, format="json")
    assert ruled.status_code == 200
    assert lead.get(url).json() | {"annotators": None} == {"count": 0, "results": [], "annotators": None,
                                                           "generations": []}
    everything = lead.get(url, {"state": "all"}).json()["results"]
    assert everything[0]["steps"][1] | {"votes": None, "voters": None} == {
        "position": 1, "alternative": 0, "text": "step 1.0", "votes": None, "voters": None, "value": 1, "ruling": 1,
        "note": "the step holds", "disagree": True}
    assert consensus.disagreeing_solution_ids(project.pk, state="all") == [split["split"].pk]
    assert lead.get(url, {"state": "ruled"}).json()["count"] == 1


@pytest.fixture
def queue(project):
    """Three split solutions: ``early`` (generation 1, split at step 0 by amy and bea), ``late``
    (generation 2, split at step 1 by bea and cal) and ``ruled`` (generation 2, split at step 1 by amy
    and cal, ruled on)."""
    ann, bea, cal = (make_annotator(name) for name in ("amy", "bea", "cal"))
    early = make_solution(project, steps=2, generation=1, problem="Early")
    late = make_solution(project, steps=2, generation=2, problem="Late")
    ruled = make_solution(project, steps=2, generation=2, problem="Ruled")
    for solution, passes in ((early, ((ann, [1, 1]), (bea, [-1, 1]))), (late, ((bea, [1, 1]), (cal, [1, 0]))),
                             (ruled, ((ann, [1, 1]), (cal, [1, -1])))):
        for person, values in passes:
            rated_pass(solution, person, values)
    consensus.adjudicate(ruled, {(1, 0): 1}, None, "")
    return {"early": early, "late": late, "ruled": ruled, "people": (ann, bea, cal)}


def listed(clients, project, **query):
    body = clients["lead"].get(reverse("api:project-disagreements", args=[project.pk]), query).json()
    assert body["count"] == len(body["results"])
    return [entry["problem"] for entry in body["results"]]


def test_the_adjudication_queue_filters_by_state_annotator_generation_and_step(clients, project, queue):
    ann, bea, cal = queue["people"]
    assert listed(clients, project) == ["Early", "Late"]
    assert listed(clients, project, state="ruled") == ["Ruled"]
    assert listed(clients, project, state="all") == ["Early", "Late", "Ruled"]
    assert listed(clients, project, annotator=ann.pk) == ["Early"]
    assert listed(clients, project, annotator=ann.pk, state="all") == ["Early", "Ruled"]
    assert listed(clients, project, annotator=cal.pk) == ["Late"]
    assert listed(clients, project, generation=2) == ["Late"]
    assert listed(clients, project, generation=2, state="all") == ["Late", "Ruled"]
    assert listed(clients, project, generation=3) == []
    assert listed(clients, project, position=0) == ["Early"]
    assert listed(clients, project, position=1, state="all") == ["Late", "Ruled"]
    assert listed(clients, project, position=1, annotator=bea.pk) == ["Late"]
    assert listed(clients, project, position=0, generation=2) == []
    # Empty values are "any", as the page's controls send them.
    assert listed(clients, project, annotator="", generation="", position="", state="") == ["Early", "Late"]


def test_the_adjudication_queue_offers_its_filters_choices(clients, project, queue):
    ann, bea, cal = queue["people"]
    body = clients["lead"].get(reverse("api:project-disagreements", args=[project.pk]), {"generation": 1}).json()
    # The choices are the whole queue's, whatever the filter, so a filter can be changed.
    assert body["annotators"] == [{"id": ann.pk, "name": "amy"}, {"id": bea.pk, "name": "bea"},
                                  {"id": cal.pk, "name": "cal"}]
    assert body["generations"] == [1, 2]


def test_the_adjudication_queue_pages_a_filtered_list(clients, project, queue):
    url = reverse("api:project-disagreements", args=[project.pk])
    body = clients["lead"].get(url, {"state": "all", "generation": 2, "limit": 1, "offset": 1}).json()
    assert body["count"] == 2 and [e["problem"] for e in body["results"]] == ["Ruled"]


@pytest.mark.parametrize("query, field", [({"state": "closed"}, "state"), ({"limit": "0"}, "limit"),
                                          ({"offset": "-1"}, "offset"), ({"limit": "x"}, "limit"),
                                          ({"limit": "201"}, "limit"),
                                          ({"annotator": "ann"}, "annotator"), ({"annotator": "0"}, "annotator"),
                                          ({"generation": "-2"}, "generation"), ({"generation": "2.5"}, "generation"),
                                          ({"position": "x"}, "position"), ({"position": "-1"}, "position"),
                                          ({"position": "9" * 40}, "position")])
def test_the_adjudication_queue_refuses_bad_input_naming_the_field(clients, project, split, query, field):
    answer = clients["lead"].get(reverse("api:project-disagreements", args=[project.pk]), query)
    assert answer.status_code == 400 and answer.json()["field"] == field


@pytest.mark.parametrize("role", ["annotator", "researcher"])
def test_only_leads_read_the_adjudication_queue(clients, project, split, role):
    answer = clients[role].get(reverse("api:project-disagreements", args=[project.pk]))
    assert answer.status_code == 403 and "results" not in answer.json()
    assert clients["lead"].get(reverse("api:project-disagreements", args=[999999])).status_code == 404


def test_proposals_carry_the_votes_they_rest_on(clients, project, split):
    proposals.propose_gold_from_consensus(split["split"])
    listed = clients["lead"].get(reverse("api:project-gold-proposals", args=[project.pk])).json()["results"]
    assert listed[0]["problem"] == "Split $x$"
    assert listed[0]["steps"] == [
        {"position": 0, "alternative": 0, "text": "step 0.0", "value": 1, "votes": {"1": 3}},
        {"position": 1, "alternative": 0, "text": "step 1.0", "value": -1, "votes": {"-1": 2, "1": 1}},
    ]


def test_the_drill_down_counts_flags_and_shows_the_gold_score(clients, project, split):
    person = split["people"][1]
    flagged = Assignment.objects.get(solution=split["split"], annotator=person)
    Rating.objects.filter(assignment=flagged, step__position=1).update(flagged=True)
    score_gold()
    url = reverse("api:project-annotator-passes", args=[project.pk, person.pk])
    passes = {p["id"]: p for p in clients["lead"].get(url).json()["passes"]}
    assert passes[flagged.pk]["flagged_steps"] == 1 and passes[flagged.pk]["steps"][1]["flagged"] is True
    assert (passes[flagged.pk]["solution_is_gold"], passes[flagged.pk]["gold_exact_share"]) == (False, None)
    on_gold = Assignment.objects.get(solution=split["item"], annotator=person)
    assert (passes[on_gold.pk]["solution_is_gold"], passes[on_gold.pk]["gold_exact_share"]) == (True, 0.5)


# The annotator's missed checks ----------------------------------------------------------------


@pytest.fixture
def gold_first(project, users):
    """A project that serves its gold item first, and an ordinary solution of the same shape."""
    project.quality_control_rate = 1.0
    project.overlap = 2
    project.save()
    item = make_gold(project, [1, 1, -1], problem="Checked $y$")
    ordinary = make_solution(project, steps=3, problem="Plain $y$")
    return item, ordinary


def finish(client, pk, values):
    ratings = [{"position": p, "value": v} for p, v in enumerate(values)]
    reason = "found_error" if values[-1] == -1 else "solution"
    answer = client.post(reverse("api:assignment-submit", args=[pk]), {"finish_reason": reason, "ratings": ratings},
                         format="json")
    assert answer.status_code == 200, answer.content
    return answer


def test_a_gold_pass_never_shows_by_item_only_in_the_daily_figure(clients, project, gold_first):
    item, ordinary = gold_first
    ann = clients["annotator"]
    url = reverse("api:project-my-missed", args=[project.pk])
    taken = ann.post(reverse("api:project-next", args=[project.pk])).json()
    assert Assignment.objects.get(pk=taken["id"]).solution_id == item.pk
    empty = ann.get(url).json()
    assert empty["results"] == [] and (empty["checks"]["checked"], empty["checks"]["matched"]) == (0, 0)
    finish(ann, taken["id"], [1, -1])  # step 1 differs (+1 in the gold); step 2 never reached
    plain = ann.post(reverse("api:project-next", args=[project.pk])).json()
    finish(ann, plain["id"], [1, 1, -1])
    assert score_gold() == 1
    # Scored and missed: the answer is byte for byte what it was before the gold pass.
    assert ann.get(url).json() == empty
    # Older than the cut-off (an hour before the last midnight), it counts: as a number only.
    GoldScore.objects.filter(assignment_id=taken["id"]).update(submitted_at=timezone.now() - timedelta(days=2))
    later = ann.get(url).json()
    assert later["results"] == []
    assert (later["checks"]["checked"], later["checks"]["matched"], later["checks"]["mean_exact_share"]) == (1, 0, 0.5)
    assert "Checked" not in json.dumps(later) and str(taken["id"]) not in json.dumps(later["checks"])
    assert not [k for k in keys(later) if any(word in k.lower() for word in FORBIDDEN_IN_KEYS)]


def test_the_daily_figure_moves_only_at_its_cut_off(project, gold_first, users):
    from labeling.quality import feedback

    item, _ = gold_first
    annotator = Annotator.objects.get(user=users["annotator"])
    noon = timezone.make_aware(datetime(2026, 3, 10, 12, 0))
    cut = timezone.make_aware(datetime(2026, 3, 9, 23, 0))
    passes = []
    for n, submitted in enumerate((cut - timedelta(minutes=1), cut + timedelta(minutes=1))):
        solution = make_gold(project, [1, -1], problem=f"G{n}")
        passes.append(Assignment.objects.create(project=project, solution=solution, annotator=annotator,
                                                state="active", is_quality_control=True))
        submit(passes[-1], [1, -1])
        Assignment.objects.filter(pk=passes[-1].pk).update(submitted_at=submitted)
    score_gold()
    GoldScore.objects.filter(assignment=passes[0]).update(submitted_at=cut - timedelta(minutes=1))
    GoldScore.objects.filter(assignment=passes[1]).update(submitted_at=cut + timedelta(minutes=1))
    figure = feedback.gold_figure(annotator, project, now=noon)
    assert (figure["checked"], figure["matched"], figure["through"]) == (1, 1, cut)
    # The next day's figure takes the later one too.
    assert feedback.gold_figure(annotator, project, now=noon + timedelta(days=1))["checked"] == 2


def test_a_matching_check_and_other_peoples_passes_never_show(clients, project, gold_first, users):
    item, _ = gold_first
    other = make_annotator("other")
    theirs = Assignment.objects.create(project=project, solution=item, annotator=other, state="active",
                                       is_quality_control=True)
    submit(theirs, [1, -1])  # misses, but it is not the caller's
    ann = clients["annotator"]
    taken = ann.post(reverse("api:project-next", args=[project.pk])).json()
    finish(ann, taken["id"], [1, 1, -1])  # matches the gold
    assert score_gold() == 2
    assert ann.get(reverse("api:project-my-missed", args=[project.pk])).json()["results"] == []
    mine = Assignment.objects.get(annotator=Annotator.objects.get(user=users["annotator"]), solution=item)
    assert mine.gold_score.exact_share == 1.0  # scored, and matched


def test_a_screening_pass_shows_its_misses_right_after_the_submit(clients, project):
    project.requires_screening = True
    project.save()
    item = make_solution(project, steps=2, problem="Screen $z$")
    gold.set_gold(item, {(0, 0): 1, (1, 0): 1}, screening=True)
    ann = clients["annotator"]
    taken = ann.post(reverse("api:project-next", args=[project.pk])).json()
    finish(ann, taken["id"], [-1])
    results = ann.get(reverse("api:project-my-missed", args=[project.pk])).json()["results"]
    assert [(s["position"], s["yours"], s["expected"]) for s in results[0]["steps"]] == [(0, -1, 1)]


def test_the_missed_checks_are_for_annotators_of_active_projects(clients, project, gold_first):
    url = reverse("api:project-my-missed", args=[project.pk])
    for role in ("lead", "researcher", "nobody"):
        assert clients[role].get(url).status_code == 403, role
    assert clients["anonymous"].get(url).status_code in (401, 403)
    project.is_active = False
    project.save()
    assert clients["annotator"].get(url).status_code == 404


def test_the_next_and_submit_answers_of_a_missed_check_look_like_any_other(clients, project, gold_first):
    """Scoring afterwards changes nothing the loop's answers carry: a retry of the gold submit
    answers as before, and the history of passes has one shape."""
    ann = clients["annotator"]
    taken = ann.post(reverse("api:project-next", args=[project.pk])).json()
    body = {"finish_reason": "found_error", "ratings": [{"position": 0, "value": -1}], "submit_key": "k1"}
    before = ann.post(reverse("api:assignment-submit", args=[taken["id"]]), body, format="json").json()
    score_gold()
    after = ann.post(reverse("api:assignment-submit", args=[taken["id"]]), body, format="json").json()
    assert before == after
    history = ann.get(reverse("api:me-assignments")).json()
    assert "expected" not in json.dumps(history) and "yours" not in json.dumps(history)
