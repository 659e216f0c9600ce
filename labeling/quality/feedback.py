"""What an annotator learns of their own checked passes, once they are submitted and scored.

After a pass over a gold or screening item is scored (``GoldScore``: by the beat job for gold,
with the submit for screening), the annotator may see where it missed: the steps they rated
otherwise than the gold, with the gold's value. A pass *missed* when it did not match the gold
on every step it was scored on (``exact_share`` below 1), or rated none of them.

Nothing here is reachable before the submit: only passes that are submitted and scored appear,
and an ordinary pass never has a score, so the answer says nothing of work in progress nor of
any pass that matched. The gold read is the gold of now (a lead may have corrected it); a
solution that is no longer gold shows nothing.
"""
from labeling.models import Assignment, GoldScore, Rating, Step
from labeling.quality import gold

LATEST = 50  # the most recent missed passes shown
_ALL = 1 - 1e-9  # an exact_share at or above this matched every scored step


def missed_passes(annotator, project):
    """The annotator's latest missed checked passes in ``project``, newest first.

    ``[{"assignment", "problem", "submitted_at", "rated_none", "steps": [{"position",
    "alternative", "text", "yours", "expected"}]}]``: ``steps`` are those they rated
    otherwise than the gold; ``rated_none`` when they rated no step the gold rates.
    """
    if annotator is None:
        return []
    scores = (
        GoldScore.objects.filter(annotator=annotator, project=project, exact_share__lt=_ALL,
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
