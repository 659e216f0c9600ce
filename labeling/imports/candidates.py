"""Import candidate solutions: model-written solutions to be scored, selected and rated.

Two formats (see docs/formats.md):

- ``candidates``: one solution per line, ``{"problem", "ground_truth_answer",
  "ground_truth_solution"?, "steps", "final_answer"?, "generator"?, "is_correct"?, "id"?}``.
- ``gsm8k-examples``: GSM8K's example model solutions, one problem per line with a
  ``{"is_correct", "solution"}`` entry per model; each entry becomes a candidate (steps =
  the solution's non-empty lines, generator = the model key). Into a project that holds no
  problems yet it also turns ``dollar_math`` off (``problems.dollars_as_text``): GSM8K's "$" is
  a currency sign. ``candidates`` keeps "$" math: model solutions write LaTeX in it
  (ProcessBench's "$\\boxed{18}$"), and the Pandoc rule keeps their prices text.

Each candidate becomes a Solution (``has_pre_generated``, its steps as alternative 0 at
positions 0..n-1) of a Problem found or created by ``hashing.problem_hash``. The solution's
``content_hash`` covers the problem hash and the steps only (``hashing.candidate_hash``), so
re-importing the same steps adds nothing, whatever generator or final answer the file names;
the first import's row is kept as it is. A missing ``final_answer`` is extracted from the last step; a missing
``is_correct`` is graded with math-verify when there is a ground-truth answer.
"""
import dataclasses

from formats.errors import FormatError

from ..grading.answers import extract_answer, grade_pairs
from ..models import Problem, Solution, Step
from .common import ImportResult, chunks
from .hashing import candidate_hash, problem_hash
from .problems import check_keys, check_text, dollars_as_text, ensure_problems, holds_no_problems, lock_project, text
from .registry import register

CHUNK = 500  # records per round of queries and bulk inserts
CANDIDATE_KEYS = (
    "id", "problem", "ground_truth_solution", "ground_truth_answer", "steps", "final_answer", "generator",
    "is_correct",
)
MISSING = object()


@dataclasses.dataclass
class Candidate:
    line: int
    problem: Problem  # unsaved, content_hash set
    steps: list
    final_answer: str | None
    generator: str
    is_correct: object  # True, False, None, or MISSING (grade it)

    @property
    def content_hash(self):
        return candidate_hash(self.problem.content_hash, self.steps)


@register("candidates")
def load(records, project, *, progress):
    """Import candidate-solution records into ``project``."""
    return store(((line, [parse_candidate(record, line)]) for line, record in records), project, progress)


@register("gsm8k-examples")
def load_gsm8k_examples(records, project, *, progress):
    """Import GSM8K example model solutions into ``project``; into a fresh project, its "$" is text."""
    lock_project(project)  # before looking: a concurrent import's problems count too
    fresh = holds_no_problems(project)
    result = store(((line, parse_gsm8k_example(record, line)) for line, record in records), project, progress)
    dollars_as_text(project, fresh)
    return result


def parse_candidate(record, line):
    check_keys(record, CANDIDATE_KEYS, line)
    text(record, "id", line, required=False, nullable=True)
    if "ground_truth_answer" not in record:
        raise FormatError("is missing (give null when there is none)", line=line, field="ground_truth_answer")
    statement = text(record, "problem", line)
    gt_solution = text(record, "ground_truth_solution", line, required=False, nullable=True)
    gt_answer = text(record, "ground_truth_answer", line, nullable=True)
    steps = record.get("steps", MISSING)
    if steps is MISSING:
        raise FormatError("is missing", line=line, field="steps")
    if not isinstance(steps, list) or not steps:
        raise FormatError("must be a non-empty list of strings", line=line, field="steps")
    for i, step in enumerate(steps):
        check_text(step, line, f"steps[{i}]")
    if "final_answer" in record:
        final_answer = text(record, "final_answer", line, nullable=True)
    else:
        final_answer = extract_answer(steps[-1])
    generator = text(record, "generator", line, required=False, nullable=True, max_length=200) or ""
    is_correct = record.get("is_correct", MISSING)
    if is_correct is not MISSING and is_correct is not None and not isinstance(is_correct, bool):
        raise FormatError(f"must be true, false or null, got {is_correct!r}", line=line, field="is_correct")
    problem = Problem(
        problem=statement,
        ground_truth_solution=gt_solution,
        ground_truth_answer=gt_answer,
        content_hash=problem_hash(statement, gt_solution, gt_answer),
    )
    return Candidate(line, problem, steps, final_answer, generator, is_correct)


def parse_gsm8k_example(record, line):
    """The candidates of one GSM8K example line.

    The reference solution is stored in GSM8K's own spelling (``#### 18`` where the example
    file writes ``A: 18`` on the last line), so these problems are the very rows that
    ``import_problems gsm8k/test.jsonl`` creates.
    """
    statement = text(record, "question", line)
    truth = text(record, "ground_truth", line)
    head, _, last = truth.rstrip().rpartition("\n")
    if not last.startswith("A:") or not last[2:].strip():
        raise FormatError("must end with an 'A: <answer>' line", line=line, field="ground_truth")
    gt_answer = last[2:].strip()
    gt_solution = f"{head}\n#### {gt_answer}" if head else f"#### {gt_answer}"
    problem = Problem(
        problem=statement,
        ground_truth_solution=gt_solution,
        ground_truth_answer=gt_answer,
        content_hash=problem_hash(statement, gt_solution, gt_answer),
    )
    candidates = []
    for key, entry in record.items():
        if key in ("question", "ground_truth"):
            continue
        if not isinstance(entry, dict):
            raise FormatError("must be an object {is_correct, solution}", line=line, field=key)
        for name in entry:
            if name not in ("is_correct", "solution"):
                raise FormatError("unknown key (expected is_correct, solution)", line=line, field=f"{key}.{name}")
        solution = text(entry, "solution", line, where=f"{key}.solution")
        is_correct = entry.get("is_correct")
        if is_correct is not None and not isinstance(is_correct, bool):
            raise FormatError(f"must be true, false or null, got {is_correct!r}", line=line, field=f"{key}.is_correct")
        check_text(key, line, key, max_length=200)
        steps = [s for s in solution.split("\n") if s.strip()]
        candidates.append(Candidate(line, problem, steps, extract_answer(steps[-1]), key, is_correct))
    if not candidates:
        raise FormatError("no model solutions on this line", line=line)
    return candidates


def store(lines, project, progress):
    """Store ``(line, [Candidate, ...])`` pairs: problems found or created, answers graded.

    The raw-output formats (``raw_outputs``) store their split completions through here too.
    """
    lock_project(project)
    result = ImportResult(unit="solutions", details={"problems": 0, "solutions": 0, "steps": 0, "graded": 0})
    for chunk in chunks(lines, CHUNK):
        flush(project, chunk, result)
        progress.advance(len(chunk))
    return result


def flush(project, chunk, result):
    """Store one chunk of ``(line, [Candidate, ...])``; returns ``{content hash: solution id}`` of
    every candidate in it, stored now or before (the step-label formats label their steps)."""
    candidates = [c for _, cs in chunk for c in cs]
    problem_ids, created, _ = ensure_problems(project, [c.problem for c in candidates])
    result.details["problems"] += created

    ids = dict(
        Solution.objects.filter(
            project=project, content_hash__in=list({c.content_hash for c in candidates})
        ).values_list("content_hash", "id")
    )
    fresh, seen = {}, set(ids)
    for c in candidates:
        if c.content_hash not in seen:
            seen.add(c.content_hash)
            fresh[c.content_hash] = c

    to_grade = [
        (c.final_answer, c.problem.ground_truth_answer)
        for c in fresh.values()
        if c.is_correct is MISSING and c.problem.ground_truth_answer is not None
    ]
    verdicts = grade_pairs(to_grade)
    result.details["graded"] += len(to_grade)

    solutions = []
    for content_hash, c in fresh.items():
        is_correct = c.is_correct
        if is_correct is MISSING:
            is_correct = verdicts.get((c.final_answer, c.problem.ground_truth_answer))
        solutions.append(Solution(
            project=project,
            problem_id=problem_ids[c.problem.content_hash],
            generator=c.generator,
            final_answer=c.final_answer,
            is_correct=is_correct,
            has_pre_generated=True,
            num_steps=len(c.steps),
            content_hash=content_hash,
        ))
    Solution.objects.bulk_create(solutions, batch_size=CHUNK)
    steps = [
        Step(solution=solution, position=i, alternative=0, text=step_text)
        for solution, c in zip(solutions, fresh.values())
        for i, step_text in enumerate(c.steps)
    ]
    Step.objects.bulk_create(steps, batch_size=2000)

    # Counted in solutions: a record may hold several (openai-chat's n choices), and one already
    # stored, or repeated in the file, is skipped however it is named.
    result.records += len(chunk)
    result.created += len(solutions)
    result.skipped += len(candidates) - len(solutions)
    result.details["solutions"] += len(solutions)
    result.details["steps"] += len(steps)
    ids.update((solution.content_hash, solution.id) for solution in solutions)
    return ids
