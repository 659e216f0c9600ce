"""The grading worker: a child process that runs math-verify, one comparison per line.

Started by ``labeling.grading.answers`` as ``python -m labeling.grading.worker``. It reads JSON lines
``{"answer": ..., "truth": ...}`` on stdin and writes ``{"equal": bool}`` (or
``{"error": "..."}``) on stdout, after a first ``{"ready": true}`` once math-verify is
imported. The parent enforces the time limit by killing this process, so math-verify's own
signal-based timeouts are switched off here.

It imports nothing from Django: it starts in well under a second.
"""
import json
import logging
import sys


def compare(answer, truth):
    """math-verify's verdict on ``answer`` against ``truth`` (both LaTeX, ``$``-wrapped)."""
    from math_verify import parse, verify

    gold = parse(truth, parsing_timeout=None)
    target = parse(answer, parsing_timeout=None)
    if not gold or not target:
        return False
    # Gold first: math-verify is asymmetric (assignments and equations are read off the gold).
    return bool(verify(gold, target, timeout_seconds=None))


def main():
    # The "timeout is disabled" warning is expected: the parent owns the time limit.
    logging.getLogger("math_verify").setLevel(logging.ERROR)
    import math_verify  # noqa: F401  (pay the import before saying ready)

    out = sys.stdout
    out.write('{"ready": true}\n')
    out.flush()
    for line in sys.stdin:
        try:
            request = json.loads(line)
            reply = {"equal": compare(request["answer"], request["truth"])}
        except Exception as exc:  # a bad comparison must not end the worker
            reply = {"error": f"{type(exc).__name__}: {exc}"[:500]}
        out.write(json.dumps(reply) + "\n")
        out.flush()


if __name__ == "__main__":
    main()
