"""A PRM800K pass as training data: its trajectory and the label of each step. The one rule.

The TRL export (``labeling.exports.trl``, which reads the database's passes as the PRM800K
records ``labeling.exports.prm800k`` writes) and the PRM core's reader (``scoring.prm.data``,
which reads PRM800K files, a retrain's export among them) both take a pass's steps and labels
from ``walk`` and ``label`` here, so a model trained on either learns the same labels from the
same passes (``tests/labeling/exports/test_trl_and_reader.py`` holds them to it).

**The trajectory** is the solution the pass walked, as PRM800K's release defines it
(openai/prm800k's README, "Let's Verify Step by Step"). Position by position, it continues with

1. ``completions[chosen_completion]`` when a completion is chosen;
2. else ``human_completion``, the step the annotator wrote because no completion there would
   do. The release calls it the labeler's "own +1 step" and leaves its rating null (all 2,320
   in ``data/prm800k/`` are null): a null rating there is +1, a rating it carries
   counts as given;
3. else, in phase 2 (the record has ``question.pre_generated_steps``), the solution's own step
   at that position (the completion whose text is the pre-generated step there): where the
   pass stopped, most often on its first -1 (``found_error``). It is the trajectory's last step;
4. else nothing continues it (phase 1, where the pass was given up or ended): the trajectory
   ends before the position.

It also ends

- after its first step rated -1: what follows an error is not trained on (phase 2 rates
  nothing after it; where a phase-1 pass went on from a chosen -1, what follows was rated on
  a wrong prefix);
- before a step left unrated (a model completion whose rating is null): an unrated step has
  no label, and none is made up for it, neither true nor false. The steps after it are left
  out too: TRL's layout has no place for a step without a label, and one rule for both
  readers is worth more than the few steps this loses (the files in ``data/prm800k/`` have no
  unrated chosen step before a rated one).

**Labels**: +1 true, -1 false, 0 ("correct, but no progress") as the neutral policy says:
true by default (``"positive"``, the paper's best setting), false with ``"negative"``, or
None with ``"ignore"`` (kept in the trajectory, not trained on; the PRM core's reader only,
since TRL has no unlabelled step).

**Alternatives**: ``walk`` also yields every candidate at each position the trajectory
reached, so that a reader can train the rated ones it did not take as examples of their own
(``scoring.prm.data``; TRL's layout has only the trajectory).

Malformed input raises ``formats.errors.FormatError`` naming the field
(``label.steps[3].completions[1].rating``); the caller adds the file and the line.
"""
from .errors import FormatError

RATINGS = (-1, 0, 1, None)
NEUTRAL_POLICIES = {"positive": True, "negative": False, "ignore": None}


def label(rating, neutral="positive"):
    """The label of a rating: +1 True, -1 False, 0 per ``neutral`` (see ``NEUTRAL_POLICIES``), null None."""
    if rating not in RATINGS or isinstance(rating, bool):
        raise ValueError(f"rating must be -1, 0, 1 or null, not {rating!r}")
    if rating is None:
        return None
    return NEUTRAL_POLICIES[neutral] if rating == 0 else rating > 0


def walk(record):
    """Yield ``(candidates, taken)`` for each position of ``record`` the trajectory reaches, in order.

    ``candidates`` are the ``(text, rating)`` pairs at the position: the completions in order,
    then the annotator's own step, if any (its null rating read as +1). ``taken`` is the index
    among them of the trajectory's step there, or None at the position where the trajectory
    ends without one. After the last pair yielded, the trajectory has ended.
    """
    steps = _field(record, "label", dict, "label")
    steps = _field(steps, "steps", list, "label.steps")
    question = _field(record, "question", dict, "question")
    pre_generated = question.get("pre_generated_steps")
    if pre_generated is not None and not isinstance(pre_generated, list):
        raise FormatError("expected a list", field="question.pre_generated_steps")
    for index, position in enumerate(steps):
        where = f"label.steps[{index}]"
        if not isinstance(position, dict):
            raise FormatError("expected an object", field=where)
        completions = position.get("completions") or []  # null in some phase-1 records
        if not isinstance(completions, list):
            raise FormatError("expected a list", field=f"{where}.completions")
        candidates = [_candidate(c, f"{where}.completions[{j}]") for j, c in enumerate(completions)]
        chosen = position.get("chosen_completion")
        if chosen is not None and (type(chosen) is not int or not 0 <= chosen < len(candidates)):
            raise FormatError("not an index into completions", field=f"{where}.chosen_completion")
        human = position.get("human_completion")
        if human is not None:
            text, rating = _candidate(human, f"{where}.human_completion")
            candidates.append((text, 1 if rating is None else rating))  # the release: "their own +1 step"
        last = False
        if chosen is not None:
            taken = chosen
        elif human is not None:
            taken = len(candidates) - 1
        else:
            taken, last = _solution_step(candidates, pre_generated, index), True
        if taken is not None and candidates[taken][1] is None:
            taken = None  # unrated: no label, and the trajectory ends here
        yield candidates, taken
        if taken is None or last or candidates[taken][1] == -1:
            return


def trajectory(record, neutral="positive"):
    """``(texts, labels)`` of the trajectory of ``record``, by the rules in the module docstring."""
    texts, labels = [], []
    for candidates, taken in walk(record):
        if taken is not None:
            text, rating = candidates[taken]
            texts.append(text)
            labels.append(label(rating, neutral))
    return texts, labels


def _field(parent, key, kind, where):
    value = parent.get(key)
    if not isinstance(value, kind):
        raise FormatError("missing" if value is None else f"expected {_NAMES[kind]}", field=where)
    return value


_NAMES = {dict: "an object", list: "a list", str: "a string"}


def _candidate(completion, where):
    if not isinstance(completion, dict):
        raise FormatError("expected an object", field=where)
    text = completion.get("text")
    if not isinstance(text, str):
        raise FormatError("missing" if text is None else "expected a string", field=f"{where}.text")
    rating = completion.get("rating")
    if rating not in RATINGS or isinstance(rating, bool):
        raise FormatError("must be -1, 0, 1 or null", field=f"{where}.rating")
    return text, rating


def _solution_step(candidates, pre_generated, index):
    """The index of the phase-2 solution's own step among ``candidates``, or None (phase 1)."""
    if pre_generated is None or index >= len(pre_generated):
        return None
    own = pre_generated[index]
    if not isinstance(own, str):
        raise FormatError("expected a string", field=f"question.pre_generated_steps[{index}]")
    return next((j for j, (text, _) in enumerate(candidates) if text == own), None)
