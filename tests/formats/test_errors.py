"""FormatError: one error for bad input in a file, on both sides."""
from formats.errors import FormatError


def test_the_message_names_what_is_known():
    assert str(FormatError("must be a string", path="x.jsonl", line=3, field="problem")) == (
        "x.jsonl:3: field 'problem': must be a string")
    assert str(FormatError("not valid JSON", line=2)) == "2: not valid JSON"
    assert str(FormatError("empty file")) == "empty file"


def test_the_caller_adds_the_file_and_the_line():
    error = FormatError("must be -1, 0, 1 or null", field="label.steps[0].completions[1].rating")
    placed = error.at("bad.jsonl", 4)
    assert str(placed) == "bad.jsonl:4: field 'label.steps[0].completions[1].rating': must be -1, 0, 1 or null"
    assert (placed.path, placed.line, placed.reason) == ("bad.jsonl", 4, "must be -1, 0, 1 or null")
    assert placed.at("other.jsonl", 9) is placed  # a file and line once named stay named
    assert placed.as_answer() == {"detail": str(placed), "line": 4, "field": "label.steps[0].completions[1].rating"}
