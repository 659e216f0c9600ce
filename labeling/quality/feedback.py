"""What an annotator learns of their own checked passes, once they are submitted and scored.

Two kinds of checked pass, told differently (issue #26: feedback must not become a catalogue of
the gold items still in use):

- **Screening passes**, item by item: after a screening pass is scored (with the submit), the
  steps rated otherwise than the gold, with the gold's value. Screening items are no secret
  (every newcomer meets them, first and in order), so showing them gives nothing away.
- **Gold passes**, only as a daily figure: how many of the annotator's gold passes submitted
  before the cut-off (an hour before today's midnight, server time: every pass before it was
  scored long ago by the every-minute job) matched the gold, and the mean share of steps that
  did. Never which pass was checked, when, on what problem, or with which values: any of
  those would name a gold item still served to others, and accounts that pool what they see
  would learn to recognise it. The figure moves once a day, by a day's gold passes together,
  so watching it after each submit tells nothing.

A pass *missed* when it did not match the gold on every step it was scored on (``exact_share``
below 1), or rated none of them. Nothing here is reachable before the submit, and an ordinary
pass never has a score. The gold read is the gold of now (a lead may have corrected it); a
solution that is no longer gold shows nothing.
"""
from datetime import timedelta

from django.db.models import Avg, Count, Q
from django.utils import timezone

from labeling.models import Assignment, GoldScore, Rating, Step
from labeling.quality import gold

LATEST = 50  # the most recent missed passes shown
_ALL = 1 - 1e-9  # an exact_share at or above this matched every scored step


# Gold passes submitted this long before midnight are in the day's figure: scored by then.
GOLD_FIGURE_LAG = timedelta(hours=1)


def gold_figure(annotator, project, now=None):
    """``{"checked", "matched", "mean_exact_share", "through"}``: the annotator's scored gold passes
    in ``project`` submitted before ``through`` (an hour before the last midnight, server time)."""
    now = now or timezone.now()
    through = timezone.localtime(now).replace(hour=0, minute=0, second=0, microsecond=0) - GOLD_FIGURE_LAG
    found = {"checked": 0, "matched": 0, "mean_exact_share": None}
    if annotator is not None:
        found = GoldScore.objects.filter(
            annotator=annotator, project=project, is_screening=False, submitted_at__lt=through,
            assignment__annotator=annotator, assignment__state=Assignment.SUBMITTED,
        ).aggregate(checked=Count("pk"), matched=Count("pk", filter=Q(exact_share__gte=_ALL)),
                    mean_exact_share=Avg("exact_share"))
    return {**found, "through": through}


def results_version(annotator, project, now=None):
    """A short text that changes when the annotator's checked results page has something new: the
    number of missed screening passes and of gold passes in the day's figure (``gold_figure``).

    The workspace compares it with the one it last showed and says "new checked results"; like
    the page it points to, it moves for a screening pass with its submit and for gold passes only
    once a day, so it does not tell which pass was gold.
    """
    if annotator is None:
        return ""
    missed = GoldScore.objects.filter(annotator=annotator, project=project, exact_share__lt=_ALL, is_screening=True,
                                      assignment__annotator=annotator,
                                      assignment__state=Assignment.SUBMITTED).count()
    return f"{missed}.{gold_figure(annotator, project, now)['checked']}"


def missed_passes(annotator, project):
    """The annotator's latest missed screening passes in ``project``, newest first (gold passes:
    ``gold_figure``).

    ``[{"assignment", "problem", "submitted_at", "rated_none", "steps": [{"position",
    "alternative", "text", "yours", "expected"}]}]``: ``steps`` are those they rated
    otherwise than the gold; ``rated_none`` when they rated no step the gold rates.
    """
    if annotator is None:
        return []
    scores = (
        GoldScore.objects.filter(annotator=annotator, project=project, exact_share__lt=_ALL, is_screening=True,
                                 assignment__annotator=annotator, assignment__state=Assignment.SUBMITTED)
        .select_related("assignment__solution__problem").order_by("-submitted_at", "-pk")[:LATEST]
    )
    answer = []
    for score in scores:
        assignment = score.assignment
        expected = gold.gold_ratings(assignment.solution)
        if not expected:
            continue
        yours = {
            (p, a): v for p, a, v in Rating.objects.filter(
                assignment=assignment, step__author__isnull=True, value__isnull=False,
            ).values_list("step__position", "step__alternative", "value")
        }
        missed = sorted(k for k, v in expected.items() if k in yours and yours[k] != v)
        rated_none = not any(k in yours for k in expected)
        if not missed and not rated_none:
            continue  # the gold was corrected since: the pass matches it now
        texts = dict(
            ((p, a), t) for p, a, t in Step.objects.filter(solution=assignment.solution, author__isnull=True)
            .values_list("position", "alternative", "text")
        )
        answer.append({
            "assignment": assignment.pk,
            "problem": assignment.solution.problem.problem,
            "submitted_at": assignment.submitted_at,
            "rated_none": rated_none,
            "steps": [{"position": p, "alternative": a, "text": texts.get((p, a), ""),
                       "yours": yours[(p, a)], "expected": expected[(p, a)]} for p, a in missed],
        })
    return answer
