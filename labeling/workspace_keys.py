"""Which key does each workspace action, per person: the defaults and the rules of a remapping.

An annotator may bind an action of the workspace (frontend/src/workspace/keys.js, whose
``ACTIONS`` is the browser's copy of ``DEFAULTS`` below; tests/labeling/test_workspace_keys.py
checks the two agree) to a key of their own. What is stored on their ``Annotator.workspace_keys``
is only what they changed, ``{action: key}``: one key per action, which then replaces every
default key of that action; an action not named keeps its defaults. Keys are named as the
browser's ``KeyboardEvent.key`` names them, so case counts ("J" is Shift+j).
"""
from labeling.errors import DomainError

# Each action and its default keys, in the order the legend and the settings form list them.
DEFAULTS = {
    "good": ["1", "+"],
    "neutral": ["2", "0"],
    "bad": ["3", "-"],
    "flag": ["f"],
    "undo": ["u", "Backspace"],
    "submit": ["Enter"],
    "giveUp": ["g"],
    "badProblem": ["b"],
    "write": ["w"],
    "pickNext": ["p"],
    "help": ["?", "i"],
    "timer": ["t"],
    "undoSubmit": ["z"],
    "accept": ["a"],
}

# Keys the page needs for itself: Tab moves the focus (a keyboard user's only way between the
# buttons and fields), Escape leaves the own-step editor and closes the dialogs; Space scrolls
# a page and presses the focused button, so a binding would act twice.
RESERVED = {
    "Tab": "Tab moves the focus between the page's buttons and fields.",
    "Escape": "Escape leaves the editor and closes dialogs.",
    " ": "Space presses the focused button.",
}
# Named keys a person may bind besides one printable character.
NAMED = {"Enter", "Backspace", "Delete", "Insert", "Home", "End", "PageUp", "PageDown",
         "ArrowUp", "ArrowDown", "ArrowLeft", "ArrowRight"}


def effective(keys):
    """Each action's keys with ``keys`` (what a person changed) laid over the defaults."""
    return {action: [keys[action]] if action in keys else list(defaults) for action, defaults in DEFAULTS.items()}


def checked(keys):
    """``keys`` as stored, or a DomainError naming the action (``keys.good``) that breaks a rule."""
    if not isinstance(keys, dict):
        raise DomainError("Send the keys as an object of action: key.", "keys")
    for action, key in keys.items():
        field = f"keys.{action}"
        if action not in DEFAULTS:
            raise DomainError(f"{action!r} is no workspace action; the actions are {', '.join(DEFAULTS)}.", field)
        if not isinstance(key, str):
            raise DomainError("One key per action: name it as a string.", field)
        if key in RESERVED:
            raise DomainError(f"{RESERVED[key]} It cannot be bound to an action.", field)
        if not (key in NAMED or (len(key) == 1 and key.isprintable())):
            raise DomainError(f"{key!r} is not a key the workspace can bind: one character, or one of "
                              f"{', '.join(sorted(NAMED))}.", field)
    owner = {}
    for action, bound in effective(keys).items():
        for key in bound:
            if key in owner:
                # Name the action the person changed: that is the binding to fix.
                changed = action if action in keys else owner[key]
                other = owner[key] if changed == action else action
                raise DomainError(f"{key!r} is already the key of {other}: one key does one thing.",
                                  f"keys.{changed}")
            owner[key] = action
    return dict(keys)


def keys_of(annotator):
    """What a person changed (``{}``: the defaults; ``annotator`` None for an account without a row)."""
    return dict(annotator.workspace_keys) if annotator is not None else {}


def set_keys(annotator, keys):
    """Store ``keys`` (checked) as the person's; ``{}`` goes back to the defaults."""
    annotator.workspace_keys = checked(keys)
    annotator.save(update_fields=["workspace_keys"])
    return annotator.workspace_keys
