"""How deep a JSON value may nest (``STEPMARK_MAX_JSON_DEPTH``): one rule for API bodies and import lines.

Python's JSON parser and encoder recurse, one level of Python's stack per level of nesting:
``[[[[...`` a thousand deep ends in a RecursionError wherever it is parsed, and a little less
wherever it is encoded again (an import hashes its records). No record or request of Stepmark
nests more than a few levels, so anything deeper than the limit is refused as bad input:
``labeling/api/limits.py`` for request bodies, ``labeling/imports/common.py`` for import lines.
"""
from django.conf import settings


def max_depth():
    return settings.STEPMARK_MAX_JSON_DEPTH


def deeper_than(value, limit):
    """True when ``value`` (parsed JSON) nests arrays and objects more than ``limit`` levels deep.

    Level by level, without recursion, and only ``limit`` levels down.
    """
    level = [value]
    for _ in range(limit):
        level = [child for v in level if isinstance(v, (dict, list))
                 for child in (v.values() if isinstance(v, dict) else v)]
        if not level:
            return False
    return any(isinstance(v, (dict, list)) for v in level)
