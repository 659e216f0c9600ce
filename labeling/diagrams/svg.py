"""The sanitiser every drawing passes before it is stored: an allowlist, not a blocklist.

Asymptote's SVG (from dvisvgm) holds paths, groups, glyphs referenced by ``<use>``, circles and
rectangles. What leaves here is the SVG namespace's drawing elements with their geometry and
paint attributes, and nothing else: no script, foreignObject, style, image, link or animation
element, no event (``on*``) or ``style`` attribute, no reference that is not to a fragment of
the same file (``#id``, ``url(#id)``). The XML is parsed by defusedxml (no DTD, no entities)
and written out afresh, so comments and processing instructions are gone too.

The SVG is also shown only through ``<img>`` and served with a Content-Security-Policy that
loads nothing (labeling/api/diagrams.py): this is the first fence, not the only one.
"""
import re
from xml.sax.saxutils import escape, quoteattr

import defusedxml.ElementTree as SafeET
from defusedxml import DefusedXmlException

SVG = "http://www.w3.org/2000/svg"
XLINK = "http://www.w3.org/1999/xlink"
XML = "http://www.w3.org/XML/1998/namespace"

ELEMENTS = frozenset({
    "svg", "g", "defs", "symbol", "use", "path", "rect", "circle", "ellipse", "line", "polyline",
    "polygon", "text", "tspan", "clipPath", "mask", "marker", "pattern", "linearGradient",
    "radialGradient", "stop", "title", "desc",
})
ATTRIBUTES = frozenset({
    "id", "version", "viewBox", "preserveAspectRatio", "x", "y", "width", "height", "d", "points",
    "x1", "y1", "x2", "y2", "cx", "cy", "r", "rx", "ry", "fx", "fy", "dx", "dy", "transform",
    "fill", "fill-opacity", "fill-rule", "stroke", "stroke-width", "stroke-dasharray",
    "stroke-dashoffset", "stroke-linecap", "stroke-linejoin", "stroke-miterlimit", "stroke-opacity",
    "opacity", "clip-path", "clip-rule", "clipPathUnits", "mask", "maskUnits", "maskContentUnits",
    "visibility", "font-family", "font-size", "font-style", "font-weight", "text-anchor",
    "dominant-baseline", "offset", "stop-color", "stop-opacity", "gradientUnits",
    "gradientTransform", "spreadMethod", "patternUnits", "patternContentUnits", "patternTransform",
    "markerWidth", "markerHeight", "markerUnits", "refX", "refY", "orient", "marker-start",
    "marker-mid", "marker-end",
})
REFERENCES = frozenset({"href", f"{{{XLINK}}}href"})  # kept only when they point inside the file
_FRAGMENT = re.compile(r"#[A-Za-z_][\w.:-]*")
_URL = re.compile(r"url\s*\(", re.IGNORECASE)
_LOCAL_URL = re.compile(r"url\(#[A-Za-z_][\w.:-]*\)")


class UnsafeSVG(ValueError):
    """The drawing is not an SVG document this sanitiser can read."""


def sanitise(text):
    """``text`` (an SVG document) with only the allowed elements and attributes, as a string."""
    try:
        root = SafeET.fromstring(text, forbid_dtd=True)
    except (SafeET.ParseError, DefusedXmlException) as exc:
        raise UnsafeSVG(f"not a readable SVG document: {exc}") from None
    if root.tag != f"{{{SVG}}}svg":
        raise UnsafeSVG(f"the root element is {root.tag!r}, not an SVG <svg>")
    out = [f'<svg xmlns="{SVG}" xmlns:xlink="{XLINK}"']
    _attributes(root, out)
    out.append(">")
    _content(root, out)
    out.append("</svg>")
    return "".join(out)


def _content(element, out):
    if element.text:
        out.append(escape(element.text))
    for child in element:
        name = _svg_name(child.tag)
        if name in ELEMENTS and name != "svg":
            out.append(f"<{name}")
            _attributes(child, out)
            out.append(">")
            _content(child, out)
            out.append(f"</{name}>")
        # A dropped element goes with everything inside it; the text after it stays.
        if child.tail:
            out.append(escape(child.tail))


def _attributes(element, out):
    for key, value in element.attrib.items():
        if key in REFERENCES:
            if _FRAGMENT.fullmatch(value.strip()):
                out.append(f" xlink:href={quoteattr(value.strip())}")
            continue
        if key == f"{{{XML}}}space":
            out.append(f" xml:space={quoteattr(value)}")
            continue
        if key not in ATTRIBUTES:
            continue
        if _URL.search(value) and not _LOCAL_URL.fullmatch(value.strip()):
            continue  # paint or clip from another file
        out.append(f" {key}={quoteattr(value)}")


def _svg_name(tag):
    """The local name of an SVG element; None for another namespace (or a comment)."""
    if isinstance(tag, str) and tag.startswith(f"{{{SVG}}}"):
        return tag[len(SVG) + 2:]
    return None
