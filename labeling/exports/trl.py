"""Export trajectories in TRL's stepwise-supervision layout, for PRM training.

One line per submitted assignment::

    {"prompt": "<problem>", "completions": ["<step 1>", "<step 2>", ...], "labels": [true, false]}

Which steps go out and how they are labelled is ``formats.prm800k``'s rule, the one the PRM
core's reader (``scoring.prm.data``) follows too, applied to the PRM800K record that
``labeling.exports.prm800k`` writes for the pass: at each position the chosen completion, else
the annotator's own step (null-rated: +1, as PRM800K's release defines it), else in phase 2 the
solution's own step, where the pass stopped; the trajectory ends after its first -1 and before
a step left unrated. +1 is true, -1 false, 0 true (``neutral_is_positive``, the paper's best
setting) or false with the ``trl_neutral_negative`` format.

A pass with no labelled step gives no line.

With ``ExportFilters.provenance`` each row also carries ``labeler`` (the PRM800K export's labeler
id for the pass) and ``generation`` (null for a pass outside any generation), so a training row
can be traced to who rated it and which generation selected it; TRL ignores extra columns.
"""
import json

from formats import prm800k as rule

from .prm800k import record
from .prm800k_passes import iter_passes
from .registry import register


@register("trl", provenance=True)
def export(filters, *, neutral_is_positive=True):
    """Yield one TRL stepwise-supervision JSON line per submitted assignment with labels."""
    dumps = json.JSONEncoder(ensure_ascii=False).encode
    for row in rows(filters, neutral_is_positive=neutral_is_positive):
        yield dumps(row)


def rows(filters, *, neutral_is_positive=True):
    """``{"prompt", "completions", "labels"}`` per submitted assignment with labels (JSONL and Parquet),
    and ``labeler``, ``generation`` with ``filters.provenance``."""
    neutral = "positive" if neutral_is_positive else "negative"
    for p in iter_passes(filters):
        pass_record = record(p)
        completions, labels = rule.trajectory(pass_record, neutral)
        if completions:
            row = {"prompt": p.problem, "completions": completions, "labels": labels}
            if filters.provenance:
                row.update(labeler=pass_record["labeler"], generation=pass_record["generation"])
            yield row


@register("trl_neutral_negative", provenance=True)
def export_neutral_negative(filters):
    """As ``trl``, with 0 ratings labelled false."""
    return export(filters, neutral_is_positive=False)
