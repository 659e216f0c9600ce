"""Import problems: MATH-style and GSM8K JSONL, detected line by line (``problems`` format).

MATH style (MATH-500, the MATH data set)::

    {"problem": str, "solution": str, "answer"?: str, "subject"?: str, "level"?: int | "Level N",
     "unique_id"?: str}

``answer`` absent or null: the last ``\\boxed{}`` of the solution (the original MATH files
have no answer field). ``type`` is accepted for ``subject`` (the original MATH spelling).

GSM8K::

    {"question": str, "answer": str}   # answer = worked solution ending in "#### <answer>"

The whole ``answer`` text is the reference solution and what follows ``####`` the reference
answer. A Problem is found by ``content_hash`` (statement, reference solution, reference
answer; ``hashing.problem_hash``), so re-importing adds nothing; a problem that already exists
without subject, level or source id (say, created by a candidate import) gets them filled in.
A file of GSM8K records only, imported into a project with no problems yet, turns the project's
``dollar_math`` off (``dollars_as_text``). See docs/formats.md.
"""
import re

from django.db import connection

from formats.errors import FormatError

from ..models import Problem, Project
from .common import ImportResult, chunks
from .hashing import problem_hash
from .registry import register

CHUNK = 1000
MATH_KEYS = ("problem", "solution", "answer", "subject", "type", "level", "unique_id")
GSM8K_KEYS = ("question", "answer")
_LEVEL = re.compile(r"Level\s+(\d+|\?)")


@register("problems")
def load(records, project, *, progress):
    """Import MATH-style or GSM8K problem records into ``project``."""
    lock_project(project)
    fresh = holds_no_problems(project)
    result = ImportResult(unit="problems", details={"problems": 0, "filled_in": 0})
    kinds = set()
    parsed = (parse_problem(record, line) for line, record in _noting_kind(records, kinds))
    for chunk in chunks(parsed, CHUNK):
        _flush(project, chunk, result)
        progress.advance(len(chunk))
    if kinds == {"gsm8k"}:
        dollars_as_text(project, fresh)
    return result


def _noting_kind(records, kinds):
    for line, record in records:
        kinds.add("gsm8k" if "question" in record else "math")
        yield line, record


def parse_problem(record, line):
    """An unsaved Problem (``content_hash`` set) from a MATH or GSM8K record."""
    if "question" in record:
        check_keys(record, GSM8K_KEYS, line)
        question = text(record, "question", line)
        solution = text(record, "answer", line)
        answer = gsm8k_answer(solution)
        if answer is None:
            raise FormatError("must end with a '#### <answer>' line", line=line, field="answer")
        fields = dict(problem=question, ground_truth_solution=solution, ground_truth_answer=answer)
    elif "problem" in record:
        check_keys(record, MATH_KEYS, line)
        if "subject" in record and "type" in record:
            raise FormatError("give 'subject' or 'type', not both", line=line, field="type")
        solution = text(record, "solution", line, nullable=True)
        answer = text(record, "answer", line, nullable=True, required=False)
        if answer is None and solution is not None:
            from ..grading.answers import last_boxed

            answer = last_boxed(solution)
        subject_key = "type" if "type" in record else "subject"
        fields = dict(
            problem=text(record, "problem", line),
            ground_truth_solution=solution,
            ground_truth_answer=answer,
            subject=text(record, subject_key, line, required=False, nullable=True, max_length=100) or "",
            level=level(record, line),
            source_id=text(record, "unique_id", line, required=False, nullable=True, max_length=200) or "",
        )
    else:
        raise FormatError("is missing (a MATH record has 'problem', a GSM8K record 'question')", line=line, field="problem")
    content_hash = problem_hash(fields["problem"], fields["ground_truth_solution"], fields["ground_truth_answer"])
    return Problem(content_hash=content_hash, **fields)


def gsm8k_answer(solution):
    """What follows ``####`` on the last such line of a GSM8K solution, or None."""
    found = re.findall(r"^[ \t]*####[ \t]*(.*?)\s*$", solution, re.MULTILINE)
    return found[-1] if found and found[-1] else None


def ensure_problems(project, problems, *, fill_in=False):
    """Create the problems (unsaved, hashed) not yet in ``project``.

    Returns ``(ids by content hash, created, filled_in)``. With ``fill_in``, existing problems
    get the subject, level and source id they lack.
    """
    by_hash = {}
    for problem in problems:
        by_hash.setdefault(problem.content_hash, problem)
    existing = {
        p.content_hash: p
        for p in Problem.objects.filter(project=project, content_hash__in=list(by_hash)).only(
            "id", "content_hash", "subject", "level", "source_id"
        )
    }
    new = [p for h, p in by_hash.items() if h not in existing]
    for problem in new:
        problem.project = project
    Problem.objects.bulk_create(new, batch_size=CHUNK)
    filled = []
    if fill_in:
        for content_hash, old in existing.items():
            incoming, changed = by_hash[content_hash], False
            for name in ("subject", "level", "source_id"):
                if getattr(old, name) in ("", None) and getattr(incoming, name) not in ("", None):
                    setattr(old, name, getattr(incoming, name))
                    changed = True
            if changed:
                filled.append(old)
        Problem.objects.bulk_update(filled, ["subject", "level", "source_id"], batch_size=CHUNK)
    ids = {h: p.id for h, p in existing.items()}
    ids.update((p.content_hash, p.id) for p in new)
    return ids, len(new), len(filled)


def holds_no_problems(project):
    return not Problem.objects.filter(project=project).exists()


def dollars_as_text(project, fresh):
    """GSM8K is plain text whose "$" is a currency sign ("$2 per egg ... $112"): an import of
    GSM8K-style data (only GSM8K records, or ``gsm8k-examples``) into a ``fresh`` project, one
    that held no problems before it, turns the project's ``dollar_math`` off. An import into a
    project that already holds problems leaves the setting as it is (a lead may have chosen it).
    """
    if fresh and project.dollar_math:
        Project.objects.filter(pk=project.pk).update(dollar_math=False)
        project.dollar_math = False


def lock_project(project):
    """Serialise imports into one project (the PRM800K importer takes the same lock): two
    concurrent imports of one file would otherwise both insert and one fail on a unique key."""
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_xact_lock(hashtext('stepmark.import'), %s)", [project.id])


def check_keys(record, allowed, line):
    # An unknown key is most often a misspelt one: refuse it rather than drop what it holds.
    for key in record:
        if key not in allowed:
            raise FormatError(f"unknown key (expected {', '.join(allowed)})", line=line, field=key)


def text(record, key, line, *, required=True, nullable=False, max_length=None, where=None):
    """A string field, checked: present, non-empty, no NUL (PostgreSQL cannot store it)."""
    where = where or key
    if key not in record:
        if required:
            raise FormatError("is missing", line=line, field=where)
        return None
    return check_text(record[key], line, where, nullable=nullable, max_length=max_length)


def check_text(value, line, where, *, nullable=False, max_length=None):
    if value is None:
        if nullable:
            return None
        raise FormatError("must not be null", line=line, field=where)
    if not isinstance(value, str):
        raise FormatError(f"must be a string, got {type(value).__name__}", line=line, field=where)
    if not value.strip():
        raise FormatError("must not be empty", line=line, field=where)
    if "\x00" in value:
        raise FormatError("must not contain a NUL character", line=line, field=where)
    if max_length is not None and len(value) > max_length:
        raise FormatError(f"is longer than {max_length} characters", line=line, field=where)
    return value


def level(record, line):
    value = record.get("level")
    if value is None:
        return None
    if isinstance(value, str):
        match = _LEVEL.fullmatch(value.strip())
        if not match:
            raise FormatError(f"must be an integer or 'Level N', got {value!r}", line=line, field="level")
        value = None if match.group(1) == "?" else int(match.group(1))
    elif not isinstance(value, int) or isinstance(value, bool):
        raise FormatError(f"must be an integer, got {type(value).__name__}", line=line, field="level")
    if value is not None and not 0 <= value <= 100:
        raise FormatError(f"must be between 0 and 100, got {value}", line=line, field="level")
    return value


def _flush(project, chunk, result):
    _, created, filled = ensure_problems(project, chunk, fill_in=True)
    result.records += len(chunk)
    result.created += created
    result.skipped += len(chunk) - created
    result.details["problems"] += created
    result.details["filled_in"] += filled
