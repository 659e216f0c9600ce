"""Drawing with the real Asymptote program (Debian's asymptote and dvisvgm: make asymptote)."""
import re

import pytest

from labeling.diagrams.asy import DrawFailed, asy_path, draw
from labeling.diagrams.blocks import asy_blocks
from labeling.diagrams.svg import sanitise

LIMITS = {"timeout": 60, "memory_mb": 512}


@pytest.fixture(scope="module", autouse=True)
def asymptote():
    assert asy_path(), "Asymptote is not installed (make asymptote)"


def code_of(record):
    return asy_blocks(record["problem"])[0]


@pytest.mark.parametrize("unique_id", [
    "test/algebra/1349.json",  # a labelled grid without size(): drawn at the default size
    "test/precalculus/902.json",  # 3D (import three), drawn as vectors
    "test/prealgebra/1187.json",  # a right-angle mark (the stand-in for AoPS's olympiad module)
])
def test_math500_diagrams_are_drawn_with_their_labels(asy_problems, unique_id):
    record = next(r for r in asy_problems if r["unique_id"] == unique_id)
    svg = sanitise(draw(code_of(record), **LIMITS))
    width, height = (float(v) for v in re.search(r'width="([\d.]+)pt" height="([\d.]+)pt"', svg).groups())
    assert 50 < max(width, height) <= 400, (width, height)
    assert svg.count("<path") > 3
    # 2D labels are LaTeX glyphs referenced from <defs>; a 3D scene's come as paths of their own.
    assert ("<use" in svg) == ("import three" not in record["problem"])


def test_a_diagram_that_does_not_compile_fails_with_asymptotes_message(asy_problems):
    record = next(r for r in asy_problems if "import TrigMacros" in r["problem"])
    with pytest.raises(DrawFailed, match="could not load module 'TrigMacros'"):
        draw(code_of(record), **LIMITS)


def test_an_error_after_some_drawing_fails_the_whole_diagram():
    # asy still writes what it drew before the error; that half figure is not the diagram.
    with pytest.raises(DrawFailed, match=r"diagram\.asy: 2\.1: no matching variable 'nosuchfunction'"):
        draw('draw((0,0)--(1,1));\nnosuchfunction((0,0));', **LIMITS)


def test_a_diagram_that_runs_too_long_is_stopped():
    with pytest.raises(DrawFailed, match="longer than 2 s"):
        draw("while(true) {}", timeout=2, memory_mb=512)


def test_a_diagram_that_wants_too_much_memory_is_stopped():
    with pytest.raises(DrawFailed, match="[Mm]emory|bad_alloc|stopped by"):
        draw("real[] a = array(200000000, 1.0); dot((a[0], 0));", timeout=60, memory_mb=256)


@pytest.mark.parametrize("code, why", [
    ('file f = input("/etc/passwd"); string s = f; label(s, (0,0));', "Read from other directories disabled"),
    ('settings.globalread = true;', "modifying non-public field"),
    ('settings.safe = false; system("true");', "modifying non-public field"),
    ('file f = output("/tmp/stepmark-asy-escape"); write(f, "x");', "Write to other directories disabled"),
    ('include "/etc/passwd";', "file path is not allowed"),
    ('from "/etc/passwd" access x;', "file path is not allowed"),
    # LaTeX refuses, then waits for another file name until the time limit.
    ('label("\\input{/etc/passwd}", (0,0));', "Not reading from /etc/passwd"),
])
def test_the_code_cannot_reach_outside_its_folder(code, why):
    with pytest.raises(DrawFailed, match=re.escape(why)) as info:
        draw(code, timeout=5, memory_mb=512)
    assert "root:" not in str(info.value)
