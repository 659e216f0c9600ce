"""The trajectory rule of a PRM800K pass: which steps, where it ends, what each is labelled."""
import json

import pytest

from formats.errors import FormatError
from formats.prm800k import label, trajectory, walk


def _record(steps, pre_generated=None):
    question = {"problem": "What is 1 + 1?"}
    if pre_generated is not None:
        question["pre_generated_steps"] = pre_generated
    return {"question": question, "label": {"steps": steps}}


def _position(*ratings, chosen=0, human=None, texts=None):
    texts = texts or [f"c{i}:{r}" for i, r in enumerate(ratings)]
    return {"completions": [{"text": t, "rating": r, "flagged": None} for t, r in zip(texts, ratings)],
            "human_completion": human, "chosen_completion": chosen}


def _human(text="mine", rating=None):
    return {"text": text, "rating": rating, "source": "human", "flagged": False}


def test_follows_the_chosen_completion_and_ends_after_the_first_negative():
    record = _record([_position(1), _position(-1, 0, 1, chosen=2), _position(0), _position(-1), _position(1)])
    assert trajectory(record) == (["c0:1", "c2:1", "c0:0", "c0:-1"], [True, True, True, False])
    assert trajectory(record, "negative")[1] == [True, True, False, False]
    assert trajectory(record, "ignore")[1] == [True, True, None, False]


def test_an_annotators_own_step_is_plus_one_unless_it_carries_a_rating():
    record = _record([_position(-1, -1, chosen=None, human=_human()), _position(1)])
    assert trajectory(record) == (["mine", "c0:1"], [True, True])
    record = _record([_position(-1, chosen=None, human=_human(rating=0)), _position(1)])
    assert trajectory(record, "negative") == (["mine", "c0:1"], [False, True])
    record = _record([_position(-1, chosen=None, human=_human(rating=-1)), _position(1)])
    assert trajectory(record) == (["mine"], [False])


def test_an_unrated_model_step_ends_the_trajectory_unlabelled():
    record = _record([_position(1), _position(None), _position(1)])
    assert trajectory(record) == (["c0:1"], [True])
    # the position is still reached: its other candidates are there for a reader to train
    assert list(walk(_record([_position(None, -1)])))[-1] == ([("c0:None", None), ("c1:-1", -1)], None)


def test_phase_2_ends_on_the_solutions_own_step_where_nothing_was_chosen():
    own = ["a", "b", "wrong"]
    found_error = _position(1, -1, 1, chosen=None, texts=["better", "wrong", "also"])
    assert trajectory(_record([_position(1, texts=["a"]), _position(0, texts=["b"]), found_error], own)) == (
        ["a", "b", "wrong"], [True, True, False])
    # given up on an unrated step: it has no label, the trajectory ends before it
    give_up = _position(None, chosen=None, texts=["wrong"])
    assert trajectory(_record([_position(1, texts=["a"]), _position(0, texts=["b"]), give_up], own)) == (
        ["a", "b"], [True, True])


def test_phase_1_ends_before_a_position_where_nothing_continues():
    # no pre-generated solution: no completion there is the solution's, none is picked for it
    record = _record([_position(1), _position(-1, 1, chosen=None), _position(1)])
    assert trajectory(record) == (["c0:1"], [True])
    assert [taken for _, taken in walk(record)] == [0, None]
    record = _record([_position(1), {"completions": None, "human_completion": None, "chosen_completion": None}])
    assert trajectory(record) == (["c0:1"], [True])


def test_real_records(example, native):
    texts, labels = trajectory(example)
    assert texts == example["question"]["pre_generated_steps"][:3] and labels == [True, True, False]
    # native[0]: phase 1 with an own step at position 1 (rated null, as every one in PRM800K)
    texts, labels = trajectory(native[0])
    assert texts[1] == native[0]["label"]["steps"][1]["human_completion"]["text"]
    assert labels == [True] * 6
    # native[6]: phase 1, given up: ends before the last position, where nothing is rated
    assert len(trajectory(native[6])[0]) == len(native[6]["label"]["steps"]) - 1


@pytest.mark.parametrize("change, field", [
    (lambda r: r["label"]["steps"][0]["completions"][0].update(rating=5), "label.steps[0].completions[0].rating"),
    (lambda r: r["label"]["steps"][0]["completions"][0].update(rating=True), "label.steps[0].completions[0].rating"),
    (lambda r: r["label"]["steps"][0].update(chosen_completion=3), "label.steps[0].chosen_completion"),
    (lambda r: r["label"]["steps"][0].update(human_completion={"rating": 1}), "label.steps[0].human_completion.text"),
    (lambda r: r["label"]["steps"].append([]), "label.steps[1]"),
    (lambda r: r["label"].pop("steps"), "label.steps"),
])
def test_bad_records_name_the_field(change, field):
    record = _record([_position(1)])
    change(record)
    with pytest.raises(FormatError) as failed:
        trajectory(json.loads(json.dumps(record)))
    assert failed.value.field == field


def test_label():
    assert [label(r) for r in (1, 0, -1, None)] == [True, True, False, None]
    assert label(0, "negative") is False and label(0, "ignore") is None
    with pytest.raises(ValueError):
        label(2)
