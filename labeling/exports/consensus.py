"""Export format ``prm800k-consensus``: one PRM800K record per overlapping solution.

The record is laid out by ``labeling.exports.prm800k.record`` (the same builder as the
per-pass export), with the consensus of the solution's passes as its ratings (see
``labeling/quality/consensus.py``: majority, ties to the more critical value, a lead's adjudication
over both). Fields that differ from a pass's record:

- ``labeler``: ``00000000-0000-0000-0000-00000000c0de``, the fixed UUID that means
  "consensus" (``consensus.CONSENSUS_LABELER``); importing the file back gives a labeler of
  that UUID, whose passes never vote again;
- ``timestamp``: the latest submission among the voting passes; ``total_time``: null;
- ``generation``: the passes' (the highest, should they differ); ``is_quality_control_question``
  and ``is_initial_screening_question``: whether any pass was served as gold or screening, or
  the solution is one now;
- ``label.steps``: the solution's own steps in order, each with the alternatives that have a
  consensus; ``chosen_completion`` is the solution's own step (index 0) where its consensus
  is not -1. The steps end at the first position whose own step's consensus is -1 (as in
  phase 2) or has no votes; ``flagged`` is null (no single person's doubt);
- ``finish_reason``: ``found_error`` when they end at a -1, ``solution`` when every step of
  the solution has a consensus and none is -1, else null (the passes stopped early).

``ExportFilters`` choose the passes that vote (generations, submission window, gold items,
excluded annotators); a solution is exported when at least two of its passes vote.
"""
import json
import types

from django.db.models import Count

from ..quality.consensus import CONSENSUS_LABELER, adjudications, resolve, votes, voting_passes
from ..imports.prm800k_record import export_timestamp
from ..models import Solution, Step
from .prm800k import record
from .registry import register

BATCH = 500


@register("prm800k-consensus")
def export(filters):
    """Yield one PRM800K JSON line per overlapping solution, in solution id order."""
    dumps = json.JSONEncoder(ensure_ascii=False).encode
    passes = _passes(filters)
    last = 0
    while True:
        ids = list(
            passes.filter(solution_id__gt=last)
            .order_by("solution_id")
            .values("solution_id")
            .annotate(n=Count("pk"))
            .filter(n__gte=2)
            .values_list("solution_id", flat=True)[:BATCH]
        )
        if not ids:
            return
        for p in _consensus_passes(passes.filter(solution_id__in=ids), ids):
            yield dumps(record(p))
        last = ids[-1]


def _passes(filters):
    passes = voting_passes(project_id=filters.project_id, exclude_annotator_ids=filters.exclude_annotator_ids)
    if filters.generations is not None:
        passes = passes.filter(generation__in=list(filters.generations))
    if filters.since is not None:
        passes = passes.filter(submitted_at__gte=filters.since)
    if filters.until is not None:
        passes = passes.filter(submitted_at__lt=filters.until)
    if not filters.include_quality_control:
        passes = passes.filter(is_quality_control=False)
    return passes


def _consensus_passes(passes, ids):
    """A ``Pass``-shaped object per solution, carrying its consensus ratings."""
    served = {}
    for solution_id, generation, qc, screening, submitted_at in passes.values_list(
        "solution_id", "generation", "is_quality_control", "is_screening", "submitted_at"
    ):
        g, q, s, t = served.get(solution_id, (None, False, False, None))
        served[solution_id] = (
            generation if g is None or (generation is not None and generation > g) else g,
            q or qc,
            s or screening,
            submitted_at if t is None or (submitted_at is not None and submitted_at > t) else t,
        )
    table = votes(ids, passes=passes)
    rulings = adjudications(ids)
    texts = {}
    for solution_id, position, alternative, text, source in Step.objects.filter(
        solution_id__in=ids, author__isnull=True
    ).values_list("solution_id", "position", "alternative", "text", "source"):
        texts[(solution_id, position, alternative)] = (text, source)
    solutions = Solution.objects.filter(pk__in=ids).select_related("problem").order_by("pk")
    for solution in solutions:
        generation, qc, screening, last = served[solution.pk]
        consensus = resolve(table.get(solution.pk, {}), rulings.get(solution.pk, {}))
        positions, finish = _positions(solution, consensus, texts)
        own = sorted((p, t) for (s, p, a), (t, _) in texts.items() if s == solution.pk and a == 0)
        problem = solution.problem
        yield types.SimpleNamespace(
            id=None,
            labeler=str(CONSENSUS_LABELER),
            # Both names: the per-pass builder reads one or the other.
            timestamp=export_timestamp(last) if last is not None else None,
            submitted_at=last,
            generation=generation,
            is_quality_control=qc or solution.is_gold,
            is_screening=screening or solution.is_screening,
            total_time=None,
            finish_reason=finish,
            shape=None,
            solution_id=solution.pk,
            has_pre_generated=solution.has_pre_generated,
            final_answer=solution.final_answer,
            verifier_score=solution.verifier_score,
            num_steps=solution.num_steps,
            problem_id=problem.pk,
            problem=problem.problem,
            ground_truth_solution=problem.ground_truth_solution,
            ground_truth_answer=problem.ground_truth_answer,
            positions=positions,
            pre_generated=[t for _, t in own] if solution.has_pre_generated else None,
        )


def _positions(solution, consensus, texts):
    """``({position: rating rows}, finish_reason)`` along the solution's own steps."""
    own_positions = sorted(p for (s, p, a) in texts if s == solution.pk and a == 0)
    positions, finish = {}, None
    for position in own_positions:
        main = consensus.get((position, 0))
        if main is None:
            return positions, None
        rows = []
        for (p, a), c in sorted(consensus.items()):
            if p == position and (solution.pk, p, a) in texts:
                text, source = texts[(solution.pk, p, a)]
                # (alternative, text, source, own, value, flagged, chosen): see prm800k_passes.
                rows.append((a, text, source, False, c.value, None, a == 0 and c.value != -1))
        positions[position] = rows
        if main.value == -1:
            return positions, "found_error"
    if own_positions:
        finish = "solution"
    return positions, finish
