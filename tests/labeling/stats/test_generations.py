"""Each generation's figures: what it selected, the hit rate people found, rating time."""
import datetime

import pytest

from labeling.models import Assignment, Generation
from labeling.stats.generations import generation_stats
from tests.factories import T0, make_annotator, make_project, make_solution, rated_pass

pytestmark = pytest.mark.django_db


def test_hit_rate_selection_and_rating_time_per_generation():
    project = make_project()
    ann, bob = make_annotator("ann"), make_annotator("bob")
    # Generation 0: three selected; one found wrong by one of its two passes, one rated clean,
    # one not rated yet.
    wrong = make_solution(project, steps=4, generation=0, is_correct=False, verifier_score=0.9, rank=2)
    clean = make_solution(project, steps=4, generation=0, is_correct=True, verifier_score=0.7, rank=3)
    waiting = make_solution(project, generation=0, is_correct=False, verifier_score=0.8, rank=1)
    rated_pass(wrong, ann, [1, -1], seconds=30, at=T0)
    rated_pass(wrong, bob, [1, 1, 1, 1], seconds=90, at=T0 + datetime.timedelta(hours=2))
    rated_pass(clean, ann, [1, 1, 1, 1], seconds=60, at=T0 + datetime.timedelta(hours=1))
    # Generation 1: both selected solutions found wrong.
    for _ in range(2):
        rated_pass(make_solution(project, generation=1, is_correct=False), ann, [-1], seconds=120)
    # Left out: a gold item and a screening item (even in a generation), a pass still active,
    # generation -1, and another project's work.
    rated_pass(make_solution(project, generation=0, is_gold=True), bob, [-1])
    rated_pass(make_solution(project, generation=-1, is_screening=True), bob, [-1])
    rated_pass(make_solution(project, generation=1), bob, [-1], state=Assignment.ACTIVE)
    rated_pass(make_solution(make_project(), generation=0), bob, [-1])

    first, second = generation_stats(project)

    assert first["generation"] == 0 and first["created_at"] == Generation.objects.get(project=project, number=0).created_at
    assert (first["selected"], first["wrong_answer"], first["rated"], first["found_wrong"]) == (3, 2, 2, 1)
    assert first["mean_verifier_score"] == pytest.approx(0.8)
    assert first["hit_rate"] == 0.5
    assert first["passes"] == 3 and first["median_seconds"] == 60.0
    assert first["person_hours"] == pytest.approx(180 / 3600)
    assert (first["first_submitted_at"], first["last_submitted_at"]) == (T0, T0 + datetime.timedelta(hours=2))

    assert [p["solution"] for p in first["picks"]] == [waiting.pk, wrong.pk, clean.pk]
    assert [(p["rated"], p["found_wrong"], p["is_correct"]) for p in first["picks"]] == [
        (False, False, False), (True, True, False), (True, False, True)]
    assert first["picks"][1]["verifier_score"] == 0.9 and first["picks"][1]["problem"] == "Find $x$."
    assert len(generation_stats(project, picks=1)[0]["picks"]) == 1

    assert second["generation"] == 1
    assert (second["selected"], second["rated"], second["found_wrong"], second["hit_rate"]) == (3, 2, 2, 1.0)
    assert second["median_seconds"] == 120.0


def test_a_mixture_generation_says_how_it_was_chosen_and_each_strategy_s_hit_rate():
    project = make_project()
    generation = Generation.objects.create(project=project, number=1, strategy="mixture",
                                           selection={"mix": {"convincing_wrong": 0.5, "random": 0.5}, "seed": 9})
    ann = make_annotator("ann")

    def picked(strategy, rank, found):
        reason = {"strategy": strategy, "score": 0.5, "uncertainty": None, "answer": "wrong"}
        solution = make_solution(project, generation=generation, rank=rank, is_correct=False, selection_reason=reason)
        if found is not None:
            rated_pass(solution, ann, [1, -1 if found else 1, 1])
        return solution

    first = picked("convincing_wrong", 1, True)
    picked("random", 2, False)
    picked("convincing_wrong", 3, False)
    picked("random", 4, None)
    [row] = generation_stats(project)
    assert row["strategy"] == "mixture" and row["selection"]["seed"] == 9
    # All four answers are graded wrong: people_wrong counts every rated one, whatever the passes found.
    assert row["by_strategy"] == [
        {"strategy": "convincing_wrong", "selected": 2, "rated": 2, "found_wrong": 1, "hit_rate": 0.5,
         "people_wrong": 2, "people_wrong_share": 1.0, "expected_wrong_share": None, "expected_of": 0},
        {"strategy": "random", "selected": 2, "rated": 1, "found_wrong": 0, "hit_rate": 0.0,
         "people_wrong": 1, "people_wrong_share": 1.0, "expected_wrong_share": None, "expected_of": 0},
    ]
    assert row["picks"][0]["solution"] == first.pk and row["picks"][0]["reason"]["strategy"] == "convincing_wrong"


def test_a_generation_nobody_rated_yet():
    project = make_project()
    make_solution(project, generation=0)
    [row] = generation_stats(project)
    assert (row["selected"], row["rated"], row["passes"]) == (1, 0, 0)
    assert row["hit_rate"] is None and row["median_seconds"] is None and row["person_hours"] == 0.0
    assert row["strategy"] == "" and row["picks"][0]["reason"] is None  # chosen before strategies were recorded
    assert row["by_strategy"] == [{"strategy": "", "selected": 1, "rated": 0, "found_wrong": 0, "hit_rate": None,
                                   "people_wrong": 0, "people_wrong_share": None, "expected_wrong_share": None,
                                   "expected_of": 0}]
    assert (row["people_wrong"], row["people_wrong_share"], row["expected_wrong_share"]) == (0, None, None)
    assert generation_stats(make_project()) == []


def test_what_people_found_wrong_against_what_the_prm_expected():
    project = make_project()
    ann = make_annotator("ann")
    # Rated: a first -1 in a pass (answer right), a wrong answer nobody caught, a clean right one,
    # and one without a PRM score (it counts for people, not in the PRM's expectation).
    caught = make_solution(project, steps=3, generation=0, is_correct=True, verifier_score=0.9, rank=1)
    rated_pass(caught, ann, [1, -1])
    slipped = make_solution(project, steps=2, generation=0, is_correct=False, verifier_score=0.8, rank=2)
    rated_pass(slipped, ann, [1, 1])
    clean = make_solution(project, steps=2, generation=0, is_correct=True, verifier_score=0.5, rank=3)
    rated_pass(clean, ann, [1, 1])
    unscored = make_solution(project, steps=2, generation=0, is_correct=None, verifier_score=None, rank=4)
    rated_pass(unscored, ann, [1, 0])
    # Not rated: neither side counts it, whatever its answer or score.
    make_solution(project, generation=0, is_correct=False, verifier_score=0.1, rank=5)

    [row] = generation_stats(project)
    assert (row["rated"], row["found_wrong"], row["people_wrong"]) == (4, 1, 2)
    assert row["people_wrong_share"] == 0.5
    # The PRM expected (0.1 + 0.2 + 0.5) / 3 of the three scored rated ones to be wrong.
    assert row["expected_of"] == 3 and row["expected_wrong_share"] == pytest.approx(0.8 / 3)
    [only] = row["by_strategy"]
    assert (only["people_wrong_share"], only["expected_wrong_share"]) == (0.5, pytest.approx(0.8 / 3))


def test_a_long_problem_is_cut_at_a_space_and_says_so():
    from labeling.stats.generations import excerpt

    text = "word " * 100  # 500 characters
    assert excerpt(text) == ("word " * 60).rstrip() + "…"
    assert excerpt("short problem") == "short problem"
    assert excerpt("aaa bbbbbb", limit=6) == "aaa…"
    assert excerpt("x" * 301) == "x" * 300 + "…"  # no space to cut at
