"""Gold items (labeling/quality/gold.py): setting them, scoring passes over them, rolling scores, proposals."""
import pytest
from django.contrib.auth import get_user_model

from labeling.models import Assignment, GoldProposal, GoldRating, GoldScore, Solution
from labeling.quality import gold, proposals, screening
from labeling.work import submission
from tests.factories import later, make_annotator, make_gold, make_project, make_solution, score_gold, submit, take

pytestmark = pytest.mark.django_db


@pytest.fixture
def lead():
    return get_user_model().objects.create_user("lead-gold")


# Setting gold -------------------------------------------------------------------------


def test_set_gold_stores_exactly_the_given_ratings_and_marks_the_solution(lead):
    project = make_project()
    solution = make_solution(project, steps=3, alternatives={2: 1})
    gold.set_gold(solution, {(0, 0): 1, (1, 0): 0, (2, 0): -1, (2, 1): 1}, lead)
    assert gold.gold_ratings(solution) == {(0, 0): 1, (1, 0): 0, (2, 0): -1, (2, 1): 1}
    assert Solution.objects.get(pk=solution.pk).is_gold
    assert set(GoldRating.objects.values_list("approved_by", flat=True)) == {lead.pk}
    # Setting again replaces: a slot left out loses its gold.
    gold.set_gold(solution, {(0, 0): -1}, lead, screening=True)
    assert gold.gold_ratings(solution) == {(0, 0): -1}
    assert Solution.objects.get(pk=solution.pk).is_screening


@pytest.mark.parametrize("ratings, message", [
    ({}, "at least one"),
    ({(0, 0): 2}, "must be -1, 0 or 1"),
    ({(0, 0): True}, "must be -1, 0 or 1"),
    ({(7, 0): 1}, "no model step at position 7, alternative 0"),
])
def test_set_gold_refuses_bad_ratings_and_changes_nothing(ratings, message):
    solution = make_solution(make_project(), steps=2)
    with pytest.raises(gold.GoldError, match=message) as refused:
        gold.set_gold(solution, ratings)
    assert refused.value.field == "ratings"
    assert not GoldRating.objects.exists() and not Solution.objects.get(pk=solution.pk).is_gold


def test_a_step_an_annotator_wrote_cannot_be_gold():
    project = make_project(allow_human_steps=True, stop_at_first_error=False)
    solution = make_solution(project, steps=1)
    a = take(make_annotator(), project)
    submission.save_draft(a, [{"position": 0, "value": -1}, {"position": 0, "human_text": "mine", "value": 1}])
    with pytest.raises(gold.GoldError, match="no model step at position 0, alternative 1"):
        gold.set_gold(solution, {(0, 1): 1})


def test_unset_gold_makes_ordinary_work_again_and_keeps_old_scores():
    project = make_project(quality_control_rate=1.0)
    solution = make_gold(project, [1, 1])
    make_solution(project)  # gold is served only beside open ordinary work
    submit(take(make_annotator(), project), [1, 1])
    score_gold()
    gold.unset_gold(solution)
    solution.refresh_from_db()
    assert (solution.is_gold, solution.is_screening, gold.gold_ratings(solution)) == (False, False, {})
    assert GoldScore.objects.count() == 1


def test_gold_from_a_submitted_assignment_takes_its_model_step_ratings(lead):
    project = make_project(overlap=1)
    solution = make_solution(project, steps=3)
    a = take(make_annotator(), project)
    with pytest.raises(gold.GoldError, match="submitted"):
        gold.gold_from_assignment(a, lead)
    submit(a, [1, 0, -1])
    a.refresh_from_db()
    gold.gold_from_assignment(a, lead)
    assert gold.gold_ratings(solution) == {(0, 0): 1, (1, 0): 0, (2, 0): -1}


# Scoring --------------------------------------------------------------------------------


@pytest.mark.parametrize("given, expected", [
    ({(0, 0): 1, (1, 0): 1, (2, 0): -1}, (1.0, 1.0, True, 3)),
    ({(0, 0): 1, (1, 0): 0, (2, 0): -1}, (2 / 3, 1.0, True, 3)),
    ({(0, 0): 1, (1, 0): -1}, (0.5, 0.5, False, 2)),  # stopped early at a false error
    ({(0, 0): 1, (1, 0): 1, (2, 0): 1, (3, 0): 1}, (2 / 3, 2 / 3, False, 3)),  # missed the error
    ({}, (0.0, 0.0, False, 0)),  # gave up without rating: agrees with nothing
])
def test_compare_counts_the_steps_both_rated(given, expected):
    assert tuple(gold.compare({(0, 0): 1, (1, 0): 1, (2, 0): -1}, given)) == pytest.approx(expected)


def test_a_gold_item_from_the_queue_is_scored_by_the_job_and_ordinary_work_is_not():
    project = make_project(quality_control_rate=1.0, overlap=1)
    item = make_gold(project, [1, 1, -1], alternatives={2: 1})
    make_solution(project, steps=2)
    ann = make_annotator()
    a = take(ann, project)
    assert a.solution_id == item.pk and a.is_quality_control
    submit(a, [1, 0, -1], now=later(5), alternatives={(2, 1): 1})
    assert not GoldScore.objects.exists()  # nothing gold-specific in the submit
    score_gold()
    score = GoldScore.objects.get(assignment=a)
    assert (score.exact_share, score.within_one_share, score.first_error_same, score.steps_compared) == (
        pytest.approx(2 / 3), 1.0, True, 3)
    assert (score.annotator_id, score.project_id, score.is_screening, score.submitted_at) == (
        ann.pk, project.pk, False, later(5))
    b = take(ann, project, 10)
    assert b.solution_id != item.pk and not b.is_quality_control
    submit(b, [1, 1], now=later(15))
    score_gold()
    assert GoldScore.objects.count() == 1


def test_scoring_again_replaces_the_score():
    project = make_project(quality_control_rate=1.0)
    item = make_gold(project, [1, 1])
    make_solution(project)
    a = take(make_annotator(), project)
    submit(a, [1, 0])
    gold.set_gold(item, {(0, 0): 1, (1, 0): 0})  # the lead corrects the gold
    a.refresh_from_db()
    gold.score_gold_pass(a)
    assert GoldScore.objects.get().exact_share == 1.0


def test_rolling_score_is_the_mean_over_the_latest_window_of_gold_passes():
    project = make_project(quality_control_rate=1.0, gold_window=3)
    items = {make_gold(project, [1, 1]).pk for _ in range(4)}
    make_solution(project)
    ann = make_annotator()
    assert gold.rolling_gold_score(ann, project) is None
    for n, values in enumerate([[-1], [1, 1], [1, 1], [1, 0]]):  # exact shares 0, 1, 1, 0.5
        a = take(ann, project, n)
        assert a.solution_id in items
        submit(a, values, now=later(n))
    score_gold()
    assert gold.rolling_gold_score(ann, project) == pytest.approx((1 + 1 + 0.5) / 3)
    assert gold.gold_record(ann, project, since=later(1)) == (pytest.approx(0.75), 2)
    project.gold_window = 10
    assert gold.rolling_gold_score(ann, project) == pytest.approx(2.5 / 4)


def test_each_gold_item_is_served_once_per_annotator_and_to_every_annotator():
    project = make_project(quality_control_rate=1.0, overlap=1)
    item = make_gold(project, [1])
    ordinary = make_solution(project, steps=1)
    first, second = make_annotator(), make_annotator()
    for ann in (first, second):
        a = take(ann, project)
        assert a.solution_id == item.pk
        submit(a, [1])
    assert take(first, project, 1).solution_id == ordinary.pk
    assert take(second, project, 1) is None  # overlap 1: the ordinary item is taken
    assert Assignment.objects.filter(solution=item).count() == 2


# Proposals ------------------------------------------------------------------------------


@pytest.fixture
def rated_three_times():
    """One solution, three annotators: [1, 1, -1], [1, 0, -1] and [1, 1, 1]."""
    project = make_project(overlap=3)
    solution = make_solution(project, steps=3)
    people = [make_annotator() for _ in range(3)]
    for n, (ann, values) in enumerate(zip(people, ([1, 1, -1], [1, 0, -1], [1, 1, 1]))):
        submit(take(ann, project, n), values, now=later(n))
    return project, solution, people


def test_a_proposal_holds_the_majority_of_trusted_passes_and_approval_makes_it_gold(rated_three_times, lead):
    project, solution, people = rated_three_times
    proposal = proposals.propose_gold_from_consensus(solution)
    assert (proposal.state, proposal.votes, proposal.ratings) == ("pending", 3, [[0, 0, 1], [1, 0, 1], [2, 0, -1]])
    assert not Solution.objects.get(pk=solution.pk).is_gold  # nothing changes before a lead approves
    proposals.approve_proposal(proposal, lead)
    proposal.refresh_from_db()
    assert (proposal.state, proposal.decided_by) == ("approved", lead)
    assert gold.gold_ratings(solution) == {(0, 0): 1, (1, 0): 1, (2, 0): -1}
    with pytest.raises(gold.GoldError, match="already approved"):
        proposals.approve_proposal(proposal, lead)


def test_a_paused_annotator_does_not_vote_and_a_new_proposal_replaces_the_pending_one(rated_three_times):
    project, solution, people = rated_three_times
    first = proposals.propose_gold_from_consensus(solution)
    screening.pause(people[0], project, reason="test")
    again = proposals.propose_gold_from_consensus(solution)
    assert again.pk == first.pk and GoldProposal.objects.count() == 1
    # [1, 0, -1] and [1, 1, 1] alone: the ties go to the more critical value.
    assert (again.votes, again.ratings) == (2, [[0, 0, 1], [1, 0, 0], [2, 0, -1]])
    screening.pause(people[1], project, reason="test")
    with pytest.raises(gold.GoldError, match="1 submitted pass"):
        proposals.propose_gold_from_consensus(solution)


def test_a_rejected_proposal_leaves_the_gold_alone(rated_three_times, lead):
    _, solution, _ = rated_three_times
    proposal = proposals.reject_proposal(proposals.propose_gold_from_consensus(solution), lead)
    assert proposal.state == "rejected" and gold.gold_ratings(solution) == {}
    assert proposals.propose_gold_from_consensus(solution).pk != proposal.pk
