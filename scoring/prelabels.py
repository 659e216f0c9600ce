"""The PRM's pre-labels: a checkpoint's step scores kept as machine labels, with their provenance.

A generation run scores the pool with the champion (``scoring.jobs``); the step scores of the
solutions it selects, P(correct) per step, become that checkpoint's labels of each solution's
own steps (``labeling.models.StepLabel`` under one ``LabelSource`` of kind ``prm`` per
checkpoint): +1 from ``THRESHOLD`` up, -1 below, the score kept beside the value; a step the model
could not read (past its context) is recorded as an error, without a value. People's ratings are
never touched: these sit beside them, for the agreement between sources and the exports that
filter by it (``labeling.quality.sources``). No torch: the scores are rows already.
"""
from labeling.models import LabelSource, Step, StepLabel
from scoring.models import SolutionScore

# P(correct) at which a step counts as right: the PRM's two classes, read as a classifier would.
THRESHOLD = 0.5


def source_of(checkpoint):
    """The checkpoint's ``LabelSource`` in its project (made once)."""
    source, _ = LabelSource.objects.get_or_create(
        project_id=checkpoint.project_id, kind=LabelSource.PRM, name=f"PRM checkpoint {checkpoint.pk}",
        defaults={"details": {"checkpoint_id": checkpoint.pk, "base_model": checkpoint.base_model,
                              "generation": checkpoint.generation}})
    return source


def record(checkpoint, solution_ids):
    """Write ``checkpoint``'s labels of the listed solutions' own steps from its stored scores; return how
    many steps it labelled (a step it labelled before keeps that label: the scores do not change)."""
    scores = dict(SolutionScore.objects.filter(checkpoint=checkpoint, solution_id__in=list(solution_ids))
                  .values_list("solution_id", "step_scores"))
    if not scores:
        return 0
    source = source_of(checkpoint)
    steps = Step.objects.filter(solution_id__in=list(scores), alternative=0).values_list("pk", "solution_id",
                                                                                        "position")
    rows = []
    for pk, solution_id, position in steps:
        per_step = scores[solution_id] or []
        if position >= len(per_step):
            continue
        p = per_step[position]
        if p is None:
            rows.append(StepLabel(source=source, step_id=pk, status=StepLabel.ERROR,
                                  reason="the model could not read this step (past its context)"))
        else:
            rows.append(StepLabel(source=source, step_id=pk, value=1 if p >= THRESHOLD else -1, score=p))
    return len(StepLabel.objects.bulk_create(rows, batch_size=2000, ignore_conflicts=True))
