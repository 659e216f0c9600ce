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
import re

from django.db import connection
from rest_framework import serializers

from labeling.markdown_text import render_markdown
from labeling.models import FinishReason, Problem, Solution, Step
from labeling.work import rows
from labeling.work.revision import of_payload


# Responses ------------------------------------------------------------------------------


class TaskRulesSerializer(serializers.Serializer):
    """The project's rules a client needs to lay out the workspace and check input early."""

    id = serializers.IntegerField()
    name = serializers.CharField()
    instructions_html = serializers.CharField(help_text="The instructions, Markdown rendered to sanitized HTML.")
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
    problem = TaskProblemSerializer()
    steps = StepPositionSerializer(many=True, help_text="In order; alternatives in index order.")
    ratings = OwnRatingSerializer(many=True, help_text="This assignment's own ratings (the draft, or what was submitted).")
    revision = serializers.CharField(
        help_text="A fingerprint of the stored ratings and own steps: send it back with a draft or submit, which is"
        " then refused (409, field revision) if they changed since, in another tab or on another device."
    )


# Every step of the solution an assignment may see (model steps, human steps it wrote) next
# to its rating, in one statement: a step is visible when it is the assignment's own or an
# unauthored model step; a rating is the assignment's own, on an unauthored or its own step.
_SQL_PAYLOAD = """SELECT s.position, s.alternative, s.text, s.source, s.author_id, r.id, r.value, r.flagged
    FROM labeling_step s LEFT JOIN labeling_rating r ON r.step_id = s.id AND r.assignment_id = %s
    WHERE s.solution_id = %s AND (s.author_id IS NULL OR s.author_id = %s)
    ORDER BY s.position, s.alternative"""

_PROBLEM_FIELDS = ("id", "problem", "ground_truth_answer")
_SQL_PROBLEM = "SELECT id, problem, ground_truth_answer FROM labeling_problem WHERE id = %s"

# Formats a datetime exactly as AssignmentSerializer's fields do (ISO 8601, UTC as "Z").
_DATETIME = serializers.DateTimeField()


def _datetime(value):
    return None if value is None else _DATETIME.to_representation(value)


def assignment_payload(assignment):
    """``AssignmentSerializer``'s output for ``assignment``, built directly (one query).

    The payload is plain JSON-ready data, the same as ``AssignmentSerializer(...).data``
    would give (tests/labeling/work/test_queue_queries.py checks that), without walking the
    serializer's fields on every request. The assignment's ``project`` and
    ``solution.problem`` are read from the instance (select them with it).
    """
    project, solution = assignment.project, assignment.solution
    if not Solution.problem.is_cached(solution):  # a hand-out's solution comes without it
        solution.problem = rows.fetch_one(_SQL_PROBLEM, [solution.problem_id], (Problem, _PROBLEM_FIELDS))[0]
    problem = solution.problem
    visible = _visible(assignment)
    local = _own_step_numbers(visible)
    positions, ratings = {}, []
    for position, alternative, text, source, author_id, rating_id, value, flagged in visible:
        alternative = local.get((position, alternative), alternative)
        if author_id == assignment.pk or (author_id is None and source != Step.HUMAN):
            positions.setdefault(position, []).append({"alternative": alternative, "text": text, "source": source})
        if rating_id is not None:
            ratings.append({"position": position, "alternative": alternative, "value": value,
                            "flagged": None if flagged is None else bool(flagged)})
    steps = [{"position": p, "alternatives": alts} for p, alts in positions.items()]
    return {
        "id": assignment.pk,
        "state": assignment.state,
        "handed_out_at": _datetime(assignment.handed_out_at),
        "lease_expires_at": _datetime(assignment.lease_expires_at),
        "submitted_at": _datetime(assignment.submitted_at),
        "finish_reason": assignment.finish_reason,
        "finish_note": assignment.finish_note,
        "total_time": assignment.total_time,
        "project": {
            "id": project.pk,
            "name": project.name,
            "instructions_html": render_markdown(project.instructions),
            "stop_at_first_error": project.stop_at_first_error,
            "allow_alternatives": project.allow_alternatives,
            "allow_human_steps": project.allow_human_steps,
            "lease_seconds": project.lease_seconds,
            "dollar_math": project.dollar_math,
            "show_calculator_markup": project.show_calculator_markup,
        },
        "problem": {"problem": problem.problem, "ground_truth_answer": problem.ground_truth_answer},
        "steps": steps,
        "ratings": ratings,
        "revision": of_payload(ratings, steps),
    }


def _own_step_numbers(visible):
    """``{(position, stored alternative): shown alternative}`` for the annotator's own steps.

    An own step is stored with the next free index at its position over every annotator's
    steps (``submission._human_entry``), so the stored number counts other people's hidden
    steps; gold items, which bypass overlap, collect many, and the number told gold apart
    (issue #26). The annotator sees it numbered after the model's alternatives they see.
    """
    models = {}
    for position, alternative, _, source, author_id, *_ in visible:
        if author_id is None and source != Step.HUMAN:
            models[position] = max(models.get(position, 0), alternative)
    return {(position, alternative): models.get(position, 0) + 1
            for position, alternative, _, source, author_id, *_ in visible if source == Step.HUMAN}


def _visible(assignment):
    """``_SQL_PAYLOAD``'s rows: from the sheet a save or submit left on the assignment, or from
    its hand-out (``queue._hand_out_in_one``), else read."""
    sheet = getattr(assignment, "sheet", None)
    if sheet is None and getattr(assignment, "payload_rows", None) is not None:
        return assignment.payload_rows
    if sheet is None:
        with connection.cursor() as cursor:
            cursor.execute(_SQL_PAYLOAD, [assignment.pk, assignment.solution_id, assignment.pk])
            return cursor.fetchall()
    found = []
    for _, entry in sorted(sheet.items()):
        step = entry.step
        found.append((step.position, step.alternative, step.text, step.source, step.author_id,
                      True if entry.stored else None, entry.value, entry.flagged))
    return found


class MyPassSerializer(serializers.Serializer):
    """One submitted pass in the annotator's history."""

    id = serializers.IntegerField()
    project = serializers.IntegerField(source="project_id")
    project_name = serializers.CharField(source="project.name")
    submitted_at = serializers.DateTimeField()
    finish_reason = serializers.ChoiceField(choices=FinishReason.choices)
    total_time = serializers.IntegerField(allow_null=True, help_text="Milliseconds spent labelling.")
    steps_rated = serializers.IntegerField(help_text="Ratings with a value (-1, 0 or +1).")


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


_SURROGATES = re.compile("[\ud800-\udfff]")


def plain_submit(data):
    """``SubmitSerializer``'s validated data for a plain, well-formed body, or None.

    What clients send on every submit is plain JSON of the documented types; checking that
    by hand costs a fraction of DRF's field walk. Anything else (a value DRF would coerce,
    such as "1" for 1, or any error) gives None, and ``SubmitSerializer`` decides with its
    own messages. tests/labeling/work/test_queue_queries.py compares the two.
    """
    if type(data) is not dict or data.get("finish_reason") not in FinishReason.values:
        return None
    out = {"finish_reason": data["finish_reason"], "note": data.get("note", "")}
    if not _plain_text(out["note"], 20000):
        return None
    if "ratings" in data:
        if type(data["ratings"]) is not list:
            return None
        out["ratings"] = [_plain_item(item) for item in data["ratings"]]
        if None in out["ratings"]:
            return None
    if "submit_key" in data:
        key = out["submit_key"] = data["submit_key"]
        if key is not None and not (_plain_text(key, 100) and key and key.strip() == key):
            return None
    if "revision" in data:
        base = out["revision"] = data["revision"]
        if base is not None and not (_plain_text(base, 64) and base and base.strip() == base):
            return None
    if "client_elapsed_ms" in data:
        elapsed = data["client_elapsed_ms"]
        if elapsed is not None:
            if type(elapsed) not in (int, float) or not (0 <= elapsed < 1e300):  # finite, not huge, not NaN
                return None
            elapsed = float(elapsed)
        out["client_elapsed_ms"] = elapsed
    return out


def _plain_item(item):
    if type(item) is not dict or "value" not in item:
        return None
    position, value = item.get("position"), item["value"]
    if type(position) is not int or position < 0 or not (value is None or (type(value) is int and -1 <= value <= 1)):
        return None
    out = {"position": position, "value": value}
    if "alternative" in item:
        alternative = out["alternative"] = item["alternative"]
        if alternative is not None and (type(alternative) is not int or alternative < 0):
            return None
    if "flagged" in item:
        flagged = out["flagged"] = item["flagged"]
        if flagged is not None and type(flagged) is not bool:
            return None
    if "chosen" in item:
        if type(item["chosen"]) is not bool:
            return None
        out["chosen"] = item["chosen"]
    if "text" in item:
        text = out["text"] = item["text"]
        if text is not None and not _plain_text(text, 20000):
            return None
    return out


def _plain_text(value, max_length):
    return type(value) is str and len(value) <= max_length and "\x00" not in value and not _SURROGATES.search(value)


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
