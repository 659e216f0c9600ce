"""Selection strategies on synthetic candidates: each rule alone, mixtures, the reason kept."""
import pytest

from scoring.prm.selection import Candidate, select
from scoring.prm.strategies import (
    check_mix,
    choose,
    most_uncertain,
    needs_uncertainty,
    quotas,
    reason,
    shuffled,
)


def pool(problems=10, per_problem=4):
    # Solutions 0 and 1 of each problem are wrong answers; the score rises with the id and the
    # uncertainty falls with it, so the two rules prefer opposite ends of the pool.
    n = problems * per_problem
    return [Candidate(solution_id=p * per_problem + k, problem_id=p, score=(p * per_problem + k) / n,
                      is_correct=k >= 2, uncertainty=(n - p * per_problem - k) / n)
            for p in range(problems) for k in range(per_problem)]


def ids(picks):
    return [p.candidate.solution_id for p in picks]


def test_convincing_wrong_alone_is_todays_selection():
    picks = choose(pool(), strategy="convincing_wrong", size=10, wrong_share=0.8, per_problem_cap=2)
    assert ids(picks) == [c.solution_id for c in select(pool(), size=10, wrong_share=0.8, per_problem_cap=2)]
    assert {p.strategy for p in picks} == {"convincing_wrong"}


def test_uncertainty_takes_the_most_uncertain_first_and_skips_the_unmeasured():
    candidates = pool() + [Candidate(100, 50, 0.5, False, None)]
    picks = choose(candidates, strategy="uncertainty", size=5)
    assert ids(picks) == [0, 1, 2, 3, 4]
    assert 100 not in ids(choose(candidates, strategy="uncertainty", size=len(candidates)))
    tied = [Candidate(i, i, 0.5, False, 0.2) for i in (7, 3, 5)]
    assert [c.solution_id for c in most_uncertain(tied, size=2)] == [3, 5]


def test_random_is_seeded_and_takes_unscored_solutions_too():
    candidates = pool() + [Candidate(100, 50, None, None)]
    first = ids(choose(candidates, strategy="random", size=41, seed=7))
    assert first == ids(choose(list(reversed(candidates)), strategy="random", size=41, seed=7))
    assert sorted(first) == sorted(c.solution_id for c in candidates)
    assert ids(choose(candidates, strategy="random", size=10, seed=8)) != first[:10]
    assert first[:10] != sorted(first[:10])  # shuffled, not in id order


@pytest.mark.parametrize("strategy", ["convincing_wrong", "uncertainty", "random", "mixture"])
def test_every_strategy_keeps_the_per_problem_cap_and_picks_no_solution_twice(strategy):
    mix = {"convincing_wrong": 0.5, "uncertainty": 0.3, "random": 0.2}
    picks = choose(pool(), strategy=strategy, size=30, mix=mix, per_problem_cap=2, seed=1)
    problems = [p.candidate.problem_id for p in picks]
    assert len(picks) == 20  # 10 problems x 2
    assert max(problems.count(p) for p in set(problems)) == 2
    assert len(set(ids(picks))) == len(picks)


def test_a_mixture_gives_each_strategy_its_quota_and_keeps_the_mix_in_every_prefix():
    mix = {"convincing_wrong": 0.5, "uncertainty": 0.3, "random": 0.2}
    picks = choose(pool(), strategy="mixture", size=10, mix=mix, wrong_share=1.0, seed=3)
    by = {name: [p.candidate for p in picks if p.strategy == name] for name in mix}
    assert {name: len(chosen) for name, chosen in by.items()} == {"convincing_wrong": 5, "uncertainty": 3, "random": 2}
    # each strategy's picks are what it would choose among what the ones before it left
    assert [c.solution_id for c in by["convincing_wrong"]] == [37, 36, 33, 32, 29]
    assert [c.solution_id for c in by["uncertainty"]] == [0, 1, 2]
    for n in range(1, 11):
        prefix = [p.strategy for p in picks[:n]]
        for name, share in mix.items():
            assert abs(prefix.count(name) - share * n) <= 1
    assert choose(pool(), strategy="mixture", size=10, mix=mix, wrong_share=1.0, seed=3) == picks


def test_a_short_strategy_leaves_its_slots_to_the_others():
    unmeasured = [Candidate(c.solution_id, c.problem_id, c.score, c.is_correct) for c in pool()]
    picks = choose(unmeasured, strategy="mixture", size=10, mix={"uncertainty": 0.7, "random": 0.3}, seed=1)
    assert len(picks) == 10 and {p.strategy for p in picks} == {"random"}


def test_quotas_round_to_the_size():
    assert quotas(10, {"convincing_wrong": 0.5, "uncertainty": 0.3, "random": 0.2}) == \
        {"convincing_wrong": 5, "uncertainty": 3, "random": 2}
    assert sum(quotas(7, {"convincing_wrong": 1 / 3, "uncertainty": 1 / 3, "random": 1 / 3}).values()) == 7
    assert quotas(1, {"convincing_wrong": 0.5, "random": 0.5}) == {"convincing_wrong": 1, "random": 0}


@pytest.mark.parametrize("mix, message", [
    ({}, "Give shares"),
    ([0.5, 0.5], "Give shares"),
    ({"convincing_wrong": 0.5, "bandit": 0.5}, "Unknown strategy 'bandit'"),
    ({"mixture": 1.0}, "Unknown strategy 'mixture'"),
    ({"convincing_wrong": 1.2, "random": -0.2}, "from 0 to 1"),
    ({"convincing_wrong": "half", "random": 0.5}, "from 0 to 1"),
    ({"convincing_wrong": 0.5, "random": 0.4}, "sum to 1"),
])
def test_bad_mixes_are_refused(mix, message):
    with pytest.raises(ValueError, match=message):
        check_mix(mix)


def test_a_good_mix_comes_back_in_a_fixed_order():
    assert list(check_mix({"random": 0.2, "convincing_wrong": 0.8})) == ["convincing_wrong", "random"]


def test_only_what_reads_uncertainty_needs_it_measured():
    assert needs_uncertainty("uncertainty")
    assert not needs_uncertainty("convincing_wrong") and not needs_uncertainty("random")
    assert needs_uncertainty("mixture", {"uncertainty": 0.1, "random": 0.9})
    assert not needs_uncertainty("mixture", {"uncertainty": 0, "random": 1.0})


def test_unknown_strategies_and_sizes_are_refused():
    with pytest.raises(ValueError, match="unknown strategy"):
        choose(pool(), strategy="bandit", size=3)
    with pytest.raises(ValueError):
        choose(pool(), strategy="random", size=-1)


def test_the_reason_says_who_picked_it_and_what_was_known():
    picks = choose(pool(), strategy="uncertainty", size=1)
    assert reason(picks[0]) == {"strategy": "uncertainty", "score": 0.0, "uncertainty": 1.0, "answer": "wrong"}
    assert reason(choose([Candidate(1, 1, 0.4, None)], strategy="random", size=1)[0]) == \
        {"strategy": "random", "score": 0.4, "uncertainty": None, "answer": "ungraded"}
    assert shuffled([Candidate(1, 1, 0.4, True)], size=1, seed=0)[0].is_correct is True
