"""Reading the files the PRM core works on into plain Python objects.

Formats:

- ``prm800k``: PRM800K JSONL as exported (see ``docs/prm800k-format.md``), read into
  labelled ``Example`` s for training and step-level evaluation.
- ``candidates``: JSONL, one solution a line: ``{"problem": str, "steps": [str, ...], ...}``;
  optional ``answer`` (str) and ``is_correct`` (bool) make best-of-N evaluation possible. Other
  keys are carried through to the scored output untouched.
- ``processbench``: a JSON list of ``{id, problem, steps, label, final_answer_correct, ...}``,
  ``label`` the 0-based index of the earliest wrong step, -1 when there is none.
- ``gsm8k-examples``: OpenAI's ``example_model_solutions.jsonl`` (several model solutions per
  GSM8K problem, each with ``is_correct``), read as candidates, one step per line.
- ``trl``: TRL's stepwise supervision, ``{"prompt", "completions", "labels"}`` a row, as JSONL or
  Parquet (a name ending in ``.parquet``): Stepmark's TRL exports, those filtered by agreement
  between label sources among them. Labels are the export's already (true, false): a row is one
  labelled example, and the neutral policy was applied when it was written.

Every reader also takes the file gzip-compressed: a name ending in ``.gz`` is decompressed.

Bad input raises ``formats.errors.FormatError`` naming the file, the line (the list index for
JSON lists) and the field.
"""
import dataclasses
import gzip
import json
from pathlib import Path

from formats import prm800k
from formats.errors import FormatError
from scoring.prm.model import CORRECT, INCORRECT

FORMATS = ("prm800k", "trl", "candidates", "processbench", "gsm8k-examples")
# The formats that carry step labels, which training reads.
LABELLED = ("prm800k", "trl")
# What a rating-0 ("neutral": correct but no progress) step is trained as; the rule is
# formats.prm800k's (the PRM800K paper counts neutral as positive).
NEUTRAL_POLICIES = tuple(prm800k.NEUTRAL_POLICIES)
_TARGETS = {True: CORRECT, False: INCORRECT, None: None}


@dataclasses.dataclass
class Example:
    """One row to train or evaluate on: a problem, steps, and per step 1, 0 or None (not trained)."""

    problem: str
    steps: list
    labels: list


def open_text(path):
    """``path`` opened as UTF-8 text, gunzipped when its name ends in ``.gz``."""
    if str(path).endswith(".gz"):
        return gzip.open(path, "rt", encoding="utf-8")
    return open(path, encoding="utf-8")


def read_jsonl(path):
    """Yield ``(line_number, object)`` for every non-blank line of a JSONL file."""
    with open_text(path) as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError as exc:
                raise FormatError(f"not valid JSON ({exc.msg})", path=path, line=number) from None
            if not isinstance(record, dict):
                raise FormatError("expected a JSON object", path=path, line=number)
            yield number, record


def _get(record, dotted, kind, *, path, line, optional=False):
    value = record
    for key in dotted.split("."):
        if not isinstance(value, dict) or key not in value:
            if optional:
                return None
            raise FormatError("missing", path=path, line=line, field=dotted)
        value = value[key]
    if value is None and optional:
        return None
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        raise FormatError(f"expected {_kind_name(kind)}, got {type(value).__name__}", path=path, line=line, field=dotted)
    return value


def _kind_name(kind):
    names = {str: "a string", list: "a list", dict: "an object", int: "an integer", bool: "true or false"}
    return names.get(kind, getattr(kind, "__name__", str(kind)))


def _steps(record, *, path, line):
    steps = _get(record, "steps", list, path=path, line=line)
    for i, step in enumerate(steps):
        if not isinstance(step, str):
            raise FormatError("expected a string", path=path, line=line, field=f"steps[{i}]")
    return steps


def rating_label(rating, neutral="positive"):
    """The training target of a PRM800K rating: +1 -> 1, -1 -> 0, 0 per ``neutral``, null -> None."""
    return _TARGETS[prm800k.label(rating, neutral)]


def prm800k_examples(record, *, neutral="positive", alternatives=True, path=None, line=None):
    """The labelled examples in one PRM800K record.

    The trajectory (``formats.prm800k``: which steps, where it ends, what an unrated or a
    human step means) is one example. With ``alternatives``, every other rated candidate at a
    position it reached becomes an example of its own: the trajectory's prefix (unlabelled:
    the trajectory example already trains it) followed by the alternative.
    """
    if neutral not in NEUTRAL_POLICIES:
        raise ValueError(f"neutral policy must be one of {', '.join(NEUTRAL_POLICIES)}")
    problem = _get(record, "question.problem", str, path=path, line=line)
    steps, labels, extra = [], [], []
    try:
        for candidates, taken in prm800k.walk(record):
            if alternatives:
                for j, (text, rating) in enumerate(candidates):
                    label = rating_label(rating, neutral)
                    if j != taken and label is not None:
                        extra.append(Example(problem, steps + [text], [None] * len(steps) + [label]))
            if taken is not None:
                text, rating = candidates[taken]
                steps.append(text)
                labels.append(rating_label(rating, neutral))
    except FormatError as exc:
        raise exc.at(path, line) from None
    main = [Example(problem, steps, labels)] if any(label is not None for label in labels) else []
    return main + extra


def read_prm800k(path, *, neutral="positive", alternatives=True, limit=None):
    """All labelled examples in a PRM800K JSONL file (the first ``limit`` records, if given)."""
    examples = []
    for count, (line, record) in enumerate(read_jsonl(path)):
        if limit is not None and count >= limit:
            break
        examples.extend(prm800k_examples(record, neutral=neutral, alternatives=alternatives, path=path, line=line))
    return examples


def read_trl(path, *, limit=None):
    """The labelled examples of a TRL stepwise-supervision file (JSONL, or Parquet by its name)."""
    examples = []
    for count, (line, record) in enumerate(_trl_rows(path)):
        if limit is not None and count >= limit:
            break
        problem = _get(record, "prompt", str, path=path, line=line)
        steps = _get(record, "completions", list, path=path, line=line)
        labels = _get(record, "labels", list, path=path, line=line)
        if len(labels) != len(steps):
            raise FormatError(f"{len(labels)} labels for {len(steps)} completions", path=path, line=line,
                              field="labels")
        for i, (step, label) in enumerate(zip(steps, labels)):
            if not isinstance(step, str):
                raise FormatError("expected a string", path=path, line=line, field=f"completions[{i}]")
            if not isinstance(label, bool):
                raise FormatError("expected true or false", path=path, line=line, field=f"labels[{i}]")
        if steps:
            examples.append(Example(problem, list(steps), [_TARGETS[label] for label in labels]))
    return examples


def _trl_rows(path):
    """``(line, row)`` of a TRL file: JSONL lines, or a Parquet file's rows numbered from 1."""
    if not str(path).endswith(".parquet"):
        yield from read_jsonl(path)
        return
    import pyarrow.parquet  # only where a Parquet file is read

    try:
        table = pyarrow.parquet.read_table(path)
    except (OSError, ValueError) as exc:  # pyarrow's ArrowInvalid is a ValueError
        raise FormatError(f"not a Parquet file ({exc})", path=path) from None
    for number, row in enumerate(table.to_pylist(), start=1):
        yield number, row


def read_training(path, *, neutral="positive", alternatives=True, limit=None):
    """The labelled examples of a PRM800K or TRL file (by ``detect_format``), for training."""
    fmt = detect_format(path)
    if fmt == "prm800k":
        return read_prm800k(path, neutral=neutral, alternatives=alternatives, limit=limit)
    if fmt == "trl":
        return read_trl(path, limit=limit)
    raise FormatError(f"reads as {fmt}, which has no step labels to train on: give PRM800K or TRL files", path=path)


def read_candidates(path):
    """Candidate solutions from JSONL: the records, checked to have ``problem`` and ``steps``."""
    records = []
    for line, record in read_jsonl(path):
        _get(record, "problem", str, path=path, line=line)
        _steps(record, path=path, line=line)
        _get(record, "answer", str, path=path, line=line, optional=True)
        _get(record, "is_correct", bool, path=path, line=line, optional=True)
        records.append(record)
    return records


def read_processbench(path):
    """ProcessBench items from a JSON list, checked (the "line" in errors is the list index)."""
    try:
        with open_text(path) as handle:
            items = json.loads(handle.read())
    except json.JSONDecodeError as exc:
        raise FormatError(f"not valid JSON ({exc.msg}, line {exc.lineno})", path=path) from None
    if not isinstance(items, list):
        raise FormatError("expected a JSON list of items", path=path)
    for index, item in enumerate(items):
        if not isinstance(item, dict):
            raise FormatError("expected an object", path=path, line=index)
        _get(item, "problem", str, path=path, line=index)
        steps = _steps(item, path=path, line=index)
        label = _get(item, "label", int, path=path, line=index)
        if not -1 <= label < len(steps):
            raise FormatError(f"must be -1 or a step index below {len(steps)}", path=path, line=index, field="label")
    return items


def read_gsm8k_examples(path):
    """OpenAI's GSM8K model solutions as candidates: one step per line, answer after ``A:``."""
    records = []
    for line, record in read_jsonl(path):
        problem = _get(record, "question", str, path=path, line=line)
        for generator, value in record.items():
            if not isinstance(value, dict) or "solution" not in value:
                continue
            text = _get(value, "solution", str, path=path, line=line)
            steps = [s.strip() for s in text.split("\n") if s.strip()]
            answer = steps[-1][2:].strip() if steps and steps[-1].startswith("A:") else None
            records.append({"problem": problem, "steps": steps, "answer": answer,
                            "is_correct": _get(value, "is_correct", bool, path=path, line=line),
                            "generator": generator, "source_line": line})
    return records


def detect_format(path):
    """Guess a file's format from its first record."""
    path = Path(path)
    if path.suffix == ".parquet":
        return "trl"
    with open_text(path) as handle:
        head = handle.read(4096).lstrip()
    if head.startswith("["):
        return "processbench"
    for _, record in read_jsonl(path):
        if "label" in record and "question" in record:
            return "prm800k"
        if {"prompt", "completions", "labels"} <= set(record):
            return "trl"
        if "question" in record:
            return "gsm8k-examples"
        return "candidates"
    raise FormatError("empty file, cannot tell its format", path=path)


def read_solutions(path, fmt="auto", *, neutral="positive"):
    """The solutions in any supported file, as dicts holding at least ``problem`` and ``steps``.

    PRM800K records become their labelled examples (``labels`` added, 0 ratings per
    ``neutral``); the others keep their own fields.
    """
    fmt = detect_format(path) if fmt == "auto" else fmt
    if fmt == "prm800k":
        return [dataclasses.asdict(e) for e in read_prm800k(path, neutral=neutral)]
    if fmt == "trl":
        return [dataclasses.asdict(e) for e in read_trl(path)]
    if fmt == "candidates":
        return read_candidates(path)
    if fmt == "processbench":
        return read_processbench(path)
    if fmt == "gsm8k-examples":
        return read_gsm8k_examples(path)
    raise ValueError(f"unknown format {fmt!r}; choose from {', '.join(FORMATS)}")
