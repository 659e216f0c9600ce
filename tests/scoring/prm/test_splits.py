"""The one split by problem: seeded for validation, stable (by a hash of the statement) for the retrain."""
import json
from operator import itemgetter

import pytest

from labeling.data import open_text
from scoring.prm.data import read_prm800k
from scoring.prm.splits import split_by_problem, stable_held_out


@pytest.fixture(scope="module")
def examples(data_dir):
    return read_prm800k(data_dir / "prm800k" / "phase1_train.reconstructed.jsonl.gz", limit=8)


def test_split_keeps_each_problem_on_one_side(examples):
    train_set, val_set = split_by_problem(examples, fraction=0.25, seed=1)
    assert train_set and val_set and len(train_set) + len(val_set) == len(examples)
    assert not {e.problem for e in train_set} & {e.problem for e in val_set}
    again = split_by_problem(examples, fraction=0.25, seed=1)
    assert again == (train_set, val_set)


def test_split_of_records_is_seeded_and_keeps_problems_whole():
    records = [{"problem": f"p{k % 10}", "n": k} for k in range(40)]
    test, val = split_by_problem(records, fraction=0.3, seed=1, key=itemgetter("problem"))
    assert len({r["problem"] for r in val}) == 3
    assert not {r["problem"] for r in val} & {r["problem"] for r in test} and len(test) + len(val) == 40
    assert split_by_problem(records, fraction=0.3, seed=1, key=itemgetter("problem")) == (test, val)
    other = split_by_problem(records, fraction=0.3, seed=2, key=itemgetter("problem"))
    assert {r["problem"] for r in other[1]} != {r["problem"] for r in val}  # the seed picks them


def test_a_seeded_split_holds_out_at_least_one_problem_and_never_all():
    records = [{"problem": p} for p in ("a", "b", "c")]
    assert len(split_by_problem(records, fraction=0.01, seed=0, key=itemgetter("problem"))[1]) == 1
    assert len(split_by_problem(records, fraction=0.99, seed=0, key=itemgetter("problem"))[0]) == 1
    assert split_by_problem(records, fraction=0, seed=0, key=itemgetter("problem")) == (records, [])
    single = [{"problem": "a"}] * 3
    assert split_by_problem(single, fraction=0.6, seed=0, key=itemgetter("problem")) == (single, [])
    with pytest.raises(ValueError, match="fraction"):
        split_by_problem(records, fraction=1, seed=0, key=itemgetter("problem"))


def test_the_stable_split_is_about_a_fifth_and_never_moves(data_dir):
    with open_text(data_dir / "gsm8k" / "example_model_solutions.jsonl.gz") as lines:
        problems = [json.loads(line)["question"] for line in lines]
    held = [p for p in problems if stable_held_out(p, 0.2)]
    assert 0.15 < len(held) / len(problems) < 0.25
    assert held == [p for p in problems if stable_held_out(p, 0.2)]
    # the problems the retrain has always held out: a change of hash would let them train
    assert [k for k, p in enumerate(problems[:40]) if stable_held_out(p, 0.2)] == [0, 2, 5, 7, 8, 9, 13, 18, 29]
    records = [{"problem": p} for p in problems]
    kept, out = split_by_problem(records, fraction=0.2, key=itemgetter("problem"))
    assert [r["problem"] for r in out] == held and len(kept) + len(out) == len(records)
    # a problem's side does not depend on what else is split with it
    assert split_by_problem(records[:40], fraction=0.2, key=itemgetter("problem"))[1] == [
        r for r in out if r in records[:40]]
