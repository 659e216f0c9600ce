"""Labelling rules, enforced on the server: saving a draft and submitting an assignment.

A rating item is ``{"position": int, "alternative": int (default 0), "value": -1|0|1|None,
"flagged": bool|None, "chosen": bool}``; ``value`` None leaves the step unrated (and clears an
earlier rating). ``chosen`` true picks the alternative a phase-1 pass goes on from after a -1
(PRM800K's ``chosen_completion``, see ``_continuation``); it counts in the request that carries
it (a draft does not keep it: the page sends it with the submit). In projects that allow human
steps an item may instead carry ``"human_text"`` (and no alternative): the annotator's own step
at that position, allowed once every model completion there is rated -1. It is stored as a Step
with ``source='human'``, ``author`` the assignment and the next free alternative index, and
rated like any other.

Rules are checked on the ratings as they stand after the change (the stored draft merged
with the new items), so a draft may be built in any number of saves. Every function raises
``LabelingError(message, field=...)`` for input a person must fix; the API maps it to 400. A
message numbers steps as the page does, from 1 ("step 3" is ``position`` 2).

The rules live here only. The page's copy, frontend/src/workspace/sequence.js, offers a finish only where these rules
take it; tests/vectors/submission_rules.json holds scenarios that both must answer alike
(tests/labeling/work/test_rule_vectors.py here, frontend/tests/sequence.test.js there).

``total_time`` is the time spent labelling in milliseconds: from hand-out to submit,
without the time the tab was hidden. The client counts its visible time and sends it as
``client_elapsed_ms``; the server clamps it to [0, wall time since hand-out], never trusting
more. Without a client figure the wall time since hand-out is used.

Undo (``unsubmit``): for ``UNDO_SECONDS`` after a submit its annotator may reopen the pass,
ratings as sent, as long as nothing has used it yet (the rule is in ``unsubmit``'s docstring).
"""
from datetime import timedelta

from django.db import transaction
from django.db.models import Case, Count, Exists, F, FilteredRelation, OuterRef, Q, Value, When
from django.utils import timezone

from labeling.errors import DomainError
from labeling.models import Adjudication, Annotator, Assignment, FinishReason, GoldProposal, GoldScore, Rating, Step
from labeling.models.prepared import prepared
from labeling.quality import screening
from labeling.work import queue
from labeling.work.revision import CHANGED, of_sheet, stale


class LabelingError(DomainError):
    """Input that breaks a labelling rule; ``field`` names the offending input.

    A submit refused for its finish keeps the ratings as a draft: its refusal then says the
    draft's new ``revision`` (labeling/work/revision.py), so that the client's next save is based on it.
    """

    revision = None

    def as_answer(self):
        answer = super().as_answer()
        if self.revision is not None:
            answer["revision"] = self.revision
        return answer


class Entry:
    """One candidate step of the solution with this assignment's rating of it."""

    def __init__(self, step, value=None, flagged=None, item=None, stored=False, chosen=False):
        self.step = step
        self.value = value
        self.flagged = flagged
        self.item = item  # index of the request item that set it, for error messages
        self.stored = stored  # a rating row exists (before this change)
        self.chosen = chosen  # the stored row's chosen flag
        self.picked = False  # this request's "chosen": true (the annotator's pick, see _continuation)

    @property
    def human(self):
        return self.step.source == Step.HUMAN

    @property
    def field(self):
        return "ratings" if self.item is None else f"ratings[{self.item}]"


def save_draft(assignment, ratings, *, revision=None, now=None):
    """Store ``ratings`` on an unsubmitted assignment and renew its lease.

    ``revision``: the one the client's change is based on (None: not checked); see ``_merge_based``.
    """
    now = now or timezone.now()
    with transaction.atomic():
        solution = queue.lock_solution(assignment)
        _require_open(assignment, solution, now)
        change = _merge_based(assignment, ratings, read_sheet(assignment), revision)
        _write(assignment, change, now)
        queue.touch(assignment, now)
    assignment.sheet = change.sheet
    return assignment


def submit(assignment, *, finish_reason, note="", ratings=None, submit_key=None, client_elapsed_ms=None, revision=None,
           now=None):
    """Finish the assignment: check the ratings against ``finish_reason`` and record it.

    Idempotent: a retry with the ``submit_key`` of the stored submission returns it as is.
    When the ratings are valid but do not fit ``finish_reason``, they are kept as a draft and
    the error is raised; malformed input stores nothing.

    Afterwards (as after ``save_draft``) ``assignment.sheet`` holds the steps it may rate
    with its ratings as stored, ``{(position, alternative): Entry}``, so the response needs
    no second read; a retried submit leaves it unset.
    """
    now = now or timezone.now()
    with transaction.atomic():
        solution = queue.lock_solution(assignment)
        if assignment.state == Assignment.SUBMITTED:
            if submit_key is not None and submit_key == assignment.submit_key:
                return assignment
            raise LabelingError("This assignment is already submitted.", field="submit_key")
        if finish_reason not in FinishReason.values:
            raise LabelingError(
                f"Unknown finish reason {finish_reason!r}: use one of {', '.join(FinishReason.values)}.",
                field="finish_reason",
            )
        elapsed = total_time(assignment, client_elapsed_ms, now)
        _require_open(assignment, solution, now)
        change = _merge_based(assignment, ratings or [], read_sheet(assignment), revision)
        try:
            _check_finish(assignment.project, change.sheet, finish_reason, note or "")
        except LabelingError as refused:
            # Keep what the person rated as a draft: nothing they wrote is lost.
            _write(assignment, change, now)
            queue.touch(assignment, now)
            failure = refused
            failure.revision = of_sheet(change.sheet)
        else:
            failure = None
            assignment.state = Assignment.SUBMITTED
            assignment.finish_reason = finish_reason
            assignment.finish_note = note or ""
            assignment.submit_key = submit_key
            assignment.submitted_at = assignment.last_activity_at = now
            assignment.total_time = elapsed
            _write(assignment, change, now, finish_reason=finish_reason)
            assignment.save(update_fields=_SUBMIT_FIELDS)
            # A screening pass is scored (and may end the screening) with the submit. A gold pass
            # is not: a scheduled job scores it (labeling/quality/gold_passes.py), so that a gold
            # submit is the same request as any other.
            if solution.is_screening:
                screening.after_submit(assignment, solution, now)
    if failure is not None:
        raise failure
    assignment.sheet = change.sheet
    return assignment


# How long after its submit a pass may be reopened by its annotator (``unsubmit``): long enough to
# press the key the confirmation offers, short enough that nothing downstream waits on it. The gold
# sweep leaves a pass alone for longer (labeling/quality/gold_passes.py), so that no gold pass is
# scored inside the window and an undo answers alike for gold and ordinary work.
UNDO_SECONDS = 10

UNDO_WINDOW_PASSED = (f"This pass can no longer be reopened: an undo is possible for {UNDO_SECONDS} seconds "
                      "after the submit. It stays submitted as sent.")
UNDO_USED = "This pass can no longer be reopened: it has already been used (scored or counted in a review)."
UNDO_NOT_SUBMITTED = "This assignment is not submitted: there is nothing to undo."


def unsubmit(assignment, *, now=None):
    """Reopen the annotator's just-submitted pass: active again, ratings as sent, lease renewed.

    Allowed only within ``UNDO_SECONDS`` of ``submitted_at`` and while nothing has used the
    pass. What consumes a submitted pass, and so makes it used:

    - a ``GoldScore`` of it: screening passes are scored with their submit (their undo is
      always refused; the annotator knows they are in screening), gold passes by the sweep,
      which waits past the window, so for a gold pass this never holds within it;
    - a ``GoldProposal`` of its solution created since the submit (its votes may count it);
    - an ``Adjudication`` of one of its solution's steps decided since the submit (a lead
      ruled having seen its vote).

    Consensus figures and the dashboard read submitted passes live; the dashboard's cache is
    told (labeling/stats/cache.py ``on_submit``: the save writes ``submitted_at``).

    Gold must stay unobservable: the checks and writes are the same statements for every pass;
    nothing here asks whether the solution is gold.

    Idempotent: an assignment already active is returned as is. Locks: the annotator's row, then
    the solution's, as the queue takes them (labeling/work/queue.py); the gold sweep takes the
    annotator's row before it scores, so an undo and a score never pass each other. The
    reopened pass keeps its slot (submitted and active are both live) and gets a fresh lease.
    Refusals are ``LabelingError`` with status 409.
    """
    now = now or timezone.now()
    with transaction.atomic():
        Annotator.objects.select_for_update().filter(pk=assignment.annotator_id).first()
        solution = queue.lock_solution(assignment)
        if assignment.state == Assignment.ACTIVE:
            return assignment
        if not assignment.project.is_active:
            raise LabelingError(PROJECT_CLOSED, status=409)
        if assignment.state != Assignment.SUBMITTED or assignment.submitted_at is None:
            raise LabelingError(UNDO_NOT_SUBMITTED, status=409)
        if (now - assignment.submitted_at).total_seconds() > UNDO_SECONDS:
            raise LabelingError(UNDO_WINDOW_PASSED, status=409)
        if solution.is_screening or assignment.is_screening or _used(assignment):
            raise LabelingError(UNDO_USED, status=409)
        assignment.state = Assignment.ACTIVE
        assignment.finish_reason = None
        assignment.finish_note = ""
        assignment.submit_key = None
        assignment.submitted_at = None
        assignment.last_activity_at = now
        assignment.lease_expires_at = now + timedelta(seconds=assignment.project.lease_seconds)
        assignment.save(update_fields=[*_SUBMIT_FIELDS, "lease_expires_at"])
    return assignment


def _used(assignment):
    """Whether something has consumed the submitted pass (``unsubmit`` lists what), in one statement."""
    since = assignment.submitted_at
    return Assignment.objects.filter(pk=assignment.pk).annotate(
        scored=Exists(GoldScore.objects.filter(assignment=OuterRef("pk"))),
        proposed=Exists(GoldProposal.objects.filter(solution=OuterRef("solution_id"), created_at__gte=since)),
        ruled=Exists(Adjudication.objects.filter(step__solution=OuterRef("solution_id"), decided_at__gte=since)),
    ).filter(Q(scored=True) | Q(proposed=True) | Q(ruled=True)).exists()


def total_time(assignment, client_elapsed_ms, now):
    """Milliseconds spent: the client's visible time clamped to the wall time since hand-out."""
    start = assignment.handed_out_at or assignment.created_at
    wall = max(0, int((now - start).total_seconds() * 1000))
    if client_elapsed_ms is None:
        return wall
    return min(max(int(client_elapsed_ms), 0), wall)


PROJECT_CLOSED = (
    "This project has been deactivated: its work can no longer be saved or submitted. "
    "What you saved before is kept; ask the project's lead."
)


def _require_open(assignment, solution, now):
    if not assignment.project.is_active:
        raise LabelingError(PROJECT_CLOSED, status=409)
    if assignment.state == Assignment.SUBMITTED:
        raise LabelingError("This assignment is already submitted and can no longer change.")
    queue.require_lease(assignment, solution, now)


# Ratings -------------------------------------------------------------------------------


_SUBMIT_FIELDS = ["state", "finish_reason", "finish_note", "submit_key", "submitted_at", "last_activity_at", "total_time"]
def read_sheet(assignment, fresh=False):
    """{(position, alternative): Entry} for the steps this assignment may rate (every model step,
    human steps it wrote), each with its rating; read under the solution's lock, in one statement
    (the steps with this assignment's rating joined). ``fresh``: just handed out, so it has no
    rating yet (and none is looked for)."""
    sheet = {}
    for step in _sheet_steps(assignment.pk, assignment.solution_id, fresh):
        stored = getattr(step, "rating_id", None) is not None
        sheet[(step.position, step.alternative)] = (
            Entry(step, step.rated_value, step.rated_flagged, stored=True, chosen=step.rated_chosen) if stored
            else Entry(step))
    return sheet


@prepared
def _sheet_steps(assignment_id, solution_id, fresh):
    steps = _rateable(assignment_id, solution_id).order_by("position", "alternative")
    if fresh:
        return steps
    mine = FilteredRelation("ratings", condition=Q(ratings__assignment=assignment_id))
    return steps.annotate(mine=mine).annotate(
        rating_id=F("mine__id"), rated_value=F("mine__value"), rated_flagged=F("mine__flagged"),
        rated_chosen=F("mine__chosen"))


def _rateable(assignment_id, solution_id):
    """The steps an assignment may rate: every model step of its solution, and the human steps it wrote."""
    return Step.objects.filter(~Q(source=Step.HUMAN) | Q(author_id=assignment_id), solution_id=solution_id)


class Change:
    """Ratings merged into the sheet and checked, not yet written (see ``_write``)."""

    def __init__(self, sheet, touched, removed):
        self.sheet, self.touched, self.removed = sheet, touched, removed


def check_size(assignment, items):
    """Refuse a ratings list longer than the steps it may name, before any of its items is read.

    A request names each step at most once (``_merge`` refuses a repeat), and the annotator's own
    step at most once per position where the project takes them, so a longer list breaks the
    rules whatever it holds: it is refused whole, and 85,000 copies of one rating cost a count
    instead of 85,000 checked items. The API calls this before it checks the items' shape.
    Nearly every request holds at most an item per position and a few more: up to
    ``FREE_ITEMS`` beyond the positions pass on a comparison (``_merge`` then judges them one
    by one, a cost that small lists bound), and only a longer list costs a query.
    """
    if not isinstance(items, list) or len(items) <= assignment.solution.num_steps + FREE_ITEMS:
        return
    counts = _rateable(assignment.pk, assignment.solution_id).aggregate(steps=Count("pk"), positions=Count("position", distinct=True))
    most = counts["steps"] + (counts["positions"] if assignment.project.allow_human_steps else 0)
    if len(items) > most:
        raise LabelingError(f"ratings holds {len(items):,} items, but this solution has {most:,} steps you may rate:"
                             " name each step once.", field="ratings")


FREE_ITEMS = 32


def _merge_based(assignment, items, sheet, base):
    """``_merge``, refused with a 409 when the change is based on a ``base`` revision that is no
    longer the stored one (labeling/work/revision.py: another tab or device saved since)."""
    if base is None:
        return _merge(assignment, items, sheet)
    before = of_sheet(sheet)  # _merge changes the entries in place
    try:
        change = _merge(assignment, items, sheet)
    except LabelingError:
        if base != before:  # a rule refuses it because the page is behind: say that instead
            raise LabelingError(CHANGED, field="revision", status=409) from None
        raise
    if stale(base, before, of_sheet(change.sheet), items):
        raise LabelingError(CHANGED, field="revision", status=409)
    return change


def _merge(assignment, items, sheet):
    """Merge ``items`` into the stored ratings (``sheet``) and check the result; nothing is written yet."""
    project = assignment.project
    touched, removed, named = {}, [], {}
    for i, item in enumerate(items):
        entry = _merge_item(project, assignment, sheet, i, item)
        first, _ = named.setdefault(id(entry), (i, entry))  # the entry held: its id stays its own
        if first != i:
            step = entry.step
            what = f"your own step {step.position + 1}" if entry.human else \
                f"step {step.position + 1}, alternative {step.alternative}"
            raise LabelingError(f"ratings[{first}] already names {what}: name each step once.", field=f"ratings[{i}]")
        if entry.step.author_id is not None and (entry.step.position, entry.step.alternative) not in sheet:
            removed.append(entry.step)  # human_text null: the annotator withdrew their step
            touched.pop(id(entry), None)
        else:
            touched[id(entry)] = entry
    _check_human_steps(sheet)
    _check_picks(sheet)
    if project.stop_at_first_error:
        _check_order(sheet)
    return Change(sheet, list(touched.values()), removed)


def _write(assignment, change, now, finish_reason=None):
    """Store a merged change; with the ``finish_reason`` of a submit, also the chosen flag of every rating."""
    submitting = finish_reason is not None
    for step in change.removed:
        if step.pk is not None:
            step.delete()
    for entry in change.touched:
        if entry.human:
            entry.step.save()
    chosen = _chosen_steps(change.sheet, finish_reason) if submitting else set()
    # A cleared rating (undo) removes the row: an export must not list a step the annotator
    # un-rated as "shown, rated null".
    cleared = [e for e in change.touched if e.value is None and not e.human and e.step.pk]
    if cleared:
        Rating.objects.filter(assignment=assignment, step_id__in=[e.step.pk for e in cleared]).delete()
    written = [e for e in change.touched if e.value is not None or e.human]
    if written:
        _upsert(assignment, [(e.step.pk, e.value, e.flagged, e.step.pk in chosen) for e in written], now, submitting)
    if submitting:
        # Rows stored earlier and not rewritten above whose flag is wrong (a draft's are all false).
        rewritten = {id(e) for e in written}
        wrong = [e for e in change.sheet.values() if e.stored and id(e) not in rewritten and e.chosen != (e.step.pk in chosen)]
        if wrong:
            _set_chosen(assignment, [e.step.pk for e in wrong], chosen)
    # The sheet now says what is stored (the response is built from it).
    for entry in cleared:
        entry.stored = False
    for entry in written:
        entry.stored = True


def _merge_item(project, assignment, sheet, i, item):
    # The item's shape was checked by the API's serializer (work_serializers.RatingItemSerializer).
    where = f"ratings[{i}]"
    position, value, flagged = item["position"], item.get("value"), item.get("flagged")
    if "human_text" in item:
        entry = _human_entry(project, assignment, sheet, position, item, where)
    else:
        alternative = item.get("alternative", 0)
        entry = sheet.get((position, alternative))
        if entry is None:
            raise LabelingError(
                f"This solution has no step {position + 1} (position {position}), alternative {alternative}.",
                field=where,
            )
        if alternative > 0 and not entry.human and not project.allow_alternatives:
            raise LabelingError("This project does not rate alternative completions.", field=where)
    if "flagged" not in item:  # keep the stored flag when a save only changes the value
        flagged = entry.flagged if entry.flagged is not None else False
    picked = item.get("chosen", False)
    if picked and (entry.human or entry.step.alternative == 0 or value not in (0, 1)):
        raise LabelingError("chosen picks an alternative rated 0 or +1 for the solution to go on from.",
                             field=f"{where}.chosen")
    entry.value, entry.flagged, entry.item, entry.picked = value, flagged, i, picked
    return entry


def _human_entry(project, assignment, sheet, position, item, where):
    if not project.allow_human_steps:
        raise LabelingError("This project does not take steps written by annotators.", field=f"{where}.human_text")
    if item.get("alternative") is not None:
        raise LabelingError("A human step takes no alternative index.", field=f"{where}.alternative")
    text = item["human_text"]
    at_position = [e for (p, _), e in sheet.items() if p == position]
    if not at_position:
        raise LabelingError(f"This solution has no step {position + 1} (position {position}).",
                             field=f"{where}.position")
    own = next((e for e in at_position if e.human), None)
    if text is None:
        if own is None:
            raise LabelingError(f"You wrote no own step {position + 1} to withdraw.", field=f"{where}.human_text")
        del sheet[(position, own.step.alternative)]
        return own
    if not isinstance(text, str) or not text.strip():
        raise LabelingError("Write the step before saving it.", field=f"{where}.human_text")
    if own is not None:
        own.step.text = text
        return own
    step = Step(
        solution_id=assignment.solution_id,
        position=position,
        alternative=1 + max(e.step.alternative for e in _all_at(assignment, position)),
        text=text,
        source=Step.HUMAN,
        author=assignment,
    )
    entry = Entry(step)
    sheet[(position, step.alternative)] = entry
    return entry


def _all_at(assignment, position):
    # Other annotators' human steps take alternative indexes too, so count every row.
    return [Entry(s) for s in Step.objects.filter(solution_id=assignment.solution_id, position=position)]


def _main(sheet):
    """{position: Entry} of the solution's own steps (alternative 0), in order."""
    return dict(sorted((p, e) for (p, a), e in sheet.items() if a == 0 and not e.human))


def _check_human_steps(sheet):
    for (position, _), entry in sheet.items():
        if not entry.human:
            continue
        models = [e for (p, _), e in sheet.items() if p == position and not e.human]
        if any(e.value != -1 for e in models):
            raise LabelingError(
                f"Write your own step {position + 1} only after rating every completion there -1.",
                field=entry.field,
            )


def _check_picks(sheet):
    picked = {}
    for (position, _), entry in sorted(sheet.items()):
        if entry.picked and picked.setdefault(position, entry) is not entry:
            raise LabelingError(f"Pick one alternative at step {position + 1} for the solution to go on from.",
                                 field=entry.field)


def _check_order(sheet):
    """Phase 2: rate the solution's steps in order and stop at the first -1.

    Phase 1 has no order rule here: its passes go on past a -1 (through an alternative or the
    annotator's own step), and the page reveals the steps in order (sequence.js).
    """
    main = _main(sheet)
    positions = list(main)
    first_unrated = next((p for p in positions if main[p].value is None), None)
    error = next((p for p in positions if main[p].value == -1), None)
    human_at = {p for (p, _), e in sheet.items() if e.human}
    for (position, alternative), entry in sorted(sheet.items()):
        if entry.value is None:
            continue
        if error is not None and error not in human_at and position > error:
            raise LabelingError(
                f"Step {position + 1} is rated after the -1 at step {error + 1}; nothing after the first error"
                " is rated.",
                field=entry.field,
            )
        if first_unrated is not None and position > first_unrated:
            raise LabelingError(
                f"Step {position + 1} is rated but step {first_unrated + 1} before it is not: rate steps in order.",
                field=entry.field,
            )


def _check_finish(project, sheet, reason, note):
    """Refuse ``reason`` unless the ratings fit it.

    ``found_error``: the last rated own step is -1 (and, where alternatives are rated, every
    alternative there is rated). ``solution``: every own step is rated and none is an
    uncorrected -1. A -1 is corrected by the annotator's own step rated 0 or +1 or, in phase 1
    with alternatives (PRM800K: the labeler rates every completion and picks one to go on
    with), by a model alternative rated 0 or +1 once every alternative there is rated.
    """
    main = _main(sheet)
    rated = [p for p, e in main.items() if e.value is not None]
    human_ok = {p for (p, _), e in sheet.items() if e.human and e.value is not None and e.value != -1}
    if reason in (FinishReason.GIVE_UP, FinishReason.BAD_PROBLEM):
        if not note.strip():
            raise LabelingError("Say why in a note.", field="note")
    elif reason == FinishReason.FOUND_ERROR:
        if not rated or main[rated[-1]].value != -1:
            raise LabelingError("found_error needs the last rated step to be rated -1.", field="finish_reason")
        error = rated[-1]
        if project.allow_alternatives:
            _require_alternatives_rated(sheet, error)
    elif reason == FinishReason.SOLUTION:
        missing = [p for p in main if p not in rated]
        if not main or missing:
            raise LabelingError(
                f"solution needs every step rated; step {missing[0] + 1 if missing else 1} is not.",
                field="finish_reason",
            )
        by_alternative = project.allow_alternatives and not project.stop_at_first_error
        wrong = [
            p for p in rated
            if main[p].value == -1 and p not in human_ok and not (by_alternative and _continuation(sheet, p))
        ]
        if wrong and by_alternative:
            raise LabelingError(
                f"solution needs a completion rated 0 or +1 wherever a step is rated -1, but step {wrong[0] + 1}"
                " has none: finish with found_error.",
                field="finish_reason",
            )
        if wrong:
            raise LabelingError(
                f"solution needs no step rated -1, but step {wrong[0] + 1} is: finish with found_error.",
                field="finish_reason",
            )
        if by_alternative:
            for p in rated:
                if main[p].value == -1 and p not in human_ok:
                    _require_alternatives_rated(sheet, p)


def _require_alternatives_rated(sheet, position):
    for (p, a), e in sorted(sheet.items()):
        if p == position and a > 0 and not e.human and e.value is None:
            raise LabelingError(
                f"Rate every alternative at step {position + 1} (alternative {a} is unrated).", field="ratings"
            )


def _continuation(sheet, position):
    """The model alternative a phase-1 trajectory continues with after a -1 own step, or None.

    The one the annotator picked (``"chosen": true`` with the submit, rated 0 or +1), else the
    default: the lowest-index alternative rated +1, else the lowest rated 0. The page's copy
    is ``continuation`` in frontend/src/workspace/sequence.js.
    """
    models = [e for (p, a), e in sorted(sheet.items()) if p == position and a > 0 and not e.human]
    picked = next((e for e in models if e.picked and e.value in (0, 1)), None)
    if picked is not None:
        return picked
    for value in (1, 0):
        found = next((e for e in models if e.value == value), None)
        if found is not None:
            return found
    return None


def _upsert(assignment, ratings, now, submitting):
    """Insert or update this assignment's ratings ``[(step id, value, flagged, chosen)]``.

    ``chosen`` changes on a stored row only when ``submitting`` (a new row always takes it).
    """
    updated = ["value", "flagged", "rated_at", *(["chosen"] if submitting else [])]
    Rating.objects.bulk_create(
        [Rating(assignment=assignment, step_id=step, value=value, flagged=flagged, chosen=chosen, rated_at=now)
         for step, value, flagged, chosen in ratings],
        update_conflicts=True, unique_fields=["assignment", "step"], update_fields=updated,
    )


def _chosen_steps(sheet, finish_reason):
    """Step ids of the completion the trajectory continues with at each rated position.

    The annotator's own step where there is one, else the solution's own step unless it is
    -1. After a -1 own step the best alternative rated 0 or +1 (``_continuation``) is chosen
    when the trajectory went on past it: a later position is rated, or the pass finished as
    solution there. A pass that ends at the -1 (found_error, give_up) chose nothing there, as
    PRM800K writes it; phase 2 never rates past an uncorrected -1 (``_check_order``) nor
    finishes as solution with one, so this only happens in phase 1.
    """
    chosen = set()
    positions = sorted({p for (p, _) in sheet})
    last_rated = max((p for (p, _), e in sheet.items() if e.value is not None), default=None)
    for position in positions:
        here = {a: e for (p, a), e in sheet.items() if p == position}
        human = [e for e in here.values() if e.human]
        main = here.get(0)
        if human:
            chosen.add(human[0].step.pk)
        elif main is not None and not main.human and main.value is not None and main.value != -1:
            chosen.add(main.step.pk)
        elif main is not None and main.value == -1 and (position < last_rated or finish_reason == FinishReason.SOLUTION):
            alternative = _continuation(sheet, position)
            if alternative is not None:
                chosen.add(alternative.step.pk)
    return chosen


def _set_chosen(assignment, step_ids, chosen):
    """Set ``chosen`` on this assignment's ratings of ``step_ids``: true for those in ``chosen``."""
    Rating.objects.filter(assignment=assignment, step_id__in=step_ids).update(
        chosen=Case(When(step_id__in=chosen, then=Value(True)), default=Value(False)))
