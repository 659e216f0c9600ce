"""[asy] diagrams: found in imported text, drawn to SVG by Asymptote in a background job.

- ``blocks``: the diagrams of a text (``[asy]...[/asy]``) and the hash that names one.
- ``asy``: running the real ``asy`` program on one diagram, in a temporary folder, with a time
  and a memory limit, never in a web request.
- ``svg``: the sanitiser every drawing passes before it is stored (an allowlist).
- ``store``: the Diagram rows of a project and drawing the pending ones, each code once.
- ``tasks``: the Celery job queued when an import commits.

The browser asks for a drawing by project and hash (``GET /api/projects/{id}/diagrams/{sha256}.svg``,
labeling/api/diagrams.py) and shows it through ``<img>`` (frontend/src/diagram.js).
"""
