"""An assignment's draft revision: which version of its stored ratings a client's change is based on.

Two tabs (or two devices) can hold one assignment. Without a check, the later save wins: tab B's
-1 overwrote tab A's +1 while tab A still said "All changes saved". So the payload of an
assignment carries ``revision``, a fingerprint of what the server holds for it (its ratings with a
value, and the steps its annotator wrote), and a save or submit may send back the revision it was
based on: ``submission`` refuses it with a 409 naming the field ``revision`` when the stored
ratings changed since (``stale``), so nothing is overwritten unseen.

A fingerprint of the content rather than a counter: it needs no column and no write of its own,
is computed from the rows a save reads under its lock anyway, and two clients that agree on what
is stored agree on it. A save that changes nothing stored is taken whatever its base (the answer to
an earlier save was lost on the way and the client sends the same ratings again); an empty save
(the page's keep-alive) is checked, which is how a tab that is behind learns of it.
"""
import hashlib
import json

CHANGED = (
    "This solution changed since this page loaded it (in another tab or on another device): your change was "
    "not saved, and nothing was overwritten. Reload it to see what is saved and go on from there."
)


def fingerprint(ratings, own_steps):
    """The revision of ``ratings`` ``[(position, alternative, value, flagged)]`` (those with a value) and
    ``own_steps`` ``[(position, alternative, text)]`` (the steps the annotator wrote)."""
    data = [sorted(tuple(r) for r in ratings), sorted(tuple(s) for s in own_steps)]
    return hashlib.blake2b(json.dumps(data, separators=(",", ":")).encode(), digest_size=8).hexdigest()


# An own step stands in the fingerprint as OWN (-1) at its position, not by its index: the index is
# stored over every annotator's steps there and shown renumbered after what the annotator sees
# (work_serializers._own_step_numbers), and one own step per position is all an assignment has.
OWN = -1  # alternatives are 0 and up


def of_sheet(sheet):
    """The revision of a sheet ``{(position, alternative): submission.Entry}`` as its entries stand."""
    ratings = [(e.step.position, OWN if e.human else e.step.alternative, e.value, _flag(e.flagged))
               for e in sheet.values() if e.value is not None]
    own = [(e.step.position, OWN, e.step.text) for e in sheet.values() if e.human]
    return fingerprint(ratings, own)


def of_payload(ratings, steps):
    """The revision of an assignment payload's ``ratings`` and ``steps`` (work_serializers)."""
    mine = {(s["position"], a["alternative"]) for s in steps for a in s["alternatives"] if a["source"] == "human"}
    rated = [(r["position"], OWN if (r["position"], r["alternative"]) in mine else r["alternative"], r["value"],
              _flag(r["flagged"])) for r in ratings if r["value"] is not None]
    own = [(s["position"], OWN, a["text"]) for s in steps for a in s["alternatives"] if a["source"] == "human"]
    return fingerprint(rated, own)


def stale(base, before, after, items):
    """Whether a change based on ``base`` must be refused: the stored revision ``before`` is another one.

    ``after`` is the revision the change would store. A change that stores nothing new passes (a
    resent save); an empty one does not, so a keep-alive tells a tab that it is behind.
    """
    if base is None or base == before:
        return False
    return not (items and after == before)


def _flag(flagged):
    return None if flagged is None else bool(flagged)
