"""Reading one PRM800K record: every field checked, then reduced to what the database keeps.

``parse_record(record, line)`` returns a ``Parsed`` record or raises FormatError naming the
line and the field (``label.steps[3].completions[1].rating``). It also works out the three
identities an import needs (see ``labeling.imports.prm800k``) and the record's *shape*: the
details a PRM800K line carries that the tables do not, so that export gives the same object
back. ``Assignment.source_shape`` is None for the usual phase-2 line, else a dict of:

- ``question_keys``: the question's keys in order, when not all six (phase 1 has no
  ``pre_generated_*``, and often no ``ground_truth_solution``);
- ``null_completions``: positions whose ``completions`` is null rather than a list;
- ``empty_positions``: positions with nothing to rate (no rating row remembers them);
- ``timestamp`` / ``labeler``: the original text when export would write it differently
  (no microseconds, a zone, an upper-case UUID);
- ``verifier_score_int``: the verifier score was written as an integer.

Unknown keys are refused (they would be lost); so are NUL characters, which PostgreSQL text
cannot hold.
"""
import dataclasses
import datetime
import functools
import json
import math
import uuid

from formats.errors import FormatError

from . import hashing
from .hashing import sha256_json

TOP_KEYS = (
    "labeler",
    "timestamp",
    "generation",
    "is_quality_control_question",
    "is_initial_screening_question",
    "question",
    "label",
)
QUESTION_KEYS = (
    "problem",
    "ground_truth_solution",
    "ground_truth_answer",
    "pre_generated_steps",
    "pre_generated_answer",
    "pre_generated_verifier_score",
)
LABEL_KEYS = ("steps", "total_time", "finish_reason")
STEP_KEYS = ("completions", "human_completion", "chosen_completion")
COMPLETION_KEYS = ("text", "rating", "flagged")
HUMAN_KEYS = ("text", "rating", "source", "flagged")
FINISH_REASONS = ("found_error", "solution", "bad_problem", "give_up")
SOURCE_MAX_LENGTH = 50  # Step.source
MAX_INT32, MAX_INT64 = 2 ** 31 - 1, 2 ** 63 - 1  # what an integer and a bigint column hold


@dataclasses.dataclass
class Parsed:
    line: int
    source_hash: str
    labeler: str | None  # canonical UUID string
    submitted_at: datetime.datetime | None  # aware, UTC
    generation: int | None
    is_quality_control: bool
    is_screening: bool
    problem: tuple  # (problem, ground_truth_solution, ground_truth_answer)
    problem_hash: str
    pre_generated: tuple | None  # (steps, answer, verifier_score) for phase 2, else None
    solution_hash: str
    # One entry per position: (completions or None, human or None, chosen index or None);
    # completions are (text, rating, flagged), human is (text, rating, source, flagged).
    positions: list
    total_time: int | None
    finish_reason: str | None
    shape: dict | None


# Records repeat problems (PRM800K: 12k problems in 100k records); hashing is the costly part.
_problem_hash = functools.lru_cache(maxsize=4096)(hashing.problem_hash)


def export_timestamp(value):
    """How export writes ``submitted_at``: naive UTC ISO 8601, as PRM800K does."""
    return value.astimezone(datetime.timezone.utc).replace(tzinfo=None).isoformat()


def record_hash(record):
    """``Assignment.source_hash``: sha256 of the record as canonical JSON."""
    return sha256_json(record)


def parse_record(record, line, source_hash=None):
    """Check ``record`` (one decoded JSONL line) and return its ``Parsed`` form.

    ``source_hash`` is ``record_hash(record)`` when the caller has it already.
    """
    check = _Checker(line)
    check.keys(record, "", TOP_KEYS, required=TOP_KEYS)
    shape = {}

    labeler = check.nullable(record["labeler"], "labeler", str)
    if labeler is not None:
        try:
            canonical = str(uuid.UUID(labeler))
        except ValueError:
            raise FormatError("must be a UUID", line=line, field="labeler") from None
        if canonical != labeler:
            shape["labeler"] = labeler
        labeler = canonical

    timestamp = check.nullable(record["timestamp"], "timestamp", str)
    submitted_at = None
    if timestamp is not None:
        try:
            submitted_at = datetime.datetime.fromisoformat(timestamp)
        except ValueError:
            raise FormatError("must be an ISO 8601 date and time", line=line, field="timestamp") from None
        if submitted_at.tzinfo is None:
            submitted_at = submitted_at.replace(tzinfo=datetime.timezone.utc)
        if export_timestamp(submitted_at) != timestamp:
            shape["timestamp"] = timestamp

    generation = check.nullable(record["generation"], "generation", int)
    if generation is not None and not -1 <= generation <= MAX_INT32:  # an integer column
        raise FormatError(f"must be -1 (screening) or more, at most {MAX_INT32}", line=line, field="generation")
    is_qc = check.value(record["is_quality_control_question"], "is_quality_control_question", bool)
    is_screening = check.value(record["is_initial_screening_question"], "is_initial_screening_question", bool)

    question = check.value(record["question"], "question", dict)
    check.keys(question, "question.", QUESTION_KEYS, required=("problem",))
    problem = (
        check.text(question["problem"], "question.problem"),
        check.nullable_text(question.get("ground_truth_solution"), "question.ground_truth_solution"),
        check.nullable_text(question.get("ground_truth_answer"), "question.ground_truth_answer"),
    )
    problem_hash = _problem_hash(*problem)
    question_keys = list(question)
    if question_keys != list(QUESTION_KEYS):
        shape["question_keys"] = question_keys

    label = check.value(record["label"], "label", dict)
    check.keys(label, "label.", LABEL_KEYS, required=LABEL_KEYS)
    steps = check.value(label["steps"], "label.steps", list)
    positions = [_fast_step(step) or _parse_step(check, step, f"label.steps[{i}]") for i, step in enumerate(steps)]
    total_time = check.nullable(label["total_time"], "label.total_time", int)
    if total_time is not None and not 0 <= total_time <= MAX_INT64:  # a bigint column
        raise FormatError(f"must be from 0 to {MAX_INT64}", line=line, field="label.total_time")
    finish_reason = check.nullable(label["finish_reason"], "label.finish_reason", str)
    if finish_reason is not None and finish_reason not in FINISH_REASONS:
        raise FormatError(f"must be one of {', '.join(FINISH_REASONS)}", line=line, field="label.finish_reason")

    null_completions = [i for i, (completions, _, _) in enumerate(positions) if completions is None]
    if null_completions:
        shape["null_completions"] = null_completions
    # A position with nothing to rate leaves no rating row; remember that it was there.
    empty = [i for i, (completions, human, _) in enumerate(positions) if not completions and human is None]
    if empty:
        shape["empty_positions"] = empty

    if "pre_generated_steps" in question:
        pre_steps = check.value(question["pre_generated_steps"], "question.pre_generated_steps", list)
        for i, text in enumerate(pre_steps):
            check.text(text, f"question.pre_generated_steps[{i}]")
        answer = check.nullable_text(question.get("pre_generated_answer"), "question.pre_generated_answer")
        score = question.get("pre_generated_verifier_score")
        if score is not None:
            check.value(score, "question.pre_generated_verifier_score", (int, float))
            if isinstance(score, int) and abs(score) > MAX_INT64 or not math.isfinite(score):  # float() of it
                raise FormatError("must be a finite number", line=line, field="question.pre_generated_verifier_score")
            if isinstance(score, int):
                shape["verifier_score_int"] = True
        pre_generated = (pre_steps, answer, score)
        solution_hash = sha256_json([problem_hash, pre_steps, answer, score])
    else:
        for key in ("pre_generated_answer", "pre_generated_verifier_score"):
            if key in question:
                raise FormatError("needs question.pre_generated_steps", line=line, field=f"question.{key}")
        pre_generated = None
        tree = [
            [None if c is None else [t[0] for t in c], None if h is None else h[0]] for c, h, _ in positions
        ]
        solution_hash = sha256_json([problem_hash, tree])

    return Parsed(
        line=line,
        source_hash=source_hash or record_hash(record),
        labeler=labeler,
        submitted_at=submitted_at,
        generation=generation,
        is_quality_control=is_qc,
        is_screening=is_screening,
        problem=problem,
        problem_hash=problem_hash,
        pre_generated=pre_generated,
        solution_hash=solution_hash,
        positions=positions,
        total_time=total_time,
        finish_reason=finish_reason,
        shape=shape or None,
    )


def _fast_step(step):
    """``_parse_step`` for a well-formed step, without building field paths; None otherwise.

    Most of an import's time goes into checking completions; this path does the same checks
    inline and leaves anything unusual (and every error message) to ``_parse_step``.
    """
    if type(step) is not dict or len(step) != 3:
        return None
    completions = step.get("completions", _MISSING)
    human = step.get("human_completion", _MISSING)
    chosen = step.get("chosen_completion", _MISSING)
    if completions is None:
        parsed = None
    elif type(completions) is list:
        parsed = []
        for c in completions:
            if type(c) is not dict or len(c) != 3:
                return None
            text, rating, flagged = c.get("text"), c.get("rating", _MISSING), c.get("flagged", _MISSING)
            if (
                type(text) is not str
                or "\x00" in text
                or not (rating is None or (type(rating) is int and -1 <= rating <= 1))
                or not (flagged is None or flagged is True or flagged is False)
            ):
                return None
            parsed.append((text, rating, flagged))
    else:
        return None
    if human is not None:
        return None  # rare (phase 1 only): the full check
    if not (chosen is None or (type(chosen) is int and 0 <= chosen < len(parsed or ()))):
        return None
    return parsed, None, chosen


_MISSING = object()


def _parse_step(check, step, where):
    check.value(step, where, dict)
    check.keys(step, where + ".", STEP_KEYS, required=STEP_KEYS)
    completions = check.nullable(step["completions"], where + ".completions", list)
    if completions is not None:
        completions = [_parse_completion(check, c, f"{where}.completions[{i}]") for i, c in enumerate(completions)]
    human = check.nullable(step["human_completion"], where + ".human_completion", dict)
    if human is not None:
        hwhere = where + ".human_completion"
        check.keys(human, hwhere + ".", HUMAN_KEYS, required=HUMAN_KEYS)
        source = check.text(human["source"], hwhere + ".source")
        if not source or len(source) > SOURCE_MAX_LENGTH:
            raise FormatError(f"must be 1 to {SOURCE_MAX_LENGTH} characters", line=check.line, field=hwhere + ".source")
        human = (
            check.text(human["text"], hwhere + ".text"),
            check.rating(human["rating"], hwhere + ".rating"),
            source,
            check.nullable(human["flagged"], hwhere + ".flagged", bool),
        )
    chosen = check.nullable(step["chosen_completion"], where + ".chosen_completion", int)
    if chosen is not None and not 0 <= chosen < len(completions or ()):
        raise FormatError(
            f"is {chosen} but there are {len(completions or ())} completions",
            line=check.line,
            field=where + ".chosen_completion",
        )
    return completions, human, chosen


def _parse_completion(check, completion, where):
    check.value(completion, where, dict)
    check.keys(completion, where + ".", COMPLETION_KEYS, required=COMPLETION_KEYS)
    return (
        check.text(completion["text"], where + ".text"),
        check.rating(completion["rating"], where + ".rating"),
        check.nullable(completion["flagged"], where + ".flagged", bool),
    )


class _Checker:
    """Type checks that raise FormatError at one line."""

    def __init__(self, line):
        self.line = line

    def fail(self, message, where):
        raise FormatError(message, line=self.line, field=where)

    def value(self, value, where, types):
        names = types if isinstance(types, tuple) else (types,)
        # bool is an int to Python, never to PRM800K.
        if not isinstance(value, types) or (isinstance(value, bool) and bool not in names):
            if value is None:
                self.fail("must not be null", where)
            expected = " or ".join({"str": "a string", "int": "an integer", "float": "a number", "bool": "true or false",
                                    "list": "a list", "dict": "an object"}[t.__name__] for t in names)
            self.fail(f"must be {expected}, got {json.dumps(value, ensure_ascii=False)[:40]}", where)
        return value

    def nullable(self, value, where, types):
        return None if value is None else self.value(value, where, types)

    def text(self, value, where):
        self.value(value, where, str)
        if "\x00" in value:
            self.fail("must not contain a NUL character", where)
        return value

    def nullable_text(self, value, where):
        return None if value is None else self.text(value, where)

    def rating(self, value, where):
        if value is not None and (self.value(value, where, int) not in (-1, 0, 1)):
            self.fail(f"must be -1, 0, 1 or null, got {value}", where)
        return value

    def keys(self, obj, prefix, allowed, *, required):
        for key in required:
            if key not in obj:
                self.fail("is missing", prefix + key)
        for key in obj:
            if key not in allowed:
                self.fail("is not a PRM800K field", prefix + key)
