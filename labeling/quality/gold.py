"""Gold items: lead-approved step ratings, and how a pass over a gold item is scored.

A gold item is a solution with ``is_gold`` set and a ``GoldRating`` on the steps the lead
rated; ratings are given as ``{(position, alternative): value}`` over the solution's model
steps (a step an annotator wrote is theirs alone and never gold). A lead sets them by hand
(``set_gold``), takes them from a submitted pass (``gold_from_assignment``) or approves a
proposal made from the consensus of trusted annotators (labeling/quality/proposals.py).
Screening items are gold items with ``is_screening`` set.

Scoring (``score_gold_pass``): a submitted pass is compared with the gold on the steps both
rated. ``exact_share`` and ``within_one_share`` are the shares of those steps rated equal and
at most one apart; a pass that rates no gold step agrees with none (both 0), so giving up on
a gold item counts against the annotator. ``first_error_same``: the first -1 among the
solution's own steps (alternative 0) is at the same position, or neither has one. The
rolling score of an annotator is the mean ``exact_share`` over their latest
``project.gold_window`` gold passes (screening passes apart).

Every function raises ``GoldError(message, field=...)`` for input a lead must fix.
"""
from typing import NamedTuple

from django.db import transaction
from django.utils import timezone

from labeling import audit
from labeling.errors import DomainError
from labeling.models import Assignment, GoldRating, GoldScore, Rating, Solution, Step

VALUES = (-1, 0, 1)


class GoldError(DomainError):
    """Gold input a lead must fix; ``field`` names the offending input."""


class Comparison(NamedTuple):
    exact_share: float
    within_one_share: float
    first_error_same: bool
    steps_compared: int


class Rolling(NamedTuple):
    score: float | None  # None until there is a gold pass
    passes: int  # gold passes the mean is over (at most the window)


# Gold items -----------------------------------------------------------------------------


def gold_ratings(solution):
    """``{(position, alternative): value}`` of the solution's gold ratings."""
    rows = GoldRating.objects.filter(step__solution=solution).values_list(
        "step__position", "step__alternative", "value"
    )
    return {(p, a): v for p, a, v in rows}


def _slots(ratings):
    """Gold ratings as the audit log keeps them: ``{"position.alternative": value}``."""
    return {f"{p}.{a}": v for (p, a), v in sorted(ratings.items())}


def set_gold(solution, ratings, by=None, *, screening=None, reason=""):
    """Make ``solution`` a gold item with exactly ``ratings``; return the GoldRating rows.

    ``ratings`` maps ``(position, alternative)`` to -1, 0 or +1; slots left out carry no gold
    (earlier gold on them is removed). ``screening`` True/False also sets whether it is a
    screening item; None leaves that as it is.
    """
    if not ratings:
        raise GoldError("Give at least one gold rating.", field="ratings")
    for key, value in ratings.items():
        if isinstance(value, bool) or value not in VALUES:
            raise GoldError(f"Gold at {key} must be -1, 0 or 1, not {value!r}.", field="ratings")
    steps = {
        (s.position, s.alternative): s
        for s in Step.objects.filter(solution=solution, author__isnull=True)
    }
    missing = sorted(key for key in ratings if key not in steps)
    if missing:
        position, alternative = missing[0]
        raise GoldError(
            f"Solution {solution.pk} has no model step at position {position}, alternative {alternative}.",
            field="ratings",
        )
    with transaction.atomic():
        # The queue hands gold items out under this lock; change them under it too.
        locked = Solution.objects.select_for_update().filter(pk=solution.pk).first()
        was = gold_ratings(solution) if locked.is_gold else {}
        was_screening = locked.is_screening
        GoldRating.objects.filter(step__solution=solution).exclude(
            step_id__in=[steps[key].pk for key in ratings]
        ).delete()
        rows = GoldRating.objects.bulk_create(
            [GoldRating(step=steps[key], value=value, approved_by=by) for key, value in sorted(ratings.items())],
            update_conflicts=True,
            unique_fields=["step"],
            update_fields=["value", "approved_by", "approved_at"],
        )
        solution.is_gold = True
        fields = ["is_gold"]
        if screening is not None:
            solution.is_screening = bool(screening)
            fields.append("is_screening")
        Solution.objects.filter(pk=solution.pk).update(**{f: getattr(solution, f) for f in fields})
        audit.record(solution.project_id, by, audit.GOLD_EDITED if locked.is_gold else audit.GOLD_MADE,
                     target=f"solution {solution.pk}",
                     before={"ratings": _slots(was), "is_screening": was_screening} if locked.is_gold else None,
                     after={"ratings": _slots(ratings), "is_screening": solution.is_screening}, reason=reason)
    return rows


def unset_gold(solution, by=None, *, reason=""):
    """Make ``solution`` ordinary work again: no gold ratings, not gold, not screening.

    Scores of earlier passes stay (they were scored against the gold of their day).
    """
    with transaction.atomic():
        locked = Solution.objects.select_for_update().filter(pk=solution.pk).first()
        was = gold_ratings(solution)
        GoldRating.objects.filter(step__solution=solution).delete()
        Solution.objects.filter(pk=solution.pk).update(is_gold=False, is_screening=False)
        if locked.is_gold or was:  # retiring what was never gold changes nothing
            audit.record(solution.project_id, by, audit.GOLD_RETIRED, target=f"solution {solution.pk}",
                         before={"ratings": _slots(was), "is_screening": locked.is_screening}, after=None,
                         reason=reason)
    solution.is_gold = solution.is_screening = False


def gold_from_assignment(assignment, by=None, *, screening=None):
    """Take a submitted pass's ratings of the solution's model steps as its gold."""
    if assignment.state != Assignment.SUBMITTED:
        raise GoldError("Only a submitted assignment's ratings can become gold.", field="assignment")
    ratings = {
        (p, a): v
        for p, a, v in Rating.objects.filter(
            assignment=assignment, value__isnull=False, step__author__isnull=True
        ).values_list("step__position", "step__alternative", "value")
    }
    if not ratings:
        raise GoldError("That assignment rated no step.", field="assignment")
    return set_gold(assignment.solution, ratings, by, screening=screening,
                    reason=f"from assignment {assignment.pk}")


# Scoring --------------------------------------------------------------------------------


def compare(gold, given):
    """Compare two ``{(position, alternative): value}`` maps on the slots both rated."""
    shared = [key for key in gold if given.get(key) is not None]
    exact = sum(gold[key] == given[key] for key in shared)
    near = sum(abs(gold[key] - given[key]) <= 1 for key in shared)
    n = len(shared)
    return Comparison(
        exact_share=exact / n if n else 0.0,
        within_one_share=near / n if n else 0.0,
        first_error_same=_first_error(gold) == _first_error(given),
        steps_compared=n,
    )


def _first_error(ratings):
    return min((p for (p, a), v in ratings.items() if a == 0 and v == -1), default=None)


def score_gold_pass(assignment):
    """Store the GoldScore of a submitted pass over a gold or screening item; None otherwise.

    Idempotent: scoring the same pass again replaces its score.
    """
    solution = assignment.solution
    if assignment.state != Assignment.SUBMITTED or assignment.annotator_id is None:
        return None
    if not (solution.is_gold or solution.is_screening):
        return None
    gold = gold_ratings(solution)
    if not gold:
        return None
    given = {
        (p, a): v
        for p, a, v in Rating.objects.filter(assignment=assignment, step__author__isnull=True).values_list(
            "step__position", "step__alternative", "value"
        )
    }
    result = compare(gold, given)
    score, _ = GoldScore.objects.update_or_create(
        assignment=assignment,
        defaults={
            "annotator_id": assignment.annotator_id,
            "project_id": assignment.project_id,
            "is_screening": bool(assignment.is_screening or solution.is_screening),
            "submitted_at": assignment.submitted_at or timezone.now(),
            **result._asdict(),
        },
    )
    return score


def gold_record(annotator, project, *, since=None):
    """``Rolling(score, passes)`` over the latest ``project.gold_window`` gold passes.

    ``since`` keeps only passes submitted after it (a lead's resume starts a fresh record).
    """
    rows = GoldScore.objects.filter(annotator=annotator, project=project, is_screening=False)
    if since is not None:
        rows = rows.filter(submitted_at__gt=since)
    shares = list(rows.order_by("-submitted_at", "-pk").values_list("exact_share", flat=True)[: project.gold_window])
    if not shares:
        return Rolling(None, 0)
    return Rolling(sum(shares) / len(shares), len(shares))


def rolling_gold_score(annotator, project):
    """Mean exact agreement over the annotator's latest ``project.gold_window`` gold passes, or None."""
    return gold_record(annotator, project).score

