"""Gold proposals: gold drawn from the consensus of trusted annotators, for a lead to approve or reject.

``propose_gold_from_consensus`` takes the majority of the passes of annotators active in the
project (labeling/quality/consensus.py, standing from labeling/quality/screening.py);
approving makes the proposal's ratings the solution's gold (``gold.set_gold``). It lives
apart from gold.py because it needs the standing, and the standing needs gold's scoring.
"""
from collections import Counter

from django.db import transaction
from django.utils import timezone

from labeling import audit
from labeling.models import GoldProposal, Step
from labeling.quality import consensus, gold, screening


def propose_gold_from_consensus(solution, by=None):
    """Propose gold from the majority of trusted annotators' passes (see labeling/quality/consensus.py).

    Trusted: annotators active in the project (not screening, failed or paused). Needs at
    least two such passes. Replaces the solution's pending proposal, if any.
    """
    untrusted = screening.untrusted_annotator_ids(solution.project)
    table = consensus.consensus_ratings(solution, exclude_annotator_ids=untrusted, adjudicated=False)
    passes = consensus.pass_count(solution, exclude_annotator_ids=untrusted)
    if passes < 2 or not table:
        raise gold.GoldError(
            f"Solution {solution.pk} has {passes} submitted pass(es) by trusted annotators; a proposal needs 2.",
            field="solution",
        )
    ratings = [[p, a, c.value] for (p, a), c in sorted(table.items())]
    with transaction.atomic():
        proposal = GoldProposal.objects.select_for_update().filter(
            solution=solution, state=GoldProposal.PENDING
        ).first()
        if proposal is None:
            proposal = GoldProposal.objects.create(solution=solution, ratings=ratings, votes=passes)
        else:
            proposal.ratings, proposal.votes = ratings, passes
            proposal.save(update_fields=["ratings", "votes"])
        audit.record(solution.project_id, by, audit.GOLD_PROPOSED, target=f"solution {solution.pk}",
                     after={"proposal": proposal.pk, "ratings": ratings, "votes": passes})
    return proposal


def approve_proposal(proposal, by=None):
    """Make the proposal's ratings the solution's gold and mark it approved."""
    return _decide(proposal, GoldProposal.APPROVED, by)


def reject_proposal(proposal, by=None):
    return _decide(proposal, GoldProposal.REJECTED, by)


def _decide(proposal, state, by):
    with transaction.atomic():
        proposal = GoldProposal.objects.select_for_update().get(pk=proposal.pk)
        if proposal.state != GoldProposal.PENDING:
            raise gold.GoldError(f"This proposal is already {proposal.state}.", field="proposal")
        if state == GoldProposal.APPROVED:  # logged as gold made or edited
            gold.set_gold(proposal.solution, {(p, a): v for p, a, v in proposal.ratings}, by,
                          reason=f"approved proposal {proposal.pk}")
        else:
            audit.record(proposal.solution.project_id, by, audit.PROPOSAL_REJECTED,
                         target=f"solution {proposal.solution_id}", before={"proposal": proposal.pk, "state": proposal.state},
                         after={"proposal": proposal.pk, "state": state})
        proposal.state, proposal.decided_by, proposal.decided_at = state, by, timezone.now()
        proposal.save(update_fields=["state", "decided_by", "decided_at"])
    return proposal


def evidence(proposals):
    """``{proposal id: {"problem", "steps": [{"position", "alternative", "text", "value", "votes"}]}}``.

    The votes of the trusted annotators' passes now (as ``propose_gold_from_consensus`` counts
    them), beside each proposed value: what a lead weighs before approving.
    """
    proposals = list(proposals)
    answer = {}
    by_project = {}
    for proposal in proposals:
        by_project.setdefault(proposal.solution.project, []).append(proposal)
    for project, group in by_project.items():
        ids = [p.solution_id for p in group]
        table = consensus.votes(ids, exclude_annotator_ids=screening.untrusted_annotator_ids(project))
        texts = {
            (s, p, a): t for s, p, a, t in Step.objects.filter(solution_id__in=ids, author__isnull=True)
            .values_list("solution_id", "position", "alternative", "text")
        }
        for proposal in group:
            slot_votes = table.get(proposal.solution_id, {})
            answer[proposal.pk] = {
                "problem": proposal.solution.problem.problem,
                "steps": [
                    {"position": p, "alternative": a, "value": v, "text": texts.get((proposal.solution_id, p, a), ""),
                     "votes": {str(x): n for x, n in sorted(Counter(slot_votes.get((p, a), ())).items())}}
                    for p, a, v in proposal.ratings
                ],
            }
    return answer
