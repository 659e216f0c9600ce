"""The annotator loop's PostgreSQL functions, one versioned ``.sql`` file per version.

``<function>.v<n>.sql`` is the whole ``CREATE OR REPLACE FUNCTION`` statement of version n,
written out in full. A migration creates a version by executing its file (``load``), and its
reverse executes the version before (or drops the function). A version a migration has
loaded is never edited again: a new rule is a new file and a new migration, so migrating any
database to any point gives the function that point had. The newest version is what a
migrated database runs (tests/labeling/work/test_sql_functions.py checks it).

What each function does and which rules it shares with the Python path is said at the top of
its newest file; labeling/work/queue.py and labeling/work/submission.py call them.
"""
from pathlib import Path

FOLDER = Path(__file__).resolve().parent


def load(version):
    """The text of ``<version>.sql`` in this folder, e.g. ``load("stepmark_hand_out.v2")``."""
    return (FOLDER / f"{version}.sql").read_text(encoding="utf-8")


def newest(function):
    """The newest version's name of ``function`` (``"stepmark_hand_out.v2"``)."""
    versions = [int(p.name[len(function) + 2:-4]) for p in FOLDER.glob(f"{function}.v*.sql")]
    return f"{function}.v{max(versions)}"
