"""Reading PRM800K, candidate, ProcessBench and GSM8K files into plain examples."""
import gzip
import json

import pytest

from formats.errors import FormatError
from labeling.data import open_text
from scoring.prm.data import (
    detect_format,
    prm800k_examples,
    read_candidates,
    read_gsm8k_examples,
    read_prm800k,
    read_processbench,
    read_solutions,
)


def _record(steps, problem="What is 1 + 1?"):
    return {"question": {"problem": problem}, "label": {"steps": steps}}


def _position(*ratings, chosen=0, human=None):
    return {"completions": [{"text": f"c{i}:{r}", "rating": r, "flagged": None} for i, r in enumerate(ratings)],
            "human_completion": human, "chosen_completion": chosen}


def test_trajectory_labels_and_alternatives_by_hand():
    record = _record([
        _position(1),
        _position(-1, 0, 1, chosen=2),  # two alternatives beside the chosen one
        _position(0),
        _position(-1),  # the first -1: the trajectory ends here
        _position(1),  # never trained on
    ])
    main, *extra = prm800k_examples(record)
    assert main.steps == ["c0:1", "c2:1", "c0:0", "c0:-1"]
    assert main.labels == [1, 1, 1, 0]  # neutral counts as positive by default
    assert [(e.steps, e.labels) for e in extra] == [
        (["c0:1", "c0:-1"], [None, 0]),
        (["c0:1", "c1:0"], [None, 1]),
    ]


def test_neutral_policy_is_configurable():
    record = _record([_position(1), _position(0), _position(-1)])
    assert prm800k_examples(record, neutral="negative")[0].labels == [1, 0, 0]
    assert prm800k_examples(record, neutral="ignore")[0].labels == [1, None, 0]
    assert prm800k_examples(record, alternatives=False)[0].labels == [1, 1, 0]


def test_human_completion_continues_the_trajectory():
    human = {"text": "mine", "rating": 1, "source": "human", "flagged": None}
    record = _record([_position(-1, -1, chosen=None, human=human), _position(1)])
    main, *extra = prm800k_examples(record)
    assert main.steps == ["mine", "c0:1"] and main.labels == [1, 1]
    assert [e.steps for e in extra] == [["c0:-1"], ["c1:-1"]]


def test_readme_phase2_record(data_dir):
    record = json.loads((data_dir / "prm800k" / "readme_example_record.json").read_text())
    main, *extra = prm800k_examples(record)
    # two neutral steps chosen, then a position with no chosen completion (found_error): the
    # trajectory ends on the solution's own step there, its first -1, and each of the four
    # other rated candidates is an example of its own
    assert main.steps[2] == record["question"]["pre_generated_steps"][2]
    assert main.labels == [1, 1, 0]
    assert [e.labels for e in extra] == [[None, None, label] for label in (1, 0, 1, 1)]
    positions = record["label"]["steps"]
    rated = sum(c["rating"] is not None for p in positions for c in p["completions"])
    assert sum(label is not None for e in [main, *extra] for label in e.labels) == rated


def test_real_files_read(data_dir):
    path = data_dir / "prm800k" / "phase1_train.reconstructed.jsonl.gz"
    examples = read_prm800k(path, limit=20)
    with open_text(path) as handle:
        problems = {json.loads(next(handle))["question"]["problem"] for _ in range(20)}
    # every rated record gives examples; the 20th has only null ratings and gives none
    assert len({e.problem for e in examples}) == len(problems) - 1
    assert all(len(e.steps) == len(e.labels) for e in examples)
    native = read_prm800k(data_dir / "prm800k" / "native_records.jsonl.gz")
    assert any(0 in e.labels for e in native)
    gsm = read_gsm8k_examples(data_dir / "gsm8k" / "example_model_solutions.jsonl.gz")
    assert gsm[0]["answer"] == "26" and gsm[0]["steps"][-1] == "A: 26" and gsm[0]["is_correct"] is False
    assert detect_format(data_dir / "processbench" / "gsm8k.json.gz") == "processbench"
    assert detect_format(data_dir / "prm800k" / "native_records.jsonl.gz") == "prm800k"
    assert detect_format(data_dir / "gsm8k" / "example_model_solutions.jsonl.gz") == "gsm8k-examples"


def test_gzip_files_read_as_their_plain_copies(data_dir, tmp_path):
    for name in ("prm800k/native_records.jsonl.gz", "processbench/gsm8k.json.gz", "gsm8k/example_model_solutions.jsonl.gz"):
        packed = data_dir / name
        plain = tmp_path / packed.name.removesuffix(".gz")
        plain.write_bytes(gzip.decompress(packed.read_bytes()))
        assert detect_format(packed) == detect_format(plain)
        assert read_solutions(packed) == read_solutions(plain) != []
    bad = tmp_path / "bad.jsonl.gz"
    bad.write_bytes(gzip.compress(b'{"problem": "p", "steps": ["a"]}\n{not json\n'))
    with pytest.raises(FormatError, match=r"bad.jsonl.gz:2: not valid JSON"):
        read_candidates(bad)


def test_bad_input_names_file_line_and_field(tmp_path):
    path = tmp_path / "bad.jsonl"
    path.write_text(json.dumps(_record([_position(1)])) + "\n{not json\n")
    with pytest.raises(FormatError, match=r"bad.jsonl:2: not valid JSON"):
        read_prm800k(path)
    path.write_text(json.dumps(_record([_position(1, 5)])) + "\n")
    with pytest.raises(FormatError, match=r"bad.jsonl:1: field 'label.steps\[0\].completions\[1\].rating'"):
        read_prm800k(path)
    path.write_text(json.dumps({"problem": "p", "steps": ["a", 3]}) + "\n")
    with pytest.raises(FormatError, match=r"bad.jsonl:1: field 'steps\[1\]': expected a string"):
        read_candidates(path)
    path.write_text(json.dumps({"steps": ["a"]}) + "\n")
    with pytest.raises(FormatError, match=r"field 'problem': missing"):
        read_solutions(path)
    bench = tmp_path / "bench.json"
    bench.write_text(json.dumps([{"problem": "p", "steps": ["a"], "label": 1}]))
    with pytest.raises(FormatError, match=r"bench.json:0: field 'label'"):
        read_processbench(bench)
