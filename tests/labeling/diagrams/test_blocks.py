"""Finding the diagrams of a text, and the hash that names one."""
import hashlib

from labeling.diagrams.blocks import asy_blocks, diagram_hash


def test_every_closed_block_in_order_without_repeats():
    text = "Look: [asy]draw((0,0)--(1,1));[/asy] and [asy]dot((0,0));[/asy] again [asy]draw((0,0)--(1,1));[/asy]"
    assert asy_blocks(text) == ["draw((0,0)--(1,1));", "dot((0,0));"]


def test_the_code_is_exactly_what_stands_between_the_tags():
    code = '\nunitsize(1cm);\r\n  label("$\\frac{1}{2}$", (0,0));  \n'
    assert asy_blocks(f"before[asy]{code}[/asy]after") == [code]


def test_an_unclosed_or_empty_block_is_no_diagram():
    assert asy_blocks("[asy]draw((0,0)--(1,1));") == []
    assert asy_blocks("[asy][/asy] and [/asy]") == []
    assert asy_blocks("no diagram here") == []


def test_an_opening_tag_inside_a_block_counts_too():
    # The page may split the text at another tag than the server does (math first), so the
    # server draws every candidate the page could ask for.
    text = "$[asy]$ [asy]dot((0,0));[/asy]"
    assert asy_blocks(text) == ["$ [asy]dot((0,0));", "dot((0,0));"]


def test_the_hash_is_sha256_of_the_utf8_code():
    code = 'label("é ∑ 😀", (0,0));'
    assert diagram_hash(code) == hashlib.sha256(code.encode("utf-8")).hexdigest()
    assert len(diagram_hash(code)) == 64 and diagram_hash(code) != diagram_hash(code + " ")


def test_every_math500_diagram_is_found(asy_problems):
    assert len(asy_problems) == 42
    assert all(len(asy_blocks(r["problem"])) == 1 for r in asy_problems)
