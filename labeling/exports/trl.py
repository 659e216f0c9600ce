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

With ``ExportFilters.agree`` (two or more sources: people, the PRM, a judge, rollouts; see
``labeling.quality.sources``) the rows are the labels those sources agree on instead, one row per
solution they all labelled: its own steps, each with the agreed value, cut by the same rule (after
the first false label, before a step they do not agree on), as Qwen's consensus filtering keeps
only what Monte Carlo estimates and a judge agree on. Each row then names its sources in
``label_sources``, so a file says what it was filtered by wherever it travels.
"""
import json

from formats import prm800k as rule
from labeling.models import Project
from labeling.quality import sources as label_sources

from .prm800k import record
from .prm800k_passes import iter_passes
from .registry import register


@register("trl", provenance=True, agree=True)
def export(filters, *, neutral_is_positive=True):
    """Yield one TRL stepwise-supervision JSON line per submitted assignment with labels."""
    dumps = json.JSONEncoder(ensure_ascii=False).encode
    for row in rows(filters, neutral_is_positive=neutral_is_positive):
        yield dumps(row)


def rows(filters, *, neutral_is_positive=True):
    """``{"prompt", "completions", "labels"}`` per submitted assignment with labels (JSONL and Parquet),
    and ``labeler``, ``generation`` with ``filters.provenance``."""
    neutral = "positive" if neutral_is_positive else "negative"
    if filters.agree:
        yield from agreed_rows(filters, neutral)
        return
    for p in iter_passes(filters):
        pass_record = record(p)
        completions, labels = rule.trajectory(pass_record, neutral)
        if completions:
            row = {"prompt": p.problem, "completions": completions, "labels": labels}
            if filters.provenance:
                row.update(labeler=pass_record["labeler"], generation=pass_record["generation"])
            yield row


@register("trl_neutral_negative", provenance=True, agree=True)
def export_neutral_negative(filters):
    """As ``trl``, with 0 ratings labelled false."""
    return export(filters, neutral_is_positive=False)


def agreed_rows(filters, neutral):
    """One row per solution every source in ``filters.agree`` labelled: the steps they agree on."""
    project = Project.objects.get(pk=filters.project_id)
    chosen = label_sources.resolve_sources(project, filters.agree)
    names = [s.name for s in chosen]
    generations = filters.generations or (None,)
    for generation in generations:
        agreed = label_sources.agreeing(project, chosen, generation=generation, neutral=neutral)
        solutions = label_sources.solutions_in(project, agreed)
        if not filters.include_quality_control:
            solutions = solutions.filter(is_gold=False)
        for solution in solutions.order_by("pk").prefetch_related("steps"):
            texts = {s.position: s.text for s in solution.steps.all() if s.alternative == 0}
            steps = agreed[solution.pk]
            completions, labels = label_sources.agreed_trajectory(steps, [texts[p] for p, _ in steps], neutral)
            if completions:
                yield {"prompt": solution.problem.problem, "completions": completions, "labels": labels,
                       "label_sources": names}
