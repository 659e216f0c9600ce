"""Do pre-labels help, and does anyone just accept them? The dashboard's pre-label figures.

- ``by_mode``: per pre-label mode a pass was handed out under (hidden, suggest, verify; see
  ``labeling.work.prelabels``): submitted passes, median seconds per rated step, and how often a
  rating matches the final label, the majority of the *other* passes' ratings of that step (a
  rating whose others tie, or that nobody else rated, is not compared), so that pre-labels are
  judged by agreement with people who rated the step independently of this pass.
- ``wrong_prelabels`` (in ``labeling.work.prelabels``): per annotator, the wrong pre-labels their
  gold passes showed (traps and the source's own mistakes) and how many they accepted.
"""
from collections import Counter, defaultdict
from statistics import median

from labeling.models import Assignment, Project, Rating

MODES = [mode for mode, _ in Project.PRELABEL_MODES]


def by_mode(project, *, generation=None):
    """``[{"mode", "passes", "seconds_per_step", "agreement", "compared"}]`` for every mode with a pass;
    empty where no pass was ever shown pre-labels (nothing to compare, and no rating read)."""
    passes = Assignment.objects.filter(project=project, state=Assignment.SUBMITTED, annotator__isnull=False)
    if generation is not None:
        passes = passes.filter(generation=generation)
    if not passes.exclude(prelabel_mode=Project.PRELABELS_HIDDEN).exists():
        return []
    meta = {pk: (mode, total, solution) for pk, mode, total, solution in passes.values_list(
        "pk", "prelabel_mode", "total_time", "solution_id")}
    ratings = Rating.objects.filter(assignment_id__in=list(meta), value__isnull=False, step__author__isnull=True)
    votes = defaultdict(list)  # step -> [(assignment, value)]
    rated = Counter()
    for assignment_id, step_id, value in ratings.values_list("assignment_id", "step_id", "value").iterator(
            chunk_size=10_000):
        votes[step_id].append((assignment_id, value))
        rated[assignment_id] += 1
    matched, compared = Counter(), Counter()
    for ballots in votes.values():
        if len(ballots) < 2:
            continue
        counts = Counter(value for _, value in ballots)
        for assignment_id, value in ballots:
            others = counts.copy()
            others[value] -= 1
            top = max(others.values())
            leaders = [v for v, n in others.items() if n == top and n > 0]
            if len(leaders) != 1:
                continue
            mode = meta[assignment_id][0]
            compared[mode] += 1
            matched[mode] += leaders[0] == value
    per_step = defaultdict(list)
    for pk, (mode, total, _) in meta.items():
        if total and rated[pk]:
            per_step[mode].append(total / 1000 / rated[pk])
    out = []
    for mode in MODES:
        n = sum(1 for m, _, _ in meta.values() if m == mode)
        if not n:
            continue
        out.append({"mode": mode, "passes": n,
                    "seconds_per_step": round(median(per_step[mode]), 2) if per_step[mode] else None,
                    "agreement": round(matched[mode] / compared[mode], 4) if compared[mode] else None,
                    "compared": compared[mode]})
    return out
