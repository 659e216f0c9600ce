"""Cutting a model's whole completion into steps, the way an import chose.

- ``paragraphs`` (the default): pieces separated by a blank line, the PRM800K and
  ProcessBench convention (their steps are a solution's paragraphs);
- ``lines``: every non-blank line a step (GSM8K-style solutions);
- ``regex``: split where a regular expression matches (``pattern``); a zero-width pattern
  such as ``(?=Step \\d+:)`` keeps the marker at the start of each step.

Pieces are stripped of surrounding whitespace and empty ones dropped, so "a\\n\\n\\n\\nb" is
two steps whichever way.
"""
import re

from formats.errors import FormatError

SPLITS = ("paragraphs", "lines", "regex")
_BLANK_LINE = re.compile(r"\n[ \t]*\n")


def splitter(split="paragraphs", pattern=None):
    """A function ``text -> list of step strings``; a bad choice or pattern raises FormatError."""
    if split not in SPLITS:
        raise FormatError(f"must be one of {', '.join(SPLITS)}, got {split!r}", field="split")
    if split == "regex":
        return _by(_compile(pattern))
    if pattern is not None:
        raise FormatError("is only used with split=regex", field="pattern")
    if split == "lines":
        return lambda text: _pieces(text.splitlines())
    return _by(_BLANK_LINE)


def _compile(pattern):
    if not isinstance(pattern, str) or not pattern:
        raise FormatError("is required with split=regex (a regular expression)", field="pattern")
    try:
        compiled = re.compile(pattern)
    except re.error as exc:
        raise FormatError(f"is not a regular expression ({exc})", field="pattern") from None
    # re.split returns what capturing groups matched as pieces of their own: they would become steps.
    if compiled.groups:
        raise FormatError("has a capturing group; write (?:...) instead", field="pattern")
    return compiled


def _by(compiled):
    return lambda text: _pieces(compiled.split(text))


def _pieces(parts):
    return [part.strip() for part in parts if part.strip()]
