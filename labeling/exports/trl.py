"""Export trajectories in TRL's stepwise-supervision layout, for PRM training.

One line per submitted assignment::

    {"prompt": "<problem>", "completions": ["<step 1>", "<step 2>", ...], "labels": [true, false]}

The trajectory follows PRM800K's rule: at each position, the chosen completion, or the
annotator's own step when none was chosen. Labels: +1 is true, -1 is false, 0 is true by
default (``neutral_is_positive``; the paper's best setting) or false with the
``trl_neutral_negative`` format. An annotator's own step left unrated counts as true (they
wrote it as a correct step).

Where the trajectory stops:

- after the first -1 (later steps are not trained on, so they are left out);
- at a position where nothing was chosen and no step was written (PRM800K phase 2 after an
  error): the solution's own step there (the first completion) is the last one, if it was rated;
- before a chosen step left unrated.

A pass with no labelled step gives no line.
"""
import json

from .prm800k_passes import CHOSEN, OWN, TEXT, VALUE, iter_passes
from .registry import register


@register("trl")
def export(filters, *, neutral_is_positive=True):
    """Yield one TRL stepwise-supervision JSON line per submitted assignment with labels."""
    dumps = json.JSONEncoder(ensure_ascii=False).encode
    for row in rows(filters, neutral_is_positive=neutral_is_positive):
        yield dumps(row)


def rows(filters, *, neutral_is_positive=True):
    """``{"prompt", "completions", "labels"}`` per submitted assignment with labels (JSONL and Parquet)."""
    for p in iter_passes(filters):
        completions, labels = trajectory(p, neutral_is_positive=neutral_is_positive)
        if completions:
            yield {"prompt": p.problem, "completions": completions, "labels": labels}


@register("trl_neutral_negative")
def export_neutral_negative(filters):
    """As ``trl``, with 0 ratings labelled false."""
    return export(filters, neutral_is_positive=False)


def trajectory(p, *, neutral_is_positive=True):
    """The (step texts, labels) of one ``Pass``, by the rules in the module docstring."""
    completions, labels = [], []
    for position in sorted(p.positions):
        rows = p.positions[position]
        step = next((row for row in rows if row[CHOSEN] and not row[OWN]), None)  # the chosen completion
        if step is None:
            step = next((row for row in rows if row[OWN]), None)  # the annotator's own step
            if step is not None and step[VALUE] is None:
                completions.append(step[TEXT])
                labels.append(True)
                continue
        end = step is None
        if end:
            # Nothing to continue with: the pass ended here, on the solution's own step.
            step = next((row for row in rows if not row[OWN]), None)
        if step is None or step[VALUE] is None:
            break
        value = step[VALUE]
        completions.append(step[TEXT])
        labels.append(value > 0 or (value == 0 and neutral_is_positive))
        if end or value < 0:
            break
    return completions, labels
