"""A checkpoint's evaluation report as the retrain stores it, built by the real protocols on made-up scores.

``scoring.retrain`` stores on ``Checkpoint.report`` the sections ``scoring.prm.evaluate`` computes
for the challenger and the champion; these give the API and the research page such a report
without training a model. ``sharp`` sets how well a scorer separates wrong steps from right ones.
"""
import random

from scoring.prm.evaluate import best_of_n_protocol, processbench_protocol, steps_protocol


def _steps(sharp, rng):
    records = []
    for _ in range(40):
        labels = [1, 1, 1, 0] if rng.random() < 0.5 else [1, 1, 1, 1]
        scores = [min(max((0.5 + sharp * (0.4 if y else -0.4)) + rng.uniform(-0.4, 0.4), 0.01), 0.99) for y in labels]
        records.append({"step_scores": scores, "labels": labels})
    return records


def _candidates(sharp, rng):
    records = []
    for problem in range(12):
        for k in range(4):
            correct = (problem + k) % 3 == 0
            score = min(max(0.5 + sharp * (0.3 if correct else -0.3) + rng.uniform(-0.25, 0.25), 0.01), 0.99)
            records.append({"problem": f"p{problem}", "answer": "right" if correct else f"wrong{k % 2}",
                            "is_correct": correct, "score": score, "step_scores": [score], "aggregation": "prod"})
    return records


def _processbench(sharp, rng):
    items = []
    for k in range(30):
        label = -1 if k % 2 else k % 3
        scores = [0.9 if label == -1 or i < label else 0.9 - sharp * 0.7 for i in range(3)]
        items.append({"step_scores": [min(max(s + rng.uniform(-0.2, 0.2), 0.01), 0.99) for s in scores], "label": label})
    return items


def sections(sharp, *, seed=0, processbench=False):
    """Report sections (``steps``, ``best-of-n``, and ``processbench`` if asked) of one scorer."""
    rng = random.Random(seed)
    found = {"steps": steps_protocol(_steps(sharp, rng)), "best-of-n": best_of_n_protocol(_candidates(sharp, rng))}
    if processbench:
        items = _processbench(sharp, rng)
        found["processbench"] = processbench_protocol(items[:20], items[20:])
    return found


def sample_report(champion_id, *, challenger_sharp=0.5, champion_sharp=0.25, processbench=True, metric="step_auroc"):
    """``Checkpoint.report`` for a challenger judged against checkpoint ``champion_id``."""
    return {"heldout_problems": 12, "metric": metric, "champion_id": champion_id,
            "challenger": sections(challenger_sharp, seed=1, processbench=processbench),
            "champion": sections(champion_sharp, seed=2, processbench=processbench)}
