"""The diagrams of a text and the name of one.

A diagram is the exact text between ``[asy]`` and the first ``[/asy]`` after it. Its name is the
sha256 (hex) of that code as UTF-8; the browser computes the same (frontend/src/diagram.js).
"""
import hashlib

OPEN, CLOSE = "[asy]", "[/asy]"


def asy_blocks(text):
    """The code of every ``[asy]`` in ``text`` that is closed, in order, without repeats.

    Every opening tag counts, even one inside another block or inside math: the page may split
    the text differently (frontend/src/math.js reads ``$...$`` first), and drawing a few blocks
    it never shows costs less than missing one it does.
    """
    found = []
    start = text.find(OPEN)
    while start != -1:
        end = text.find(CLOSE, start + len(OPEN))
        if end == -1:
            break  # no later opening tag can be closed either
        code = text[start + len(OPEN):end]
        if code and code not in found:  # the page shows an empty block as nothing
            found.append(code)
        start = text.find(OPEN, start + 1)
    return found


def diagram_hash(code):
    return hashlib.sha256(code.encode("utf-8")).hexdigest()
