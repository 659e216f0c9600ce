"""Import machine step labels from Monte Carlo rollouts: solutions with a label on each step.

Two formats (shapes in docs/formats.md):

- ``math-shepherd``: the Math-Shepherd data set's lines (peiyi9979/Math-Shepherd),
  ``{"input": "<problem> Step 1: ... ки\\nStep 2: ... ки", "label": <the same text with each
  ки replaced by + or ->, "task": "GSM8K" | "MATH"}``. The problem is the text before the first
  "Step 1:" (or "step 1:"); each step runs to its tag (option ``tag``, default ``ки``) and keeps
  its "Step N:" as written. ``+`` is +1, ``-`` is -1: Math-Shepherd's hard estimation, whose
  rollout counts the file does not give.
- ``mc-rollouts``: our own plain shape for the counts behind such labels,
  ``{"problem", "steps", "rollouts": [{"successes", "total"} | null, ...]}`` or
  ``"success_rates": [rate | null, ...]`` (with ``"rollouts_per_step"`` when known). A step
  whose rate is above 0 is +1, one at 0 is -1 (the hard estimation again); the rate is the
  label's ``score``, the counts its ``rollouts`` and ``successes``. null: no estimate, no label.

Each line's solution is stored as a ``candidates`` line would be (``candidates.flush``: the
problem by content hash, matched by text where the line gives no ground truth as the raw
outputs are, the solution by its problem and steps), so a solution already in the project is
labelled, not stored again. The labels go to one ``LabelSource`` of kind ``rollouts`` per file,
named by the option ``label_source`` (default ``"<format>: <file name>"``), with the file, the
format and the import job as its ``details``; one ``StepLabel`` per step and source, so a
re-import adds nothing. People's ratings are never read or written here.
"""
import dataclasses
import math
import re
from itertools import islice

from formats.errors import FormatError

from ..grading.answers import extract_answer, grade_pairs
from ..models import LabelSource, Problem, Step, StepLabel
from .candidates import MISSING, Candidate, flush
from .common import ImportResult, chunks
from .hashing import problem_hash
from .problems import check_keys, check_text, dollars_as_text, holds_no_problems, lock_project, text
from .raw_outputs import known_truths
from .registry import register

CHUNK = 500
DEFAULT_TAG = "ки"
SHEPHERD_KEYS = ("input", "label", "task")
ROLLOUT_KEYS = ("id", "problem", "steps", "ground_truth_answer", "ground_truth_solution", "generator", "rollouts",
                "success_rates", "rollouts_per_step")
_STEP_ONE = re.compile(r"[Ss]tep 1:")


@dataclasses.dataclass
class Label:
    value: int
    score: float | None = None
    rollouts: int | None = None
    successes: int | None = None


@dataclasses.dataclass
class Labelled:
    """One line read: the problem, its ground truth if the line gives it, the steps and their labels."""

    line: int
    statement: str
    truth: tuple | None  # (solution, answer), or None: take the project's problem of that text
    steps: list
    labels: list  # a Label or None per step
    generator: str
    task: str | None = None


def label_format(name, options=("label_source", "generator")):
    """Register ``parse(record, line, options) -> Labelled`` as the step-label format ``name``."""

    def decorator(parse):
        @register(name, options=options, origin=True)
        def load(records, project, *, progress, options, origin):
            check(options)
            return store(name, (parse(record, line, options) for line, record in records), project, progress,
                         options, origin)

        load.parse, load.check = parse, check
        load.preview = lambda format_name, source, options=None, **kw: preview(load, source, options, **kw)
        return parse

    return decorator


def check(options):
    """Refuse bad options before any file is read (the upload's check runs it too)."""
    options = options or {}
    if options.get("tag") is not None:
        tag = check_text(options["tag"], None, "tag", max_length=20)
        if tag.strip() in ("+", "-"):
            raise FormatError("must not be + or - (the labels' own marks)", field="tag")
    for key in ("label_source", "generator"):
        if options.get(key) is not None:
            check_text(options[key], None, key, max_length=200)


# Math-Shepherd ---------------------------------------------------------------------------------


@label_format("math-shepherd", options=("tag", "label_source", "generator"))
def parse_shepherd(record, line, options):
    check_keys(record, SHEPHERD_KEYS, line)
    tag = (options or {}).get("tag") or DEFAULT_TAG
    written = text(record, "input", line)
    marked = text(record, "label", line)
    task = text(record, "task", line, required=False, nullable=True, max_length=100)
    pieces = written.split(tag)
    if len(pieces) < 2:
        raise FormatError(f"has no step tag {tag!r} (option tag)", line=line, field="input")
    if pieces[-1].strip():
        raise FormatError(f"has text after its last step tag {tag!r}: a step without a label", line=line,
                          field="input")
    start = _STEP_ONE.search(pieces[0])
    if start is None:
        raise FormatError(f"has no 'Step 1:' before its first tag {tag!r}, so the problem cannot be told from "
                          "the solution", line=line, field="input")
    statement = pieces[0][:start.start()].strip()
    if not statement:
        raise FormatError("has no problem before 'Step 1:'", line=line, field="input")
    steps = [pieces[0][start.start():].strip(), *(piece.strip() for piece in pieces[1:-1])]
    for number, step in enumerate(steps, 1):
        if not step:
            raise FormatError(f"step {number} is empty (two tags with nothing between)", line=line, field="input")
    return Labelled(line, statement, None, steps, _marks(marked, pieces, tag, line), _generator(options), task)


def _marks(marked, pieces, tag, line):
    """The + or - in ``label`` where ``input`` has each tag; ``label`` must be ``input`` so marked."""
    labels, at = [], 0
    for number, piece in enumerate(pieces[:-1], 1):
        if not marked.startswith(piece, at):
            raise FormatError(f"differs from input before step {number}'s tag (it must be the input with each "
                              f"{tag!r} replaced by + or -)", line=line, field="label")
        at += len(piece)
        mark = marked[at:at + 1]
        if mark not in ("+", "-"):
            raise FormatError(f"step {number}: expected + or - where input has {tag!r}, got {mark!r}", line=line,
                              field="label")
        labels.append(Label(1 if mark == "+" else -1))
        at += 1
    if marked[at:].strip():
        raise FormatError("has text after its last + or -", line=line, field="label")
    return labels


# Rates with their rollout counts -----------------------------------------------------------------


@label_format("mc-rollouts")
def parse_rollouts(record, line, options):
    check_keys(record, ROLLOUT_KEYS, line)
    text(record, "id", line, required=False, nullable=True)
    statement = text(record, "problem", line)
    steps = record.get("steps", MISSING)
    if steps is MISSING:
        raise FormatError("is missing", line=line, field="steps")
    if not isinstance(steps, list) or not steps:
        raise FormatError("must be a non-empty list of strings", line=line, field="steps")
    for i, step in enumerate(steps):
        check_text(step, line, f"steps[{i}]")
    truth = None
    if "ground_truth_answer" in record or "ground_truth_solution" in record:
        truth = (text(record, "ground_truth_solution", line, required=False, nullable=True),
                 text(record, "ground_truth_answer", line, required=False, nullable=True))
    has_counts, has_rates = "rollouts" in record, "success_rates" in record
    if has_counts == has_rates:
        raise FormatError("give either rollouts ([{successes, total}, ...]) or success_rates, one per step",
                          line=line, field="rollouts")
    key = "rollouts" if has_counts else "success_rates"
    entries = record[key]
    if not isinstance(entries, list) or len(entries) != len(steps):
        raise FormatError(f"must be a list of {len(steps)} entries, one per step (null: no estimate)", line=line,
                          field=key)
    if has_counts:
        if "rollouts_per_step" in record:
            raise FormatError("goes with success_rates (rollouts give their own totals)", line=line,
                              field="rollouts_per_step")
        labels = [None if entry is None else _counted(entry, line, f"rollouts[{i}]") for i, entry in enumerate(entries)]
    else:
        per_step = record.get("rollouts_per_step")
        if per_step is not None and (not isinstance(per_step, int) or isinstance(per_step, bool) or per_step < 1):
            raise FormatError(f"must be a whole number of at least 1, got {per_step!r}", line=line,
                              field="rollouts_per_step")
        labels = [None if entry is None else _rated(entry, per_step, line, f"success_rates[{i}]")
                  for i, entry in enumerate(entries)]
    generator = _generator(options) or check_text(record.get("generator"), line, "generator", nullable=True,
                                                  max_length=200) or ""
    return Labelled(line, statement, truth, steps, labels, generator)


def _whole(value, line, where, low):
    if not isinstance(value, int) or isinstance(value, bool) or value < low:
        raise FormatError(f"must be a whole number of at least {low}, got {value!r}", line=line, field=where)
    return value


def _counted(entry, line, where):
    if not isinstance(entry, dict):
        raise FormatError("must be {successes, total} or null", line=line, field=where)
    for key in entry:
        if key not in ("successes", "total"):
            raise FormatError("unknown key (expected successes, total)", line=line, field=f"{where}.{key}")
    for key in ("successes", "total"):
        if key not in entry:
            raise FormatError("is missing", line=line, field=f"{where}.{key}")
    total = _whole(entry["total"], line, f"{where}.total", 1)
    successes = _whole(entry["successes"], line, f"{where}.successes", 0)
    if successes > total:
        raise FormatError(f"is more than total ({successes} > {total})", line=line, field=f"{where}.successes")
    return _label(successes / total, total, successes)


def _rated(rate, per_step, line, where):
    if not isinstance(rate, (int, float)) or isinstance(rate, bool) or not math.isfinite(rate) or not 0 <= rate <= 1:
        raise FormatError(f"must be a number from 0 to 1 or null, got {rate!r}", line=line, field=where)
    if per_step is None:
        return _label(float(rate), None, None)
    successes = round(rate * per_step)
    if abs(rate * per_step - successes) > 1e-6:
        raise FormatError(f"is not a whole number of successes out of rollouts_per_step ({per_step})", line=line,
                          field=where)
    return _label(float(rate), per_step, successes)


def _label(rate, rollouts, successes):
    # Math-Shepherd's hard estimation: a step from which some rollout reaches the answer is good.
    return Label(1 if rate > 0 else -1, rate, rollouts, successes)


def _generator(options):
    return (options or {}).get("generator") or ""


# Storing ---------------------------------------------------------------------------------------


def store(format_name, lines, project, progress, options, origin):
    """Store the solutions of ``Labelled`` lines and their labels under one source; the result counts labels."""
    lock_project(project)
    fresh = holds_no_problems(project)
    source, made = label_source(project, format_name, options, origin)
    result = ImportResult(unit="labels", details={"label_source": source.pk, "problems": 0, "solutions": 0,
                                                  "steps": 0, "graded": 0, "labels": 0})
    stored = ImportResult(unit="solutions", details={"problems": 0, "solutions": 0, "steps": 0, "graded": 0})
    tasks, totals = {}, set()
    for chunk in chunks(lines, CHUNK):
        for item in chunk:
            if item.task is not None:
                tasks[item.task] = tasks.get(item.task, 0) + 1
            totals.update(label.rollouts for label in item.labels if label is not None)
        _flush(project, source, chunk, result, stored)
        progress.advance(len(chunk))
    for key in ("problems", "solutions", "steps", "graded"):
        result.details[key] = stored.details[key]
    if made:  # a re-import leaves the first import's provenance as it was
        if format_name == "math-shepherd":
            source.details.update(estimation="hard", tasks=tasks)
        else:
            source.details.update(estimation="hard", rollouts=totals.pop() if len(totals) == 1 else None)
        source.save(update_fields=["details"])
    if tasks and set(tasks) == {"GSM8K"}:
        dollars_as_text(project, fresh)  # GSM8K's "$" is a currency sign, as in gsm8k-examples
    return result


def label_source(project, format_name, options, origin):
    """The file's LabelSource, found by its name or made; ``(source, made)``."""
    name = (options or {}).get("label_source") or f"{format_name}: {origin.get('file') or 'unnamed file'}"
    source, made = LabelSource.objects.get_or_create(
        project=project, kind=LabelSource.ROLLOUTS, name=name[:200],
        defaults={"details": {"file": origin.get("file"), "format": format_name,
                              "import_job_id": origin.get("import_job_id")}})
    if not made and source.details.get("format") not in (None, format_name):
        raise FormatError(f"names the label source {name!r}, which holds {source.details['format']} labels; "
                          "give another name", field="label_source")
    return source, made


def _candidates(chunk, project):
    """One Candidate per line: the problem of the line's ground truth, else the project's of that text."""
    known = known_truths(project, {item.statement for item in chunk if item.truth is None})
    for item in chunk:
        solution, answer = item.truth or known.get(item.statement, (None, None))
        problem = Problem(problem=item.statement, ground_truth_solution=solution, ground_truth_answer=answer,
                          content_hash=problem_hash(item.statement, solution, answer))
        yield item, Candidate(item.line, problem, item.steps, extract_answer(item.steps), item.generator, MISSING)


def _flush(project, source, chunk, result, stored):
    pairs = list(_candidates(chunk, project))
    solution_ids = flush(project, [(item.line, [candidate]) for item, candidate in pairs], stored)
    step_ids = {
        (solution_id, position): step_id
        for solution_id, position, step_id in Step.objects.filter(
            solution_id__in=set(solution_ids.values()), alternative=0).values_list("solution_id", "position", "id")
    }
    labelled = set(StepLabel.objects.filter(source=source, step_id__in=list(step_ids.values()))
                   .values_list("step_id", flat=True))
    labels, offered = [], 0
    for item, candidate in pairs:
        solution_id = solution_ids[candidate.content_hash]
        for position, label in enumerate(item.labels):
            if label is None:
                continue
            offered += 1
            step_id = step_ids[(solution_id, position)]
            if step_id in labelled:  # labelled by this source already: a re-import, or the solution twice in the file
                continue
            labelled.add(step_id)
            labels.append(StepLabel(source=source, step_id=step_id, value=label.value, score=label.score,
                                    rollouts=label.rollouts, successes=label.successes))
    StepLabel.objects.bulk_create(labels, batch_size=2000)
    result.records += len(chunk)
    result.created += len(labels)
    result.skipped += offered - len(labels)
    result.details["labels"] += len(labels)


# Preview ---------------------------------------------------------------------------------------


def preview(load, source, options=None, *, n=5, path=None, project=None):
    """The first ``n`` lines as the import would read them, storing nothing: the raw-output
    preview's shape (``{"line", "problem", "generator", "ground_truth_answer", "solutions":
    [{"field", "steps", "final_answer", "is_correct"}]}``) with each solution's ``labels``
    (``{"value", "score", "rollouts", "successes"}`` or null per step)."""
    check(options)
    shown = []
    try:
        for line, record in islice(load.reader(source, path=path), n):
            shown.append(load.parse(record, line, options))
    except FormatError as exc:
        raise exc.at(path) from None
    known = known_truths(project, {item.statement for item in shown if item.truth is None}) if project else {}
    records = []
    for item in shown:
        _, answer = item.truth or known.get(item.statement, (None, None))
        records.append({
            "line": item.line, "problem": item.statement, "generator": item.generator, "ground_truth_answer": answer,
            "solutions": [{"field": "steps", "steps": item.steps, "final_answer": extract_answer(item.steps),
                           "labels": [None if label is None else dataclasses.asdict(label)
                                      for label in item.labels]}],
        })
    verdicts = grade_pairs([(s["final_answer"], r["ground_truth_answer"]) for r in records for s in r["solutions"]])
    for record in records:
        for solution in record["solutions"]:
            solution["is_correct"] = verdicts[(solution["final_answer"], record["ground_truth_answer"])]
    return records
