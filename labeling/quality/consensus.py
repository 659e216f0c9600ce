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

A solution is *overlapping* when at least two submitted passes vote on it. Its passes
*disagree* on a step that got two or more different values (``disagree``); the leads'
adjudication queue (``disagreements``) lists the project's solutions with such a step, gold
items apart (their gold decides, and a lead edits that instead).
"""
import uuid
from collections import Counter, defaultdict
from typing import NamedTuple

from django.db import transaction
from django.db.models import Count

from labeling import audit
from labeling.errors import DomainError
from labeling.models import Adjudication, Annotator, Assignment, Rating, Solution, Step

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
    rows = _ballots(passes).values_list("step__solution_id", "step__position", "step__alternative", "value")
    table = defaultdict(lambda: defaultdict(list))
    for solution_id, position, alternative, value in rows:
        table[solution_id][(position, alternative)].append(value)
    return table


def _ballots(passes):
    """The ratings that vote: the passes' values on model steps (an own step is its author's alone)."""
    return Rating.objects.filter(
        assignment__in=passes.values("pk"), value__isnull=False, step__author__isnull=True
    ).order_by()


def voters(passes):
    """``{solution id: {(position, alternative): {value: [annotator names, sorted]}}}``: who voted what."""
    rows = list(_ballots(passes).values_list(
        "step__solution_id", "step__position", "step__alternative", "value", "assignment__annotator_id"))
    names = {a.pk: str(a) for a in Annotator.objects.filter(pk__in={r[4] for r in rows}).select_related("user")}
    table = defaultdict(lambda: defaultdict(lambda: defaultdict(list)))
    for solution_id, position, alternative, value, annotator_id in rows:
        table[solution_id][(position, alternative)][value].append(names[annotator_id])
    for slots in table.values():
        for by_value in slots.values():
            for people in by_value.values():
                people.sort()
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
        was = {(a.step.position, a.step.alternative): a.value
               for a in Adjudication.objects.select_related("step").filter(step__in=[steps[k].pk for k in rulings])}
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
        # Every ruling removed is an undo; anything else sets rulings (some may be removed with them).
        action = audit.RULING_UNDO if all(v is None for v in rulings.values()) else audit.RULING
        slot = "{}.{}".format
        if rulings:  # an empty request changes nothing
            audit.record(solution.project_id, by, action, target=f"solution {solution.pk}",
                         before={slot(*k): was.get(k) for k in sorted(rulings)},
                         after={slot(*k): rulings[k] for k in sorted(rulings)}, reason=note)


# The adjudication queue ------------------------------------------------------------------


def disagree(slot_votes):
    """Whether the votes on one step (``{value: count}`` or a list of values) hold two values or more."""
    return len(set(slot_votes)) > 1


STATES = ("open", "ruled", "all")


def disagreeing_solution_ids(project_id, *, state="open", annotator_id=None, generation=None, position=None):
    """Ids of the project's solutions, gold items apart, whose voting passes disagree on a step; sorted.

    The database counts the distinct values of each step's votes (``disagree``'s rule in SQL).
    ``state``: ``open`` keeps solutions with a disagreeing step that has no ruling yet, ``ruled``
    those whose disagreeing steps are all ruled (the two split ``all``). The filters narrow it:
    ``annotator_id`` to solutions that annotator's submitted pass votes on, ``generation`` to the
    solutions of that generation's number, ``position`` to a disagreement at that step position
    (0-based, any alternative; with ``state``, that step's ruling is what counts).
    """
    passes = voting_passes(project_id=project_id)
    split = (
        Rating.objects.filter(assignment__in=passes.values("pk"), value__isnull=False, step__author__isnull=True)
        .order_by().values("step_id").annotate(n=Count("value", distinct=True)).filter(n__gt=1)
        .values("step_id")
    )
    steps = Step.objects.filter(pk__in=split, solution__is_gold=False)
    if annotator_id is not None:
        steps = steps.filter(solution_id__in=passes.filter(annotator_id=annotator_id).values("solution_id"))
    if generation is not None:
        steps = steps.filter(solution__generation__number=generation)
    if position is not None:
        steps = steps.filter(position=position)
    open_ids = set(steps.filter(adjudication__isnull=True).values_list("solution_id", flat=True))
    if state == "open":
        return sorted(open_ids)
    every = set(steps.values_list("solution_id", flat=True))
    return sorted(every - open_ids if state == "ruled" else every)


def disagreement_choices(project_id):
    """What the queue's filters can pick: ``{"annotators": [{"id", "name"}], "generations": [numbers]}``
    of the project's disagreeing solutions (open or ruled), names sorted, numbers ascending."""
    ids = disagreeing_solution_ids(project_id, state="all")
    people = Annotator.objects.filter(
        pk__in=voting_passes(ids).values("annotator_id")).select_related("user")
    numbers = Solution.objects.filter(pk__in=ids, generation__isnull=False).values_list(
        "generation__number", flat=True).distinct()
    return {"annotators": sorted(({"id": a.pk, "name": str(a)} for a in people), key=lambda a: (a["name"], a["id"])),
            "generations": sorted(set(numbers))}


def disagreements(solution_ids):
    """Each solution's votes, consensus and rulings per model step, for a lead to rule on.

    ``[{"solution", "problem", "passes", "steps": [{"position", "alternative", "text", "votes"
    ({value: count}), "voters" ({value: [names]}, the same passes), "value" (the consensus), "ruling" (a lead's value or None), "note",
    "disagree"}]}]`` in the order of ``solution_ids``.
    """
    ids = list(solution_ids)
    passes = voting_passes(ids)
    table = votes(ids, passes=passes)
    who = voters(passes)
    rulings = Adjudication.objects.filter(step__solution_id__in=ids).values_list(
        "step__solution_id", "step__position", "step__alternative", "value", "note")
    ruled = {(s, p, a): (v, n) for s, p, a, v, n in rulings}
    counts = dict(passes.order_by().values("solution_id").annotate(n=Count("pk")).values_list("solution_id", "n"))
    texts = {
        (s, p, a): t for s, p, a, t in Step.objects.filter(solution_id__in=ids, author__isnull=True)
        .values_list("solution_id", "position", "alternative", "text")
    }
    problems = dict(Solution.objects.filter(pk__in=ids).values_list("pk", "problem__problem"))
    answer = []
    for solution_id in ids:
        slot_votes = table.get(solution_id, {})
        result = resolve(slot_votes, {k[1:]: v for k, (v, _) in ruled.items() if k[0] == solution_id})
        steps = [
            {
                "position": p, "alternative": a, "text": texts.get((solution_id, p, a), ""),
                "votes": {str(v): n for v, n in sorted(c.votes.items())},
                "voters": {str(v): names for v, names in sorted(who.get(solution_id, {}).get((p, a), {}).items())},
                "value": c.value,
                "ruling": ruled.get((solution_id, p, a), (None, ""))[0],
                "note": ruled.get((solution_id, p, a), (None, ""))[1],
                "disagree": disagree(c.votes),
            }
            for (p, a), c in result.items()
        ]
        answer.append({"solution": solution_id, "problem": problems.get(solution_id, ""),
                       "passes": counts.get(solution_id, 0), "steps": steps})
    return answer
