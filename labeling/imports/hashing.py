"""Content hashes that make imports idempotent.

A hash is sha256 over canonical JSON (sorted keys, compact, UTF-8), so the same content gives
the same hash whichever importer reads it: a problem imported from PRM800K records and again
from a candidate file or a MATH problem file is one Problem row.
"""
import hashlib
import json


def sha256_json(value):
    """sha256 hex digest of ``value`` as canonical JSON."""
    text = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode()).hexdigest()


def problem_hash(problem, ground_truth_solution, ground_truth_answer):
    """``Problem.content_hash``: statement, reference solution and reference answer."""
    return sha256_json([problem, ground_truth_solution, ground_truth_answer])


def candidate_hash(problem_content_hash, steps):
    """``Solution.content_hash`` of an imported candidate solution: its problem and its steps.

    Nothing else: the same steps are the same solution whichever model the import names (a file
    without a model name, or one imported under two formats, must not store it twice), and
    whatever final answer extraction reads from them (extraction improves; the steps do not
    change). Migration 0020_candidate_hash_steps_only rehashed the rows stored under the older
    key (problem, steps, final answer, generator).
    """
    return sha256_json(["candidate", problem_content_hash, list(steps)])
