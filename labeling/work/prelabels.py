"""What an annotator sees of machine pre-labels, and the traps that measure rubber-stamping.

A project's policy (``Project.prelabel_mode``) is taken onto each assignment at its hand-out
(``Assignment.prelabel_mode``, ``prelabel_source``), so the figures that compare passes with and
without pre-labels read what each pass was actually shown:

- ``hidden`` (the default, PRM800K's practice): none;
- ``suggest``: the source's value beside each step it labelled;
- ``verify``: the same, for the annotator to confirm or correct step by step.

A pre-label is shown when its source labelled the step before the hand-out (a label the judge
writes later never appears in a pass already under way, so the pass and the figures agree).

**Traps.** A gold pass, where pre-labels are shown, carries a trap with probability
``Project.trap_rate`` (drawn at the hand-out, like gold itself, from server-side randomness):
on one step whose gold value is known and that has a pre-label, the value shown is wrong (-1
where gold says +1 or 0, +1 where it says -1). Which step is fixed per assignment by a keyed
hash of its id, so a reload shows the same. A trap looks like any pre-label: the payload has
the same keys for every assignment, every payload with pre-labels reads the gold table (an
ordinary one reads nothing from it), and reasons are shown only while the project sets no traps:
a trap's reason would have to be made up, and a made-up reason would tell.

Accepting a wrong pre-label is a gold miss on that step (gold scoring compares with gold), so it
counts toward pausing like any other; ``wrong_prelabels`` counts them per annotator for the
dashboard (natural mistakes of the source on gold steps and planted ones alike).
"""
import hashlib
import hmac
from collections import defaultdict

from django.conf import settings

from labeling.models import Assignment, GoldRating, Project, Rating, Step, StepLabel

HIDDEN = Project.PRELABELS_HIDDEN


def policy_at_hand_out(project, solution, draw):
    """The fields a new assignment takes: ``{"prelabel_mode", "prelabel_source_id", "prelabel_trap"}``.
    ``draw`` is a uniform number in [0, 1) from the queue's server-side randomness."""
    mode = project.prelabel_mode if project.prelabel_source_id else HIDDEN
    return {"prelabel_mode": mode, "prelabel_source_id": project.prelabel_source_id if mode != HIDDEN else None,
            "prelabel_trap": mode != HIDDEN and solution.is_gold and draw < project.trap_rate}


def shown(assignment, steps):
    """``[{"position", "alternative", "value", "reason"}]``: the pre-labels ``assignment`` shows on ``steps``
    (``Step`` rows it sees, by the numbers it sees them as: ``[(step, shown alternative)]``)."""
    if assignment.prelabel_mode == HIDDEN or assignment.prelabel_source_id is None:
        return []
    labels, gold = _read(assignment, [step.pk for step, _ in steps])
    trap = _trap(assignment, labels, gold)
    reasons = assignment.project.trap_rate == 0
    out = []
    for step, alternative in steps:
        if step.pk not in labels:
            continue
        value, reason = labels[step.pk]
        if trap is not None and step.pk == trap[0]:
            value = trap[1]
        out.append({"position": step.position, "alternative": alternative, "value": value,
                    "reason": reason if reasons else ""})
    return out


def _read(assignment, step_ids):
    """The source's usable labels of the steps made before the hand-out, and the steps' gold values."""
    labels = _visible(_labels([assignment.prelabel_source_id], step_ids), assignment)
    # Read for every payload with pre-labels, gold or not: the statement must not tell them apart.
    return labels, _gold(step_ids)


def _labels(source_ids, step_ids):
    """``{(source id, step id): (value, reason, created_at)}`` of the usable labels."""
    rows = StepLabel.objects.filter(source_id__in=source_ids, step_id__in=step_ids, value__isnull=False)
    return {(source, step): rest for source, step, *rest in rows.values_list(
        "source_id", "step_id", "value", "reason", "created_at")}


def _visible(labels, assignment):
    """``{step id: (value, reason)}``: the labels of the assignment's source made before its hand-out."""
    return {step: (value, reason) for (source, step), (value, reason, created) in labels.items()
            if source == assignment.prelabel_source_id and created <= assignment.handed_out_at}


def _gold(step_ids):
    return dict(GoldRating.objects.filter(step_id__in=step_ids).values_list("step_id", "value"))


def _trap(assignment, labels, gold):
    """``(step id, wrong value)`` of the assignment's trap, or None."""
    if not assignment.prelabel_trap:
        return None
    candidates = sorted(step for step in labels if gold.get(step) is not None)
    if not candidates:
        return None
    key = settings.SECRET_KEY.encode()
    digest = hmac.new(key, f"stepmark-trap:{assignment.pk}".encode(), hashlib.sha256).digest()
    step = candidates[int.from_bytes(digest[:8], "big") % len(candidates)]
    return step, -1 if gold[step] >= 0 else 1


def wrong_prelabels(project, annotator_ids=None):
    """``{annotator id: (wrong pre-labels shown, of them accepted)}`` over their submitted gold passes
    with pre-labels: a step whose shown value differs from gold (a trap, or the source's own
    mistake), accepted when the pass rated it with that value."""
    passes = Assignment.objects.filter(project=project, state=Assignment.SUBMITTED, is_quality_control=True,
                                       prelabel_source_id__isnull=False).exclude(prelabel_mode=HIDDEN)
    if annotator_ids is not None:
        passes = passes.filter(annotator_id__in=list(annotator_ids))
    passes = list(passes)
    ratings = defaultdict(dict)
    for assignment_id, step_id, value in Rating.objects.filter(assignment__in=[p.pk for p in passes]).values_list(
            "assignment_id", "step_id", "value"):
        ratings[assignment_id][step_id] = value
    # The trap is drawn among the steps the pass was shown, rated or not: its solution's model steps.
    model_steps = defaultdict(set)
    for solution_id, step_id in Step.objects.filter(solution_id__in={p.solution_id for p in passes},
                                                    author__isnull=True).values_list("solution_id", "pk"):
        model_steps[solution_id].add(step_id)
    steps = set().union(*model_steps.values())
    labels = _labels({p.prelabel_source_id for p in passes}, steps)
    gold = _gold(steps)
    out = defaultdict(lambda: [0, 0])
    for assignment in passes:
        rated = ratings[assignment.pk]
        seen = model_steps[assignment.solution_id]
        shown_labels = {step: label for step, label in _visible(labels, assignment).items() if step in seen}
        trap = _trap(assignment, shown_labels, gold)
        for step, (value, _) in shown_labels.items():
            if trap is not None and step == trap[0]:
                value = trap[1]
            if step in gold and _label(value) != _label(gold[step]):
                out[assignment.annotator_id][0] += 1
                out[assignment.annotator_id][1] += rated.get(step) == value
    return {annotator: tuple(counts) for annotator, counts in out.items()}


def _label(value):
    """A PRM's training label of a value (0 counts as right): what "wrong" means for a pre-label."""
    return value >= 0
