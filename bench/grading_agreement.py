"""How often Stepmark's grading of model solutions agrees with people's correctness labels.

    .venv/bin/python -m bench.grading_agreement [--file PATH] [--truth PATH ...] [--examples 8]

For every labelled record of the file it extracts the final answer
(``labeling.grading.extraction.extract_answer`` over the whole solution) and grades it against
the ground truth (``labeling.grading.answers.grade``, math-verify in the killable worker pool),
then counts the records where that verdict equals the people's label. Beside it, for
comparison: the same from the last step alone (what ``import_candidates`` reads), and
math-verify alone (its own ``parse`` of the full text, then ``verify``; run in the same worker
pool, with the same time limit). It prints the forms that gave the answers, what extraction
costs per solution (here, and on the GSM8K candidate pool that ``load_demo`` imports), and the
disagreements.

Default file: the repository's ProcessBench GSM8K (``data/processbench/gsm8k.json.gz``,
``final_answer_correct``; ground truth from the GSM8K test set by problem text). ``--file``
reads other sets, JSON (a list) or JSONL, gzip or not, in these shapes:

- ProcessBench / candidates: ``{problem, steps, final_answer_correct | is_correct | correct,
  ground_truth_answer | answer ?, generator ?, id ?}``; ``solution``, ``response``,
  ``completion`` or ``output`` (a string) may stand for ``steps``.
- GSM8K example solutions: ``{question, ground_truth, <model>: {is_correct, solution}, ...}``.
- PRM800K: ``{question: {problem, ground_truth_answer}, label: {steps, finish_reason}}``: the
  chosen trajectory of each finished solution, labelled by its last step's rating (+1 right,
  -1 wrong; other ratings are left out).

A record without its own ground truth takes the answer of its problem from ``--truth`` files
(JSONL ``{problem | question, answer}``, GSM8K's ``#### x`` read off), by default the GSM8K test
set and MATH-500 of ``data/``. Records with no label or no ground truth are counted and left
out. The goal printed is the one of issue #18: at least 99% agreement (on ProcessBench GSM8K
and on a held-out MATH set).

Prints figures only; ``DJANGO_DEBUG=1`` is set for the settings (no database is used).
"""
import argparse
import dataclasses
import json
import os
import sys
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor

from labeling.data import data_path, open_text

GOAL = 0.99
DEFAULT_FILE = "processbench/gsm8k.json.gz"
DEFAULT_TRUTH = ("gsm8k/test.jsonl.gz", "math/math500.jsonl.gz")
POOL_FILE = "gsm8k/example_model_solutions.jsonl.gz"


@dataclasses.dataclass
class Record:
    id: str
    generator: str
    steps: list  # the solution's steps (one string for a solution given whole)
    truth: str | None
    label: bool | None


def read_records(path):
    """The file's records (a JSON list, or JSON lines), each a dict."""
    with open_text(path) as f:
        text = f.read()
    stripped = text.lstrip()
    if stripped.startswith("["):
        return json.loads(stripped)
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def labelled(raw, truths):
    """``Record``s of the raw records, whatever their shape (see the module's docstring)."""
    for n, r in enumerate(raw):
        if isinstance(r.get("question"), dict) and isinstance(r.get("label"), dict):
            yield from _prm800k(r, n, truths)
        elif "ground_truth" in r and isinstance(r.get("question"), str):
            truth = r["ground_truth"].rstrip().rpartition("\n")[2].removeprefix("A:").strip()
            for model, entry in r.items():
                if isinstance(entry, dict):
                    steps = [s for s in entry["solution"].split("\n") if s.strip()]
                    yield Record(f"{n}/{model}", model, steps, truth, entry.get("is_correct"))
        else:
            problem = r.get("problem") or r.get("question") or ""
            truth = next((r[k] for k in ("ground_truth_answer", "answer", "gt_answer") if r.get(k)), None)
            steps = r.get("steps") or next((r[k] for k in ("solution", "response", "completion", "output") if r.get(k)), "")
            label = next((r[k] for k in ("final_answer_correct", "is_correct", "correct") if k in r), None)
            yield Record(str(r.get("id", n)), r.get("generator") or "", steps if isinstance(steps, list) else [steps],
                         truth if truth is not None else truths.get(_key(problem)), label)


def _prm800k(r, n, truths):
    question, label = r["question"], r["label"]
    if label.get("finish_reason") != "solution":
        return
    chosen = []
    for step in label["steps"]:
        i = step.get("chosen_completion")
        chosen.append(step["completions"][i] if i is not None else step.get("human_completion") or {})
    rating = chosen[-1].get("rating") if chosen else None
    if rating not in (1, -1):
        return
    truth = question.get("ground_truth_answer") or truths.get(_key(question.get("problem", "")))
    yield Record(str(n), r.get("labeler") or "", [c.get("text", "") for c in chosen], truth, rating == 1)


def load_truths(paths):
    """``{problem text: answer}`` from GSM8K-shaped (``#### x``) or MATH-shaped (``answer``) JSONL."""
    truths = {}
    for path in paths:
        for r in read_records(path):
            problem = r.get("problem") or r.get("question")
            answer = r.get("answer")
            if problem and isinstance(answer, str):
                truths[_key(problem)] = answer.rsplit("####", 1)[1].strip() if "####" in answer else answer
    return truths


def _key(problem):
    return " ".join(problem.split())


def agreement(verdicts, records):
    return sum((v or False) == r.label for v, r in zip(verdicts, records))


def math_verify_alone(records, timeout, workers):
    """math-verify's verdict on each full text, by its own extraction (worker.compare)."""
    from labeling.grading.answers import _as_latex
    from labeling.grading.pool import GradingTimeout, get_pool

    pool = get_pool(workers)

    def one(record):
        try:
            reply = pool.ask("\n\n".join(record.steps), _as_latex(record.truth), timeout)
        except GradingTimeout:
            return False
        return reply.get("equal", False)

    with ThreadPoolExecutor(max_workers=workers) as threads:
        return list(threads.map(one, records))


def extraction_cost(texts, extract):
    start = time.perf_counter()
    for text in texts:
        extract(text)
    return (time.perf_counter() - start) / max(len(texts), 1)


def main(argv=None):
    parser = argparse.ArgumentParser(prog="bench.grading_agreement", description=__doc__.split("\n\n")[0])
    parser.add_argument("--file", help=f"labelled solutions (default: data/{DEFAULT_FILE})")
    parser.add_argument("--truth", action="append", help="ground-truth file(s) by problem text (default: GSM8K test, MATH-500)")
    parser.add_argument("--examples", type=int, default=8, help="disagreements to print (default 8)")
    parser.add_argument("--timeout", type=float, help="seconds per comparison (default: STEPMARK_GRADING_TIMEOUT)")
    args = parser.parse_args(argv)

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "annotator.settings")
    os.environ.setdefault("DJANGO_DEBUG", "1")
    import django

    django.setup()
    from django.conf import settings

    from labeling.grading.answers import grade_pairs
    from labeling.grading.extraction import extract_answer, find_answer

    timeout = args.timeout or settings.STEPMARK_GRADING_TIMEOUT
    workers = settings.STEPMARK_GRADING_WORKERS
    path = args.file or data_path(DEFAULT_FILE)
    truths = load_truths(args.truth or [data_path(p) for p in DEFAULT_TRUTH])
    every = list(labelled(read_records(path), truths))
    records = [r for r in every if r.label is not None and r.truth]
    print(f"file: {path}: {len(every)} records, {len(records)} with a label and a ground truth "
          f"({len(every) - len(records)} left out)")
    if not records:
        return 1

    extract_answer("warm-up: math-verify's regexes are imported and compiled on first use")
    found = [find_answer(r.steps) for r in records]
    last = [extract_answer(r.steps[-1]) for r in records]
    verdicts = grade_pairs([(a, r.truth) for (a, _), r in zip(found, records)], timeout=timeout)
    ours = [verdicts[(a, r.truth)] for (a, _), r in zip(found, records)]
    verdicts = grade_pairs([(a, r.truth) for a, r in zip(last, records)], timeout=timeout)
    ours_last = [verdicts[(a, r.truth)] for a, r in zip(last, records)]
    alone = math_verify_alone(records, timeout, workers)

    n = len(records)
    for name, figures in (
        ("Stepmark grading (whole solution)", ours),
        ("Stepmark grading (last step only, as import_candidates reads)", ours_last),
        ("math-verify alone (its parse of the full text)", alone),
    ):
        agree = agreement(figures, records)
        print(f"{name}: agrees with the label on {agree} / {n} = {100 * agree / n:.2f}%")
    agree = agreement(ours, records)
    print(f"goal (issue #18): at least {100 * GOAL:.0f}% agreement: {'met' if agree >= GOAL * n else 'NOT met'}")
    print("forms that gave the answer: " + ", ".join(f"{f or 'none'} {c}" for f, c in Counter(f for _, f in found).most_common()))

    texts = ["\n\n".join(r.steps) for r in records]
    print(f"extraction: {1000 * extraction_cost(texts, extract_answer):.3f} ms per solution ({n} solutions of this file)")
    pool = [r.steps for r in labelled(read_records(data_path(POOL_FILE)), {})]
    whole = extraction_cost(["\n".join(s) for s in pool], extract_answer)
    line = extraction_cost([s[-1] for s in pool], extract_answer)
    print(f"extraction on the GSM8K candidate pool ({len(pool)} solutions, {sum(map(len, pool))} lines): "
          f"{1000 * whole:.3f} ms per whole solution, {1000 * line:.3f} ms per last line (what the import reads)")

    wrong = [(r, a, f, v) for r, (a, f), v in zip(records, found, ours) if (v or False) != r.label]
    print(f"disagreements: {len(wrong)}" + (f" (the first {args.examples})" if len(wrong) > args.examples else ""))
    for r, answer, form, verdict in wrong[: args.examples]:
        print(f"  {r.id} {r.generator}: label {r.label}, graded {verdict}; answer {answer!r} ({form}), truth {r.truth!r}")
        print(f"    ...{r.steps[-1][-160:]!r}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
