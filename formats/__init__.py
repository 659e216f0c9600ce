"""What both sides read the same way, with no Django and no torch: PRM800K's labels, file errors.

``labeling`` (the importers, the exports) and ``scoring.prm`` (the PRM core's readers) each
import from here, so a rule they share has one home; this package imports neither of them
(``pyproject.toml``'s import-linter contracts).

- ``errors``: ``FormatError``, bad input named by file, line and field;
- ``prm800k``: a PRM800K pass as a trajectory and its training labels.
"""
