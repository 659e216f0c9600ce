"""A clone stands alone: no tracked file points outside the repository, and ``data/`` is what
its README says it is.
"""
import gzip
import json
import re
import subprocess

import pytest

from labeling.data import data_dir, data_path, open_data
from tests.conftest import ROOT

# Nothing may name the folder that once sat beside the clone, nor an absolute path of the
# development machine. An absolute path starts after a space, a quote, a bracket, "=", ":" or ","
# (or a line's start), so that relative paths such as labeling/work/ or <pk>/work/ do not count.
FORBIDDEN = re.compile(r"\.\./shared\b|\bshared/data\b|(?:^|(?<=[\s\"'`(\[=:,]))/(?:work|root|home)/", re.M)
THIS_FILE = "tests/test_standalone.py"


def tracked_files():
    listed = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout
    return [name for name in listed.decode().split("\0") if name]


def readable_text(path):
    """A tracked file's text: gzip files decompressed, other binary files as Latin-1."""
    data = path.read_bytes()
    if data[:2] == b"\x1f\x8b":
        data = gzip.decompress(data)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return data.decode("latin-1")


def test_the_forbidden_pattern_tells_absolute_paths_from_relative_ones():
    named = ["../shared/data/x.jsonl", "see shared/data", "`/work/main`", "cd /root/x", 'open("/home/u/a")',
             "/work/shared/prm800k-format.md"]
    allowed = ["labeling/work/queue.py", 'path("projects/<int:pk>/work/")', "{project.pk}/work/", "shared_data",
               "the shared cores", "data/README.md"]
    assert all(FORBIDDEN.search(text) for text in named)
    assert not any(FORBIDDEN.search(text) for text in allowed)


def test_no_tracked_file_names_the_shared_folder_or_a_path_of_this_machine():
    files = tracked_files()
    assert "data/README.md" in files and "README.md" in files  # a real listing of the repository
    found = []
    for name in files:
        if name == THIS_FILE or not (ROOT / name).is_file():
            continue  # a file deleted in the work tree but not yet in git
        for number, line in enumerate(readable_text(ROOT / name).splitlines(), start=1):
            if FORBIDDEN.search(line):
                found.append(f"{name}:{number}: {line.strip()[:120]}")
    assert found == []


def readme_table():
    """``{file: records}`` from the table in data/README.md."""
    rows = {}
    for line in (data_dir() / "README.md").read_text(encoding="utf-8").splitlines():
        match = re.match(r"\| `([^`]+)` \|.*\| ([\d,]+) \| [^|]+\|$", line)
        if match:
            rows[match[1]] = int(match[2].replace(",", ""))
    return rows


def records_in(relpath):
    with open_data(relpath) as handle:
        if ".jsonl" in relpath:
            return sum(1 for line in handle if line.strip())
        loaded = json.load(handle)
        return len(loaded) if isinstance(loaded, list) else 1


def test_data_holds_exactly_the_files_its_readme_lists_with_their_record_counts():
    table = readme_table()
    assert len(table) == 8
    present = {str(p.relative_to(data_dir())) for p in data_dir().rglob("*") if p.is_file()} - {"README.md"}
    licences = {name for name in present if name.startswith("LICENSES/")}
    assert present - licences == set(table)
    # Every upstream licence text is linked from the README, and every link has its file.
    linked = set(re.findall(r"\]\((LICENSES/[^)]+)\)", (data_dir() / "README.md").read_text(encoding="utf-8")))
    assert licences and licences == linked
    assert {name: records_in(name) for name in table} == table


def test_data_files_are_gzip_made_reproducibly():
    # gzip -9n: no file name and no time stamp in the header, so the same input gives the same bytes
    for name in readme_table():
        if name.endswith(".gz"):
            header = data_path(name).read_bytes()[:10]
            assert header[:3] == b"\x1f\x8b\x08", name
            assert header[3] & 0x08 == 0, f"{name} names its original file"
            assert header[4:8] == b"\0\0\0\0", f"{name} carries a time stamp"


def test_the_data_directory_is_the_repositorys_unless_stepmark_data_names_another(tmp_path, monkeypatch):
    monkeypatch.delenv("STEPMARK_DATA", raising=False)
    assert data_dir() == ROOT / "data"
    monkeypatch.setenv("STEPMARK_DATA", str(tmp_path))
    assert data_dir() == tmp_path
    (tmp_path / "plain.jsonl").write_text('{"a": 1}\n', encoding="utf-8")
    (tmp_path / "packed.jsonl.gz").write_bytes(gzip.compress('{"b": "é"}\n'.encode()))
    with open_data("plain.jsonl") as plain, open_data("packed.jsonl.gz") as packed:
        assert (plain.read(), packed.read()) == ('{"a": 1}\n', '{"b": "é"}\n')
    with pytest.raises(FileNotFoundError):
        open_data("missing.jsonl.gz")
