"""The sanitiser: an allowlist of SVG drawing elements and attributes, nothing else."""
import pytest

from labeling.diagrams.svg import UnsafeSVG, sanitise

HOSTILE = """<?xml version='1.0' encoding='UTF-8'?>
<!-- a comment -->
<svg xmlns='http://www.w3.org/2000/svg' xmlns:xlink='http://www.w3.org/1999/xlink'
     xmlns:x='http://example.org/x' width='10pt' height='10pt' viewBox='0 0 10 10' onload='alert(1)'>
  <script>alert(2)</script>
  <script xlink:href='https://evil.example/x.js'/>
  <foreignObject width='10' height='10'><div xmlns='http://www.w3.org/1999/xhtml'>
    <img src='x' onerror='alert(3)'/></div></foreignObject>
  <style>@import url(https://evil.example/x.css);</style>
  <defs><path id='g1' d='M0 0L1 1'/></defs>
  <g onclick='alert(4)' style='fill:url(https://evil.example/p)' transform='translate(1 1)'>
    <use xlink:href='#g1' x='1' y='2'/>
    <use xlink:href='https://evil.example/sprite.svg#g1'/>
    <use href='data:image/svg+xml;base64,PHN2Zy8+'/>
    <path d='M0 0L5 5' stroke='#000' fill='url(https://evil.example/p)' stroke-width='0.5'/>
    <path d='M0 0L5 5' fill='url(#grad)' clip-path='url(#c)'/>
    <a xlink:href='javascript:alert(5)'><text x='1' y='1'>link</text></a>
    <image xlink:href='https://evil.example/track.png' width='1' height='1'/>
    <animate attributeName='href' to='javascript:alert(6)'/>
    <set attributeName='onmouseover' to='alert(7)'/>
    <x:thing/>
    <text x='2' y='3' x:evil='1'>a &lt; b &amp; c</text>
  </g>
</svg>"""


@pytest.fixture(scope="module")
def clean():
    return sanitise(HOSTILE)


def test_no_script_foreign_object_style_link_image_or_animation(clean):
    for tag in ("<script", "<foreignObject", "<style", "<a ", "<image", "<animate", "<set", "<div", "<img", "thing"):
        assert tag not in clean, tag
    assert "alert" not in clean and "<!--" not in clean


def test_no_event_or_style_attribute(clean):
    for attribute in ("onload", "onclick", "onerror", "onmouseover", "style=", "x:evil"):
        assert attribute not in clean, attribute


def test_only_references_inside_the_file_stay(clean):
    assert "evil.example" not in clean and "data:" not in clean and "javascript" not in clean
    assert '<use xlink:href="#g1" x="1" y="2">' in clean
    assert 'fill="url(#grad)" clip-path="url(#c)"' in clean


def test_the_drawing_itself_stays(clean):
    assert clean.startswith('<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" '
                            'width="10pt" height="10pt" viewBox="0 0 10 10">')
    assert '<path id="g1" d="M0 0L1 1">' in clean
    assert '<g transform="translate(1 1)">' in clean
    assert '<path d="M0 0L5 5" stroke="#000" stroke-width="0.5">' in clean  # the foreign paint dropped
    assert '<text x="2" y="3">a &lt; b &amp; c</text>' in clean


def test_sanitising_twice_changes_nothing(clean):
    assert sanitise(clean) == clean


@pytest.mark.parametrize("text, why", [
    ("<!DOCTYPE svg [<!ENTITY x 'boom'>]><svg xmlns='http://www.w3.org/2000/svg'>&x;</svg>", "DTD"),
    ("<svg xmlns='http://www.w3.org/2000/svg'><g></svg>", "mismatched tag"),
    ("<html xmlns='http://www.w3.org/1999/xhtml'/>", "not an SVG"),
    ("<svg/>", "not an SVG"),  # no namespace: not SVG at all
])
def test_what_is_not_an_svg_document_is_refused(text, why):
    with pytest.raises(UnsafeSVG, match=why):
        sanitise(text)
