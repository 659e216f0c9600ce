"""Selection of a generation: convincing wrong answers first, the mix, the cap, the order."""
import pytest

from scoring.prm.selection import Candidate, interleave, select


def pool():
    # 10 problems x 4 solutions; solutions 0 and 1 of each problem are wrong answers.
    return [Candidate(solution_id=p * 4 + k, problem_id=p, score=(p * 4 + k) / 40, is_correct=k >= 2)
            for p in range(10) for k in range(4)]


def test_mix_takes_the_most_convincing_of_each_group():
    chosen = select(pool(), size=10, wrong_share=0.8)
    wrong = [c for c in chosen if c.is_correct is False]
    rest = [c for c in chosen if c.is_correct is not False]
    assert len(wrong) == 8 and len(rest) == 2
    all_wrong = sorted((c for c in pool() if not c.is_correct), key=lambda c: -c.score)
    assert sorted(c.solution_id for c in wrong) == sorted(c.solution_id for c in all_wrong[:8])
    assert {c.solution_id for c in rest} == {39, 38}


def test_every_prefix_keeps_about_the_mix_and_groups_stay_in_score_order():
    chosen = select(pool(), size=10, wrong_share=0.8)
    for n in range(1, 11):
        wrong_in_prefix = sum(c.is_correct is False for c in chosen[:n])
        assert abs(wrong_in_prefix - 0.8 * n) <= 1
    wrong_scores = [c.score for c in chosen if c.is_correct is False]
    assert wrong_scores == sorted(wrong_scores, reverse=True)


def test_per_problem_cap_and_no_duplicates():
    chosen = select(pool(), size=12, wrong_share=0.5, per_problem_cap=1)
    problems = [c.problem_id for c in chosen]
    assert len(problems) == len(set(problems)) == 10  # only 10 problems: the cap stops at 10
    assert len({c.solution_id for c in chosen}) == len(chosen)


def test_a_short_group_is_filled_from_the_other():
    only_wrong = [c for c in pool() if c.is_correct is False]
    assert len(select(only_wrong, size=10, wrong_share=0.8)) == 10
    only_right = [c for c in pool() if c.is_correct]
    assert len(select(only_right, size=10, wrong_share=0.8)) == 10


def test_unscored_never_chosen_and_ungraded_count_with_the_rest():
    candidates = [Candidate(1, 1, None, False), Candidate(2, 2, 0.9, None), Candidate(3, 3, 0.1, False)]
    chosen = select(candidates, size=5, wrong_share=0.8)
    assert {c.solution_id for c in chosen} == {2, 3}


def test_ties_are_broken_by_id_so_reruns_agree():
    tied = [Candidate(i, i, 0.5, False) for i in (5, 3, 9, 1)]
    assert [c.solution_id for c in select(tied, size=3, wrong_share=1)] == [1, 3, 5]


def test_bad_arguments_are_refused():
    with pytest.raises(ValueError):
        select(pool(), size=-1)
    with pytest.raises(ValueError):
        select(pool(), size=3, wrong_share=1.5)


def test_interleave_keeps_all_items_in_order():
    merged = interleave(list("abcdefgh"), [1, 2])
    assert [x for x in merged if isinstance(x, str)] == list("abcdefgh")
    assert [x for x in merged if isinstance(x, int)] == [1, 2]
    assert merged[0] == "a"
