"""What each active-learning generation selected, and what people found in it.

For every generation (number >= 0) of a project, over the solutions it selected (gold and
screening items left out, as they are served to check annotators, not chosen by the PRM):

- ``selected``: how many solutions it chose; ``wrong_answer``: how many of those have a final
  answer graded wrong (the "convincing wrong answers" the selection aims at);
  ``mean_verifier_score``: the PRM's mean score of them;
- ``rated``: selected solutions with at least one submitted pass; ``found_wrong``: rated
  solutions where at least one submitted pass ended ``found_error``; ``hit_rate``:
  ``found_wrong / rated`` (None before anything is rated), the active-learning hit rate:
  how often the PRM's pick really held a wrong step people could find;
- ``passes``: submitted passes; ``median_seconds``: the median time a pass took to rate;
  ``person_hours``: the time of all passes together; ``first_submitted_at`` /
  ``last_submitted_at``: when rating of the generation started and (so far) ended.

What people found against what the PRM expected, over the rated selected solutions:
``people_wrong``: rated ones that are wrong by people's reading, a submitted pass that ended
``found_error`` (the hit rule above: the pass stopped at its first -1) or a final answer graded
wrong; ``people_wrong_share``: ``people_wrong / rated``; ``expected_wrong_share``: the mean over
the rated ones with a PRM score of ``1 - verifier_score``, the PRM's own probability, when it
selected them, that the solution is wrong (``verifier_score`` is its P(correct) of the whole
solution); ``expected_of``: how many rated ones had a score. Where ``people_wrong_share`` is well
above ``expected_wrong_share`` the PRM picked wrong solutions it believed right, which is what
convincing-wrong selection looks for. Both are None when no rated solution counts.

``strategy`` and ``selection`` say how the generation was chosen (``scoring.prm.strategies``),
and ``by_strategy`` splits its figures by the strategy that picked each solution (selected,
rated, found_wrong, hit_rate and the people-against-PRM figures above), so the strategies of a
mixture can be compared on the same generation. ``picks`` lists the first few selected solutions in selection order (rank, the PRM's
score, whether the final answer is right, whether people found an error, and ``reason``: why it
was picked), so a researcher sees what the PRM went for. Passes served as gold are left out. The median is taken in Python so the figures
come out the same on PostgreSQL and on the demo's SQLite.
"""
import statistics
from collections import defaultdict

from django.db.models import Avg, Count, F, Q

from labeling.models import Assignment, FinishReason, Generation, Solution


def generation_stats(project, picks=5):
    """One dict per generation of ``project``, by generation number, with ``picks`` examples."""
    generations = list(Generation.objects.filter(project=project, number__gte=0).order_by("number"))
    selected = Solution.objects.filter(
        project=project, generation__in=[g.pk for g in generations], is_gold=False, is_screening=False
    )
    by_generation = {
        row["generation"]: row
        for row in selected.order_by()
        .values("generation")
        .annotate(selected=Count("pk"), wrong_answer=Count("pk", filter=Q(is_correct=False)),
                  mean_verifier_score=Avg("verifier_score"))
    }
    passes = Assignment.objects.filter(
        project=project, state=Assignment.SUBMITTED, is_quality_control=False, solution__in=selected
    ).order_by()
    rated, found_wrong = defaultdict(set), defaultdict(set)
    times, first, last = defaultdict(list), {}, {}
    for generation_id, solution_id, finish_reason, total_time, submitted_at in passes.values_list(
        "solution__generation_id", "solution_id", "finish_reason", "total_time", "submitted_at"
    ):
        rated[generation_id].add(solution_id)
        if finish_reason == FinishReason.FOUND_ERROR:
            found_wrong[generation_id].add(solution_id)
        times[generation_id].append(total_time)
        if submitted_at is not None:
            first[generation_id] = min(first.get(generation_id, submitted_at), submitted_at)
            last[generation_id] = max(last.get(generation_id, submitted_at), submitted_at)
    rows = [_figures(g, by_generation.get(g.pk, {}), rated[g.pk], found_wrong[g.pk], times[g.pk],
                     first.get(g.pk), last.get(g.pk)) for g in generations]
    picked_by, judged = defaultdict(dict), defaultdict(dict)
    for generation_id, solution_id, strategy, is_correct, score in selected.values_list(
        "generation_id", "pk", "selection_reason__strategy", "is_correct", "verifier_score"
    ):
        picked_by[generation_id][solution_id] = strategy or ""
        judged[generation_id][solution_id] = (is_correct, score)
    for row, g in zip(rows, generations):
        row["strategy"], row["selection"] = g.strategy, g.selection
        row.update(people_versus_prm(rated[g.pk], found_wrong[g.pk], judged[g.pk]))
        row["by_strategy"] = _by_strategy(picked_by[g.pk], rated[g.pk], found_wrong[g.pk], judged[g.pk])
        row["picks"] = _picks(selected.filter(generation=g), picks, rated[g.pk], found_wrong[g.pk])
    return rows


def people_versus_prm(rated, found_wrong, judged):
    """``people_wrong``, ``people_wrong_share``, ``expected_wrong_share``, ``expected_of`` of rated solutions.

    ``judged``: ``{solution id: (is_correct, verifier_score)}`` of the selected solutions.
    """
    wrong = {pk for pk in rated if pk in found_wrong or judged.get(pk, (None, None))[0] is False}
    expected = [1 - judged[pk][1] for pk in rated if pk in judged and judged[pk][1] is not None]
    return {
        "people_wrong": len(wrong),
        "people_wrong_share": len(wrong) / len(rated) if rated else None,
        "expected_wrong_share": sum(expected) / len(expected) if expected else None,
        "expected_of": len(expected),
    }


def _by_strategy(picked_by, rated, found_wrong, judged):
    # Per strategy ("" where none was recorded): its picks, how many are rated, how many found wrong.
    picks = defaultdict(set)
    for solution_id, strategy in picked_by.items():
        picks[strategy].add(solution_id)
    figures = []
    for strategy in sorted(picks):
        mine = picks[strategy]
        row = {"strategy": strategy, "selected": len(mine), "rated": len(mine & rated),
               "found_wrong": len(mine & found_wrong)}
        row["hit_rate"] = row["found_wrong"] / row["rated"] if row["rated"] else None
        row.update(people_versus_prm(mine & rated, found_wrong, judged))
        figures.append(row)
    return figures


def excerpt(text, limit=300):
    """``text`` up to ``limit`` characters, cut at a space and marked with "…" when shortened."""
    if len(text) <= limit:
        return text
    head = text[:limit]
    if not text[limit].isspace() and " " in head:  # a word runs past the limit: leave it out
        head = head[:head.rfind(" ")]
    return head.rstrip() + "…"


def _picks(solutions, limit, rated, found_wrong):
    if not limit:
        return []
    chosen = solutions.select_related("problem").order_by(F("selection_rank").asc(nulls_last=True), "pk")[:limit]
    return [
        {"solution": s.pk, "rank": s.selection_rank, "verifier_score": s.verifier_score, "is_correct": s.is_correct,
         "final_answer": s.final_answer, "problem": excerpt(s.problem.problem), "rated": s.pk in rated,
         "found_wrong": s.pk in found_wrong, "reason": s.selection_reason}
        for s in chosen
    ]


def _figures(generation, chosen, rated, found_wrong, times, first, last):
    known = [t for t in times if t is not None]
    return {
        "generation": generation.number,
        "created_at": generation.created_at,
        "selected": chosen.get("selected", 0),
        "wrong_answer": chosen.get("wrong_answer", 0),
        "mean_verifier_score": chosen.get("mean_verifier_score"),
        "rated": len(rated),
        "found_wrong": len(found_wrong),
        "hit_rate": len(found_wrong) / len(rated) if rated else None,
        "passes": len(times),
        "median_seconds": statistics.median(known) / 1000 if known else None,
        "person_hours": sum(known) / 3_600_000 if known else 0.0,
        "first_submitted_at": first,
        "last_submitted_at": last,
    }
