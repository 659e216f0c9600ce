"""What an annotator sends and receives while labelling (see labeling/api/work.py).

One payload, ``AssignmentSerializer``, serves every assignment, so a gold item and ordinary
work have the same keys and the same kinds of values. It is built from what the annotator
may see and nothing else: the problem statement and ground-truth answer, the solution's
steps (human-written ones only when this assignment wrote them), the project's rules and
this assignment's own ratings. Nothing about how the solution was chosen or served
(generation, verifier score, rank, gold or screening flags, answer grade), no gold ratings,
no other annotator's ratings or steps, and no database ids but the assignment's own.

Requests are checked here for shape and type; the labelling rules themselves live in
``labeling.work.submission`` and are checked there. Every refusal has one form:
``{"detail": message, "field": "ratings[2].value" or null}``.
"""
from collections import namedtuple

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from labeling.markdown_text import render_markdown
from labeling.models import FinishReason
from labeling.work import prelabels
from labeling.work.revision import of_payload
from labeling.work.submission import read_sheet


# Responses ------------------------------------------------------------------------------


class TaskRulesSerializer(serializers.Serializer):
    """The project's rules a client needs to lay out the workspace and check input early."""

    id = serializers.IntegerField()
    name = serializers.CharField()
    instructions_html = serializers.SerializerMethodField(
        help_text="The instructions, Markdown rendered to sanitized HTML.")
    stop_at_first_error = serializers.BooleanField(help_text="Phase 2: a -1 ends the pass (found_error).")
    allow_alternatives = serializers.BooleanField(help_text="Alternatives at a step are rated too.")
    allow_human_steps = serializers.BooleanField(
        help_text="Phase 1: the annotator may write their own step once every completion there is -1."
    )
    lease_seconds = serializers.IntegerField(help_text="Idle time after which the assignment may go to someone else.")
    dollar_math = serializers.BooleanField(
        help_text="Read $...$ and $$...$$ in the problem and steps as math (Pandoc's rule); false: '$' is text."
    )
    show_calculator_markup = serializers.BooleanField(
        help_text="Show GSM8K calculator annotations <<a*b=c>>; false: leave them out of the text shown."
    )

    def get_instructions_html(self, project) -> str:
        return render_markdown(project.instructions)


class TaskProblemSerializer(serializers.Serializer):
    problem = serializers.CharField(help_text="The statement (Markdown with LaTeX in $...$).")
    ground_truth_answer = serializers.CharField(
        allow_null=True, help_text="The reference answer, shown as the current guess of the correct answer."
    )


class StepAlternativeSerializer(serializers.Serializer):
    alternative = serializers.IntegerField(help_text="0 is the solution's own step.")
    text = serializers.CharField()
    source = serializers.CharField(help_text="'model', or 'human' for a step this annotator wrote.")


class StepPositionSerializer(serializers.Serializer):
    position = serializers.IntegerField()
    alternatives = StepAlternativeSerializer(many=True)


class OwnRatingSerializer(serializers.Serializer):
    position = serializers.IntegerField()
    alternative = serializers.IntegerField()
    value = serializers.IntegerField(allow_null=True, min_value=-1, max_value=1)
    flagged = serializers.BooleanField(allow_null=True)


class PrelabelSerializer(serializers.Serializer):
    position = serializers.IntegerField()
    alternative = serializers.IntegerField()
    value = serializers.IntegerField(min_value=-1, max_value=1, help_text="The source's label: +1, 0 or -1.")
    reason = serializers.CharField(allow_blank=True, help_text="Its reason, where the project shows reasons.")


class AssignmentSerializer(serializers.Serializer):
    """One assignment as its annotator sees it: the same keys for every kind of work."""

    id = serializers.IntegerField()
    state = serializers.ChoiceField(choices=["active", "submitted", "expired"])
    handed_out_at = serializers.DateTimeField(allow_null=True)
    lease_expires_at = serializers.DateTimeField(allow_null=True)
    submitted_at = serializers.DateTimeField(allow_null=True)
    finish_reason = serializers.ChoiceField(choices=FinishReason.choices, allow_null=True)
    finish_note = serializers.CharField(allow_blank=True)
    total_time = serializers.IntegerField(allow_null=True, help_text="Milliseconds spent labelling.")
    project = TaskRulesSerializer()
    problem = TaskProblemSerializer(source="solution.problem")
    steps = StepPositionSerializer(many=True, source="shown.steps", help_text="In order; alternatives in index order.")
    ratings = OwnRatingSerializer(many=True, source="shown.ratings",
                                  help_text="This assignment's own ratings (the draft, or what was submitted).")
    prelabel_mode = serializers.ChoiceField(
        choices=["hidden", "suggest", "verify"],
        help_text="What the project shows of machine pre-labels: none, suggestions beside the steps, or pre-labels "
        "to confirm or correct one by one.")
    prelabels = PrelabelSerializer(many=True, source="shown.prelabels",
                                   help_text="The pre-labels shown on the steps (none when hidden).")
    revision = serializers.CharField(
        source="shown.revision",
        help_text="A fingerprint of the stored ratings and own steps: send it back with a draft or submit, which is"
        " then refused (409, field revision) if they changed since, in another tab or on another device."
    )


Shown = namedtuple("Shown", "steps ratings revision prelabels")


def present(assignment):
    """``AssignmentSerializer``'s payload of ``assignment``: what its annotator sees of it."""
    assignment.shown = shown(assignment)
    return _PAYLOAD.to_representation(assignment)


# One instance for every payload: DRF builds a serializer's fields (deep copies of the declared
# ones, nested serializers' too) per instance, which was most of a payload's cost (docs/performance.md).
# ``to_representation`` reads the fields and writes nothing on the instance, so it is shared safely.
_PAYLOAD = AssignmentSerializer()


def shown(assignment):
    """The steps the assignment's annotator sees, their own ratings and the revision of both.

    Read from the sheet a save or submit left on the assignment (``submission``), else read now
    (without ratings for one the queue has just handed out: ``queue.SERVED_BY``).
    """
    sheet = getattr(assignment, "sheet", None)
    if sheet is None:
        sheet = read_sheet(assignment, fresh=getattr(assignment, "served_by", "resumed") != "resumed")
    entries = [entry for _, entry in sorted(sheet.items())]
    local = _own_step_numbers(entries)
    positions, ratings, seen = {}, [], []
    for entry in entries:
        step = entry.step
        alternative = local.get((step.position, step.alternative), step.alternative)
        seen.append((step, alternative))
        positions.setdefault(step.position, []).append(
            {"alternative": alternative, "text": step.text, "source": step.source})
        if entry.stored:
            ratings.append({"position": step.position, "alternative": alternative, "value": entry.value,
                            "flagged": entry.flagged})
    steps = [{"position": p, "alternatives": alts} for p, alts in positions.items()]
    return Shown(steps, ratings, of_payload(ratings, steps), prelabels.shown(assignment, seen))


def _own_step_numbers(entries):
    """``{(position, stored alternative): shown alternative}`` for the annotator's own steps.

    An own step is stored with the next free index at its position over every annotator's
    steps (``submission._human_entry``), so the stored number counts other people's hidden
    steps; gold items, which bypass overlap, collect many, and the number told gold apart
    (issue #26). The annotator sees it numbered after the model's alternatives they see.
    """
    models = {}
    for entry in entries:
        if not entry.human:
            models[entry.step.position] = max(models.get(entry.step.position, 0), entry.step.alternative)
    return {(e.step.position, e.step.alternative): models.get(e.step.position, 0) + 1 for e in entries if e.human}


class SentRatingSerializer(serializers.Serializer):
    """One rating of a submitted pass as its annotator sent it."""

    position = serializers.IntegerField()
    alternative = serializers.IntegerField(allow_null=True, help_text="Null for your own step (``text``).")
    value = serializers.IntegerField(allow_null=True)
    flagged = serializers.BooleanField(allow_null=True)
    chosen = serializers.BooleanField()
    text = serializers.CharField(allow_null=True, help_text="Your own step's text; null for the model's steps.")


def sent_rating(rating):
    """A stored rating (its step loaded) as ``SentRatingSerializer`` says. An own step has no
    alternative number: the stored one counts other people's hidden steps at its position, more on
    gold items (``_own_step_numbers`` says why a payload never shows it)."""
    step = rating.step
    own = step.author_id is not None
    return {"position": step.position, "alternative": None if own else step.alternative, "value": rating.value,
            "flagged": rating.flagged, "chosen": rating.chosen, "text": step.text if own else None}


class MyPassSerializer(serializers.Serializer):
    """One submitted pass in the annotator's history."""

    id = serializers.IntegerField()
    project = serializers.IntegerField(source="project_id")
    project_name = serializers.CharField(source="project.name")
    submitted_at = serializers.DateTimeField()
    finish_reason = serializers.ChoiceField(choices=FinishReason.choices)
    total_time = serializers.IntegerField(allow_null=True, help_text="Milliseconds spent labelling.")
    steps_rated = serializers.IntegerField(help_text="Ratings with a value (-1, 0 or +1).")
    ratings = serializers.SerializerMethodField(help_text="Your ratings as sent, steps in order.")

    @extend_schema_field(SentRatingSerializer(many=True))
    def get_ratings(self, row):
        return [sent_rating(r) for r in getattr(row, "sent", ())]


class MyCountsSerializer(serializers.Serializer):
    project = serializers.IntegerField()
    project_name = serializers.CharField()
    submitted_today = serializers.IntegerField(help_text="Submitted since midnight, server time.")
    submitted_total = serializers.IntegerField()
    steps_rated = serializers.IntegerField(help_text="Ratings with a value in submitted passes.")
    in_progress = serializers.IntegerField(help_text="Assignments holding a lease now.")


# Requests -------------------------------------------------------------------------------


class RatingItemSerializer(serializers.Serializer):
    position = serializers.IntegerField(min_value=0)
    alternative = serializers.IntegerField(
        min_value=0, required=False, allow_null=True, help_text="Default 0; leave out with text."
    )
    value = serializers.IntegerField(
        min_value=-1, max_value=1, allow_null=True, help_text="-1, 0 or +1; null clears the rating."
    )
    flagged = serializers.BooleanField(
        required=False, allow_null=True, help_text="Unsure. Left out: the stored flag stays."
    )
    chosen = serializers.BooleanField(
        required=False, help_text="Phase 1, with the submit: the solution goes on from this alternative (rated 0 or +1)"
        " after a -1 at its step; left out, the lowest-index +1 (else 0) one.",
    )
    text = serializers.CharField(
        required=False, allow_null=True, allow_blank=True, trim_whitespace=False, max_length=20000,
        help_text="Your own step at this position (projects with human steps); null withdraws it.",
    )

    @staticmethod
    def to_domain(item):
        """The item as ``labeling.work.submission`` takes it (``text`` is its ``human_text``)."""
        out = {"position": item["position"], "value": item["value"]}
        if item.get("alternative") is not None:
            out["alternative"] = item["alternative"]
        if "flagged" in item:
            out["flagged"] = item["flagged"]
        if item.get("chosen"):
            out["chosen"] = True
        if "text" in item:
            out["human_text"] = item["text"]
        return out


class DraftSerializer(serializers.Serializer):
    ratings = RatingItemSerializer(many=True, help_text="Merged into the stored draft.")
    revision = serializers.CharField(
        required=False, allow_null=True, max_length=64,
        help_text="The assignment's revision this change is based on (from its payload); left out, not checked.",
    )


class SubmitSerializer(serializers.Serializer):
    finish_reason = serializers.ChoiceField(choices=FinishReason.choices)
    note = serializers.CharField(
        required=False, allow_blank=True, default="", trim_whitespace=False, max_length=20000,
        help_text="Why, for bad_problem and give_up.",
    )
    ratings = RatingItemSerializer(many=True, required=False, help_text="Last changes, merged before the check.")
    submit_key = serializers.CharField(
        required=False, allow_null=True, max_length=100,
        help_text="Any unique string; a retry with the same key returns the stored submission.",
    )
    client_elapsed_ms = serializers.FloatField(
        required=False, allow_null=True, min_value=0, help_text="Visible time; clamped to the wall time."
    )
    revision = serializers.CharField(
        required=False, allow_null=True, max_length=64,
        help_text="The assignment's revision this change is based on (from its payload); left out, not checked.",
    )


def domain_ratings(validated):
    """The request's rating items in the form ``labeling.work.submission`` takes."""
    return [RatingItemSerializer.to_domain(item) for item in validated.get("ratings") or []]


def raw_ratings(data):
    """The body's ``ratings`` as sent, before any check (``submission.check_size`` bounds its length)."""
    return data.get("ratings") if isinstance(data, dict) else None


def first_error(errors, path=""):
    """``(message, field)`` of the first error in DRF's nested ``errors``: one refusal at a time."""
    if isinstance(errors, dict):
        for key, value in errors.items():
            if key == "non_field_errors":
                here = path
            elif isinstance(key, int):
                here = f"{path}[{key}]"
            else:
                here = f"{path}.{key}" if path else key
            found = first_error(value, here)
            if found:
                return found
        return None
    if isinstance(errors, list):
        for i, value in enumerate(errors):
            found = first_error(value, path) if isinstance(value, str) else first_error(value, f"{path}[{i}]")
            if found:
                return found
        return None
    return str(errors), path or None
