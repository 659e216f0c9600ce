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


def candidate_hash(problem_content_hash, steps, final_answer, generator):
    """``Solution.content_hash`` of an imported candidate solution."""
    return sha256_json(["candidate", problem_content_hash, list(steps), final_answer, generator])
