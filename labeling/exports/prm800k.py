"""Export submitted assignments as PRM800K JSONL (see docs/prm800k-format.md).

One line per submitted assignment, in assignment id order, keys in the format's order. At each
position ``completions`` lists the assignment's rating rows in alternative order, except the
step the assignment wrote itself, which is ``human_completion``; ``chosen_completion`` is the
index of the chosen row among ``completions``.

Imported records come back as they went in: ``Assignment.source_shape`` holds what the tables
cannot (absent question keys, a null ``completions``, positions with nothing to rate, a
timestamp or labeler written another way). Assignments made in Stepmark have no shape: their
question is the phase-2 one when the solution has pre-generated steps, else ``problem``,
``ground_truth_solution`` (when known) and ``ground_truth_answer``.
"""
import json

from ..imports.prm800k_record import QUESTION_KEYS
from .prm800k_passes import iter_passes
from .registry import register


@register("prm800k")
def export(filters):
    """Yield one PRM800K JSON line (no newline) per submitted assignment ``filters`` keeps."""
    dumps = json.JSONEncoder(ensure_ascii=False).encode
    for p in iter_passes(filters):
        yield dumps(record(p))


def record(p):
    """The PRM800K object for one ``Pass``."""
    shape = p.shape or {}
    return {
        "labeler": shape.get("labeler", p.labeler),
        "timestamp": shape.get("timestamp", p.timestamp),
        "generation": p.generation,
        "is_quality_control_question": p.is_quality_control,
        "is_initial_screening_question": p.is_screening,
        "question": _question(p, shape),
        "label": {"steps": _steps(p, shape), "total_time": p.total_time, "finish_reason": p.finish_reason},
    }


def _question(p, shape):
    keys = shape.get("question_keys")
    if keys is None:
        if p.has_pre_generated:
            keys = QUESTION_KEYS
        else:
            keys = ["problem", "ground_truth_answer"]
            if p.ground_truth_solution is not None:
                keys.insert(1, "ground_truth_solution")
    score = p.verifier_score
    if score is not None and shape.get("verifier_score_int"):
        score = int(score)
    values = {
        "problem": p.problem,
        "ground_truth_solution": p.ground_truth_solution,
        "ground_truth_answer": p.ground_truth_answer,
        "pre_generated_steps": p.pre_generated,
        "pre_generated_answer": p.final_answer,
        "pre_generated_verifier_score": score,
    }
    return {key: values[key] for key in keys}


def _steps(p, shape):
    positions = p.positions
    null_completions = set(shape.get("null_completions", ()))
    count = max(positions, default=-1) + 1
    empty = shape.get("empty_positions")
    if empty:
        count = max(count, max(empty) + 1)
    steps = []
    for position in range(count):
        completions, human, chosen = [], None, None
        for _, text, source, own, value, flagged, is_chosen in positions.get(position, ()):
            if own:
                human = {"text": text, "rating": value, "source": source, "flagged": flagged}
            else:
                if is_chosen:
                    chosen = len(completions)
                completions.append({"text": text, "rating": value, "flagged": flagged})
        if position in null_completions:
            completions = None
        steps.append({"completions": completions, "human_completion": human, "chosen_completion": chosen})
    return steps
