"""Answer grading: find a solution's final answer and judge it against the ground truth.

- ``extract_answer`` (``labeling.grading.extraction``) finds the final answer: PRM800K's
  ``# Answer`` step first, then the forms math-verify's extraction knows ("The final answer
  is ...", ``\\boxed{}``, "**Answer:** 12", a closing sentence) and GSM8K's ``#### x`` and
  ``A: x`` lines. No sympy runs there, so it is safe and fast at import.
- ``is_equivalent`` first compares normalised strings (cheap, and most answers match or
  differ there), then asks math-verify, which parses LaTeX into sympy and compares values,
  intervals, tuples and sets.
- ``grade`` and ``grade_solutions`` apply that to stored solutions.

math-verify runs in worker processes (``labeling.grading.pool``): a sympy comparison can hang
for ever, and math-verify's own timeout needs the main thread, so its timeouts are switched
off and the pool kills a worker that overruns ``timeout`` seconds (Django setting
``STEPMARK_GRADING_TIMEOUT``; at most ``STEPMARK_GRADING_WORKERS`` workers; both read in
annotator/settings.py). The worker processes need neither: they get each comparison's work
and nothing else (labeling/grading/worker.py). This works from any thread and any worker pool.
A comparison that times out counts as not equivalent.
"""
import functools
import logging
import re
from concurrent.futures import ThreadPoolExecutor

from django.conf import settings

from labeling.grading.extraction import extract_answer, last_boxed  # noqa: F401  (the grading API)
from labeling.grading.pool import GradingTimeout, WorkerFailed, get_pool

logger = logging.getLogger(__name__)

# Longer answers are compared as strings only: a real final answer is short, and parsing
# pages of LaTeX is where sympy gets lost.
MAX_ANSWER_CHARS = 1000


def normalise(answer):
    """A canonical spelling for the cheap comparison: no ``$``, box, spacing, ``\\left``,
    ``\\dfrac``, degree sign or trailing period."""
    s = answer.strip().rstrip(".").strip()
    while len(s) >= 2 and s[0] == "$" and s[-1] == "$" and not s.endswith("\\$"):
        s = s[1:-1].strip().rstrip(".").strip()
    boxed = last_boxed(s)
    if boxed is not None and re.fullmatch(r"\\(?:boxed|fbox)\s*\{.*\}", s, re.DOTALL):
        s = boxed
    s = re.sub(r"\\[dt]frac(?![a-zA-Z])", r"\\frac", s)
    s = re.sub(r"\\(?:left|right)(?![a-zA-Z])", "", s)
    s = re.sub(r"\^\s*\{?\s*\\circ\s*\}?", "", s)
    s = re.sub(r"\\[!,;: ]", "", s)
    s = re.sub(r"\s+", "", s)
    return s.rstrip(".")


def is_equivalent(answer, ground_truth, timeout=None):
    """Whether ``answer`` means the same as ``ground_truth`` (both LaTeX or plain text).

    Never raises for bad input and never takes much longer than ``timeout`` seconds per
    comparison (plus a worker's start-up on first use); a timeout counts as False.
    """
    if not isinstance(answer, str) or not isinstance(ground_truth, str):
        return False
    a, g = normalise(answer), normalise(ground_truth)
    if not a or not g:
        return False
    if a == g:
        return True
    if len(answer) > MAX_ANSWER_CHARS or len(ground_truth) > MAX_ANSWER_CHARS:
        return False
    timeout = _default_timeout() if timeout is None else timeout
    try:
        return _verify(_as_latex(answer), _as_latex(ground_truth), float(timeout))
    except GradingTimeout:
        logger.warning("grading timed out after %ss: %.80r vs %.80r", timeout, answer, ground_truth)
        return False


def grade(final_answer, ground_truth, timeout=None):
    """True or False, or None when the answer or the ground truth is missing."""
    if final_answer is None or ground_truth is None or not final_answer.strip() or not ground_truth.strip():
        return None
    return is_equivalent(final_answer, ground_truth, timeout=timeout)


def grade_pairs(pairs, *, timeout=None):
    """``{(final_answer, ground_truth): grade}`` for each distinct pair, graded in parallel
    on the worker pool."""
    distinct = list(dict.fromkeys(pairs))
    with ThreadPoolExecutor(max_workers=_worker_count()) as threads:
        return dict(zip(distinct, threads.map(lambda pair: grade(*pair, timeout=timeout), distinct)))


def grade_solutions(solutions, *, timeout=None, batch_size=1000):
    """Grade ``solutions`` (a Solution queryset) and store ``is_correct`` in bulk.

    Each distinct (answer, ground truth) pair is compared once, on as many workers as the
    pool has. Returns counts: ``{"graded", "correct", "wrong", "ungradable", "changed"}``.
    """
    from labeling.models import Solution

    rows = list(solutions.values_list("id", "final_answer", "problem__ground_truth_answer", "is_correct"))
    verdicts = grade_pairs([(answer, truth) for _, answer, truth, _ in rows], timeout=timeout)
    counts = {"graded": len(rows), "correct": 0, "wrong": 0, "ungradable": 0, "changed": 0}
    changed = []
    for pk, answer, truth, old in rows:
        verdict = verdicts[(answer, truth)]
        counts[{True: "correct", False: "wrong", None: "ungradable"}[verdict]] += 1
        if verdict != old:
            changed.append(Solution(pk=pk, is_correct=verdict))
    Solution.objects.bulk_update(changed, ["is_correct"], batch_size=batch_size)
    counts["changed"] = len(changed)
    return counts


def _as_latex(answer):
    """``$``-wrap an answer unless it already carries math delimiters or a box."""
    s = answer.strip()
    if re.search(r"(?<!\\)\$", s) or "\\boxed" in s or "\\(" in s or "\\[" in s:
        return s
    return f"${s}$"


@functools.lru_cache(maxsize=4096)
def _verify(answer, truth, timeout):
    # Timeouts raise, so they are not cached: a busy machine may do better next time.
    try:
        reply = get_pool(_worker_count()).ask(answer, truth, timeout)
    except WorkerFailed:
        # One retry on a fresh worker: a worker may have been killed from outside.
        reply = get_pool(_worker_count()).ask(answer, truth, timeout)
    if "error" in reply:
        logger.debug("math-verify failed on %.80r vs %.80r: %s", answer, truth, reply["error"])
        return False
    return reply["equal"]


def _default_timeout():
    return settings.STEPMARK_GRADING_TIMEOUT


def _worker_count():
    return settings.STEPMARK_GRADING_WORKERS
