"""The replay simulator (``scoring.prm.simulate``, ``python -m scoring simulate``): curves of the right
shape, one seed set for every strategy, no solution bought twice, nothing learnt from held-out
problems, and the savings against random on hand-made curves."""
import json

import pytest

from scoring.prm import simulate
from scoring.prm.cli import main
from scoring.prm.train import TrainConfig

FAST = TrainConfig(lr=1e-3, max_steps=2, max_tokens=512, max_batch=4, val_fraction=0.0)


def record(problem, answer, *, wrong_at=None, steps=3, graded=True):
    """A PRM800K record: ``steps`` chosen steps rated +1 (the one at ``wrong_at`` rated -1, ending the
    trajectory), each with a rated alternative; a pre-generated answer graded against the truth."""
    positions = []
    for k in range(steps):
        rating = -1 if k == wrong_at else 1
        positions.append({"completions": [{"text": f"Step {k} of {problem}: {answer} + {k}", "rating": rating},
                                          {"text": f"Maybe {k} - {answer}", "rating": -1 if k % 2 else 0}],
                          "human_completion": None, "chosen_completion": 0})
    question = {"problem": problem, "ground_truth_answer": "5"}
    if graded:
        question["pre_generated_answer"] = answer
    return {"question": question, "label": {"steps": positions, "finish_reason": "solution"}}


@pytest.fixture
def pool_file(tmp_path):
    lines = []
    for p in range(8):
        for n in range(2):  # two solutions per problem, one right and one wrong answer
            lines.append(record(f"What is {p} + {5 - p}?", "5" if n == 0 else str(p), wrong_at=1 if n else None))
    path = tmp_path / "pool.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def test_two_strategies_two_rounds_draw_curves_from_one_seed_set_without_touching_held_out_problems(
        pool_file, tiny_bases, monkeypatch):
    pool, heldout, dropped = simulate.split_pool(simulate.read_pool(pool_file), fraction=0.25, seed=3)
    assert dropped == 0 and len(heldout) == 4 and len(pool) == 12  # 2 of 8 problems, both their solutions
    heldout_problems = {s.problem for s in heldout}
    assert not heldout_problems & {s.problem for s in pool}
    trained = []
    real_train = simulate.train_prm

    def spy(solutions, **kwargs):
        trained.append([s.id for s in solutions])
        assert not heldout_problems & {s.problem for s in solutions}  # labels never come from held-out problems
        return real_train(solutions, **kwargs)

    monkeypatch.setattr(simulate, "train_prm", spy)
    report = simulate.simulate(pool, heldout, names=("random", "uncertainty"), rounds=2, per_round=2, seed_size=3,
                               seed=7, base=tiny_bases["bert"], config=FAST, device="cpu", max_length=256,
                               dropout_passes=2)
    assert len(trained) == 1 + 2 * 2  # the seed set once, then each strategy's two rounds
    assert report["seed_set"] == simulate.seed_set(pool, 3, 7) and report["seed_set"] != simulate.seed_set(pool, 3, 8)
    by_id = {s.id: s for s in pool}
    for name in ("random", "uncertainty"):
        curve = report["curves"][name]
        assert [p["round"] for p in curve] == [0, 1, 2] and [p["solutions"] for p in curve] == [3, 5, 7]
        assert curve[0] == report["curves"]["random"][0]  # round 0 is the one seed set for every strategy
        assert curve[0]["picked"] == report["seed_set"]
        bought = [i for p in curve for i in p["picked"]]
        assert len(bought) == len(set(bought)) == 7  # nothing bought twice
        assert [p["steps"] for p in curve] == [sum(by_id[i].labelled_steps for i in bought[:n]) for n in (3, 5, 7)]
        for p in curve:
            assert 0 <= p["auroc"] <= 1 and 0 <= p["f1"] <= 1
            assert p["bon"] is not None and 0 <= p["bon"] <= 1  # the held-out problems have two graded solutions
            assert p["heldout_examples"] == sum(len(s.examples) for s in heldout)
    assert set(report["savings"]) == {"random", "uncertainty"}
    assert report["savings"]["random"]["reached"]  # random reaches its own final figure
    assert "| uncertainty | 2 | 7 |" in simulate.table(report)


def test_labels_to_reach_interpolates_between_rounds():
    curve = [{"solutions": 4, "steps": 40, "auroc": 0.50}, {"solutions": 8, "steps": 80, "auroc": 0.60},
             {"solutions": 12, "steps": 120, "auroc": 0.70}]
    assert simulate.labels_to_reach(curve, 0.65) == pytest.approx(100)
    assert simulate.labels_to_reach(curve, 0.65, key="solutions") == pytest.approx(10)
    assert simulate.labels_to_reach(curve, 0.45) == 40  # the first point already reaches it
    assert simulate.labels_to_reach(curve, 0.71) is None


def test_savings_against_random_reached_and_not_reached():
    random_curve = [{"solutions": 4, "steps": 40, "auroc": 0.5}, {"solutions": 8, "steps": 80, "auroc": 0.55},
                    {"solutions": 12, "steps": 120, "auroc": 0.6}]
    better = [random_curve[0], {"solutions": 8, "steps": 60, "auroc": 0.7}, {"solutions": 12, "steps": 90, "auroc": 0.72}]
    worse = [random_curve[0], {"solutions": 8, "steps": 100, "auroc": 0.52}, {"solutions": 12, "steps": 150, "auroc": 0.58}]
    out = simulate.savings({"random": random_curve, "uncertainty": better, "convincing_wrong": worse})
    assert out["random"]["target"] == 0.6 and out["random"]["steps_needed"] == 120 and out["random"]["steps_saved"] == 0
    # 0.6 is half-way from 0.5 (40 steps, 4 solutions) to 0.7 (60 steps, 8 solutions)
    assert out["uncertainty"]["reached"] and out["uncertainty"]["steps_needed"] == pytest.approx(50)
    assert out["uncertainty"]["steps_saved"] == pytest.approx(70)
    assert out["uncertainty"]["solutions_needed"] == pytest.approx(6)
    assert out["uncertainty"]["solutions_saved_share"] == pytest.approx(0.5)
    assert not out["uncertainty"]["by_seed_set"] and not out["random"]["by_seed_set"]
    assert out["convincing_wrong"] == {"target": 0.6, "reached": False, "by_seed_set": False, **{
        f"{key}_{what}": None for key in ("steps", "solutions") for what in ("needed", "saved", "saved_share")}}
    assert "| convincing_wrong | not reached |" in simulate.table({"curves": {}, "savings": out})
    assert simulate.savings({"uncertainty": better}) == {}  # no random: nothing to measure against
    flat = [{"solutions": 4, "steps": 40, "auroc": 0.62}, {"solutions": 8, "steps": 80, "auroc": 0.6}]
    out = simulate.savings({"random": flat})
    assert out["random"]["by_seed_set"] and out["random"]["steps_needed"] == 40  # random fell below its seed set
    assert "| random | 40 (the seed set already) | 4.0 | none measurable |" in simulate.table({"curves": {}, "savings": out})


def test_graded_answer_first_error_and_the_pool():
    assert simulate.graded_answer({"is_correct": False, "question": {"pre_generated_answer": "5", "ground_truth_answer": "5"}}) is False
    assert simulate.graded_answer(record("p", "5")) is True
    assert simulate.graded_answer(record("p", "6")) is False
    assert simulate.graded_answer(record("p", "5", graded=False)) is None  # phase 1: no answer of its own
    assert simulate.first_error([1, 1, 0]) == 2 and simulate.first_error([None, None, 1]) == -1


def test_a_heldout_file_drops_the_pool_records_on_its_problems(pool_file, tmp_path):
    test = tmp_path / "test.jsonl"
    test.write_text(json.dumps(record("What is 0 + 5?", "5")) + "\n")
    pool, heldout, dropped = simulate.split_pool(simulate.read_pool(pool_file), heldout=simulate.read_pool(test))
    assert dropped == 2 and len(pool) == 14 and [s.problem for s in heldout] == ["What is 0 + 5?"]
    with pytest.raises(ValueError, match="both in the pool and held out"):
        simulate.simulate(pool + heldout, heldout, base="unused", config=FAST)
    with pytest.raises(ValueError, match="need 12 solutions; the pool has 3"):
        simulate.simulate(pool[:3], heldout, rounds=2, per_round=4, seed_size=4, base="unused", config=FAST)
    with pytest.raises(ValueError, match="unknown strategy 'greedy'"):
        simulate.simulate(pool, heldout, names=("greedy",), base="unused", config=FAST)


def test_cli_writes_the_report(pool_file, tiny_bases, tmp_path, capsys):
    out = tmp_path / "sim"
    assert main(["simulate", "--data", str(pool_file), "--heldout-fraction", "0.25", "--strategies", "random,convincing_wrong",
                 "--rounds", "1", "--per-round", "2", "--seed-size", "2", "--base", str(tiny_bases["bert"]),
                 "--max-steps", "1", "--max-length", "256", "--val-fraction", "0", "--out", str(out)]) == 0
    report = json.loads((out / "simulation.json").read_text())
    assert set(report["curves"]) == {"random", "convincing_wrong"} and report["heldout_fraction"] == 0.25
    assert [p["solutions"] for p in report["curves"]["convincing_wrong"]] == [2, 4]
    assert (out / "table.md").read_text().startswith("| strategy | round |")
    assert "| random | 1 | 4 |" in capsys.readouterr().out


def test_cli_names_the_file_line_and_field_of_bad_input(pool_file, tmp_path, capsys):
    bad = tmp_path / "bad.jsonl"
    bad.write_text(pool_file.read_text().splitlines()[0] + "\n" + json.dumps({"question": {}, "label": {"steps": []}}) + "\n")
    args = ["simulate", "--data", str(bad), "--heldout-fraction", "0.5", "--out", str(tmp_path / "o")]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert f"{bad}:2" in err and "question.problem" in err
    assert main(["simulate", "--data", str(tmp_path / "missing.jsonl"), "--heldout-fraction", "0.5", "--out", "o"]) == 2
    assert "missing.jsonl" in capsys.readouterr().err
    assert main(["simulate", "--data", str(pool_file), "--heldout-fraction", "1.5", "--out", "o"]) == 2
    assert "--heldout-fraction must be between 0 and 1" in capsys.readouterr().err
