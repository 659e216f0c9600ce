"""Step labels by source: people, a PRM checkpoint, an LLM judge, Monte Carlo rollouts, a file.

A *source* is named by a selector: ``"people"`` (the consensus of people's passes, the rule of
``labeling.quality.consensus``: a lead's ruling, else the majority), a ``LabelSource`` kind
(``"prm"``, ``"judge"``, ``"rollouts"``, ``"import"``: the project's newest source of that
kind) or ``"source:<id>"`` (one ``LabelSource``). Machine labels stay in their own table
(``StepLabel``); people's ratings are never read from it or written to it.

Two sources *agree* on a step when the labels a PRM would be trained on are the same:
``formats.prm800k.label`` of each value under the neutral policy (+1 true, -1 false, 0 true by
default). A PRM's or the rollouts' value is itself a label (P(correct) at least 0.5, a success
rate above 0), so the comparison is always true against false. A step a source gave no usable
value (unparseable, refused, not reached) is not compared.
"""
from collections import defaultdict

from formats import prm800k as rule
from labeling.errors import DomainError
from labeling.models import LabelSource, Solution, Step, StepLabel

from .consensus import adjudications, resolve, votes, voting_passes

PEOPLE = "people"
KINDS = tuple(kind for kind, _ in LabelSource.KINDS)


class Source:
    """One resolved selector: its ``selector`` as asked, a ``name`` for people, the row or None."""

    def __init__(self, selector, name, row=None):
        self.selector, self.name, self.row = selector, name, row

    def describe(self):
        if self.row is None:
            return {"selector": self.selector, "kind": PEOPLE, "name": self.name, "details": {}}
        return {"selector": self.selector, "kind": self.row.kind, "name": self.name, "id": self.row.pk,
                "details": self.row.details}


def available(project):
    """Every source a project has labels from: people first, then its machine sources, newest first."""
    rows = LabelSource.objects.filter(project=project).order_by("-created_at", "-pk")
    return [Source(PEOPLE, "people (consensus)"), *(Source(f"source:{r.pk}", r.name, r) for r in rows)]


def resolve_sources(project, selectors, field="sources"):
    """The ``Source`` of each selector, in order; a ``DomainError`` naming ``field`` for a bad one."""
    if len(selectors) != len(set(selectors)):
        raise DomainError("name each source once", field=field)
    return [_resolve(project, s.strip(), field) for s in selectors]


def _resolve(project, selector, field):
    if selector == PEOPLE:
        return Source(PEOPLE, "people (consensus)")
    rows = LabelSource.objects.filter(project=project)
    if selector in KINDS:
        row = rows.filter(kind=selector).order_by("-created_at", "-pk").first()
        if row is None:
            raise DomainError(f"the project has no {selector} labels", field=field)
        return Source(selector, row.name, row)
    if selector.startswith("source:") and selector[7:].isdigit():
        row = rows.filter(pk=int(selector[7:])).first()
        if row is None:
            raise DomainError(f"no label source {selector[7:]} in this project", field=field)
        return Source(selector, row.name, row)
    raise DomainError(f"unknown source {selector!r}: use people, {', '.join(KINDS)} or source:<id>", field=field)


def labels(project, source, *, generation=None, neutral="positive"):
    """``{step id: (value, label)}`` of one source in ``project`` (optionally one generation number)."""
    if source.row is None:
        return _people(project, generation, neutral)
    rows = StepLabel.objects.filter(source=source.row, value__isnull=False)
    if generation is not None:
        rows = rows.filter(step__solution__generation__number=generation)
    return {step: (value, rule.label(value, neutral)) for step, value in rows.values_list("step_id", "value")}


def _people(project, generation, neutral):
    passes = voting_passes(project_id=project.pk)
    if generation is not None:
        passes = passes.filter(solution__generation__number=generation)
    table = votes(None, passes=passes)
    rulings = adjudications(table)
    steps = Step.objects.filter(solution_id__in=list(table)).values_list("id", "solution_id", "position",
                                                                           "alternative")
    ids = {(solution, position, alternative): pk for pk, solution, position, alternative in steps}
    out = {}
    for solution_id, slot_votes in table.items():
        for (position, alternative), consensus in resolve(slot_votes, rulings.get(solution_id)).items():
            step = ids.get((solution_id, position, alternative))
            if step is not None:
                out[step] = (consensus.value, rule.label(consensus.value, neutral))
    return out


def agreeing(project, sources, *, generation=None, neutral="positive"):
    """``{solution id: [(position, value or None)]}``: each solution's own steps (alternative 0) in
    order, with the value the sources agree on (the first source's) or None where one of them
    has no value or they disagree. Only solutions every source labelled at least one step of."""
    tables = [labels(project, s, generation=generation, neutral=neutral) for s in sources]
    shared = set.intersection(*(set(t) for t in tables)) if tables else set()
    touched = Step.objects.filter(pk__in=shared).values_list("solution_id", flat=True).distinct()
    steps = Step.objects.filter(solution_id__in=list(touched), alternative=0).order_by(
        "solution_id", "position").values_list("solution_id", "position", "id")
    out = defaultdict(list)
    for solution_id, position, step in steps:
        found = [t.get(step) for t in tables]
        agreed = all(f is not None for f in found) and len({f[1] for f in found}) == 1
        out[solution_id].append((position, found[0][0] if agreed else None))
    return out


def agreed_trajectory(steps, texts, neutral="positive"):
    """``(texts, labels)`` of one solution's agreed steps (``agreeing``'s list, with the steps' texts)
    by ``formats.prm800k``'s rule, the one rule of a pass: read as a pass that chose each step in
    turn, rated with the agreed value, it ends after the first false label and before a step
    the sources do not agree on."""
    record = {"question": {}, "label": {"steps": [
        {"completions": [{"text": text, "rating": value}], "chosen_completion": 0}
        for text, (_, value) in zip(texts, steps)]}}
    return rule.trajectory(record, neutral)


def solutions_in(project, solution_ids):
    """The listed solutions of ``project`` with their problem, for an export's rows."""
    return Solution.objects.filter(project=project, pk__in=list(solution_ids)).select_related("problem")
