"""Consensus ratings of overlapping solutions: the majority, or a lead's adjudication.

Votes are the ratings of a solution's model steps (a step an annotator wrote is rated by its
author alone) in submitted passes by known annotators; a step left unrated casts no vote.
Passes by the consensus labeler itself (a consensus export imported back) never vote.

The rule, per ``(solution, position, alternative)``:

- an ``Adjudication`` row, when a lead made one, is the value;
- else the value most votes gave;
- a tie goes to the lower, more critical value: -1 beats 0 beats +1. That is PRM800K's
  conservative reading (a step someone found wrong, with as many saying otherwise, is not
  trusted as correct), and it makes the rule independent of vote order.

A solution is *overlapping* when at least two submitted passes vote on it.
"""
import uuid
from collections import Counter, defaultdict
from typing import NamedTuple

from django.db import transaction

from labeling.errors import DomainError
from labeling.models import Adjudication, Assignment, Rating, Step

# The ``labeler`` of consensus records in exports: fixed, so that every export and re-import
# names "the consensus" the same way.
CONSENSUS_LABELER = uuid.UUID("00000000-0000-0000-0000-00000000c0de")


class Consensus(NamedTuple):
    value: int
    votes: dict  # {value: count}
    adjudicated: bool


class ConsensusError(DomainError):
    """An adjudication a lead must fix; ``field`` names the offending input."""


def majority(values):
    """The most frequent of ``values`` (-1, 0, +1); a tie goes to the lowest. None when empty."""
    counts = Counter(values)
    if not counts:
        return None
    top = max(counts.values())
    return min(v for v, n in counts.items() if n == top)


def voting_passes(solutions=None, *, project_id=None, exclude_annotator_ids=()):
    """Submitted assignments whose ratings vote on ``solutions`` (ids) or a whole project."""
    passes = Assignment.objects.filter(state=Assignment.SUBMITTED, annotator__isnull=False).exclude(
        annotator__uuid=CONSENSUS_LABELER
    )
    if solutions is not None:
        passes = passes.filter(solution_id__in=list(solutions))
    if project_id is not None:
        passes = passes.filter(project_id=project_id)
    if exclude_annotator_ids:
        passes = passes.exclude(annotator_id__in=list(exclude_annotator_ids))
    return passes


def votes(solution_ids, *, exclude_annotator_ids=(), passes=None):
    """``{solution id: {(position, alternative): [values]}}`` from the voting passes."""
    if passes is None:
        passes = voting_passes(solution_ids, exclude_annotator_ids=exclude_annotator_ids)
    rows = (
        Rating.objects.filter(assignment__in=passes.values("pk"), value__isnull=False, step__author__isnull=True)
        .order_by()
        .values_list("step__solution_id", "step__position", "step__alternative", "value")
    )
    table = defaultdict(lambda: defaultdict(list))
    for solution_id, position, alternative, value in rows:
        table[solution_id][(position, alternative)].append(value)
    return table


def adjudications(solution_ids):
    """``{solution id: {(position, alternative): value}}`` of the leads' rulings."""
    rows = Adjudication.objects.filter(step__solution_id__in=list(solution_ids)).values_list(
        "step__solution_id", "step__position", "step__alternative", "value"
    )
    table = defaultdict(dict)
    for solution_id, position, alternative, value in rows:
        table[solution_id][(position, alternative)] = value
    return table


def resolve(slot_votes, rulings=None):
    """``{(position, alternative): Consensus}`` from one solution's votes and rulings."""
    rulings = rulings or {}
    result = {}
    for key in sorted(set(slot_votes) | set(rulings)):
        counts = dict(Counter(slot_votes.get(key, ())))
        if key in rulings:
            result[key] = Consensus(rulings[key], counts, True)
        else:
            result[key] = Consensus(majority(slot_votes[key]), counts, False)
    return result


def consensus_ratings(solution, *, exclude_annotator_ids=(), adjudicated=True):
    """The consensus of one solution: ``{(position, alternative): Consensus}``.

    ``adjudicated=False`` leaves the leads' rulings out (the annotators' majority alone).
    """
    slot_votes = votes([solution.pk], exclude_annotator_ids=exclude_annotator_ids).get(solution.pk, {})
    rulings = adjudications([solution.pk]).get(solution.pk, {}) if adjudicated else {}
    return resolve(slot_votes, rulings)


def pass_count(solution, *, exclude_annotator_ids=()):
    return voting_passes([solution.pk], exclude_annotator_ids=exclude_annotator_ids).count()


def adjudicate(solution, rulings, by=None, note=""):
    """Record a lead's rulings ``{(position, alternative): value or None}``; None removes one."""
    steps = {(s.position, s.alternative): s for s in Step.objects.filter(solution=solution, author__isnull=True)}
    for key, value in rulings.items():
        if key not in steps:
            raise ConsensusError(
                f"Solution {solution.pk} has no model step at position {key[0]}, alternative {key[1]}.",
                field="ratings",
            )
        if value is not None and (isinstance(value, bool) or value not in (-1, 0, 1)):
            raise ConsensusError(f"A ruling must be -1, 0, 1 or null, not {value!r}.", field="ratings")
    with transaction.atomic():
        cleared = [steps[k].pk for k, v in rulings.items() if v is None]
        Adjudication.objects.filter(step_id__in=cleared).delete()
        Adjudication.objects.bulk_create(
            [
                Adjudication(step=steps[k], value=v, note=note, decided_by=by)
                for k, v in rulings.items()
                if v is not None
            ],
            update_conflicts=True,
            unique_fields=["step"],
            update_fields=["value", "note", "decided_by", "decided_at"],
        )
