"""Where the data of the demo, the tests and the benchmarks lives: ``data/`` in the repository.

``STEPMARK_DATA`` names another directory with the same layout (``data/README.md`` lists the
files). The files are gzip-compressed; ``open_data`` reads them as text either way.

Plain standard library on purpose: the PRM core's tests (run without Django) and the benches
import this too.
"""
import gzip
import os
from pathlib import Path

REPOSITORY = Path(__file__).resolve().parent.parent


def data_dir():
    """``$STEPMARK_DATA`` if set, else ``<repository>/data``."""
    configured = os.environ.get("STEPMARK_DATA")
    return Path(configured) if configured else REPOSITORY / "data"


def data_path(relpath):
    """The path of ``relpath`` (e.g. ``"math/math500.jsonl.gz"``) under ``data_dir()``."""
    return data_dir() / relpath


def open_text(path):
    """``path`` opened for reading as UTF-8 text, decompressed when its name ends in ``.gz``."""
    if str(path).endswith(".gz"):
        return gzip.open(path, "rt", encoding="utf-8")
    return open(path, encoding="utf-8")


def open_data(relpath):
    """``open_text`` of ``data_path(relpath)``."""
    return open_text(data_path(relpath))
