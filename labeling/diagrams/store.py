"""The Diagram rows of a project, and drawing the pending ones, each code once.

``collect`` finds the diagrams in what the pages show of a project (problem statements and
steps), creates a row for each code not seen before (in any project) and links it to the
project. ``draw_pending`` draws the project's pending rows one by one, each under its row lock
with SKIP LOCKED, so two workers never draw the same code; a drawn or failed row is never drawn
again (a re-import finds it by its hash).
"""
import contextlib
import logging
import time

from django.conf import settings
from django.db import connection, transaction
from django.utils import timezone

from labeling.models import Diagram, Problem, Step

from .asy import DrawFailed, asy_path, draw
from .blocks import OPEN, asy_blocks, diagram_hash
from .svg import UnsafeSVG, sanitise

logger = logging.getLogger(__name__)


def texts(project):
    """The project's texts that hold an ``[asy]`` tag: its problems, then its steps."""
    yield from Problem.objects.filter(project=project, problem__contains=OPEN).values_list("problem", flat=True)
    yield from Step.objects.filter(solution__project=project, text__contains=OPEN).values_list("text", flat=True)


def collect(project):
    """Create and link the project's diagrams; returns how many codes its text holds."""
    codes = {}
    for text in texts(project):
        for code in asy_blocks(text):
            codes.setdefault(diagram_hash(code), code)
    if not codes:
        return 0
    Diagram.objects.bulk_create(
        [Diagram(sha256=h, code=code) for h, code in codes.items()], ignore_conflicts=True, batch_size=500
    )
    ids = Diagram.objects.filter(sha256__in=list(codes)).values_list("id", flat=True)
    link = Diagram.projects.through
    link.objects.bulk_create(
        [link(diagram_id=i, project_id=project.id) for i in ids], ignore_conflicts=True, batch_size=500
    )
    return len(codes)


def draw_pending(project):
    """Draw the project's pending diagrams; returns ``(drawn, failed)`` counted by this call."""
    counts = {Diagram.DRAWN: 0, Diagram.FAILED: 0}
    pending = Diagram.objects.filter(projects=project, status=Diagram.PENDING)
    if asy_path() is None:
        # Not the diagrams' fault: they stay pending (the page shows their code) until
        # Asymptote is installed and manage.py draw_diagrams runs.
        logger.warning("Asymptote is not installed: %s diagrams of project %s stay pending (make asymptote)",
                       pending.count(), project.pk)
        return 0, 0
    # Row locks where the database has them (PostgreSQL). SQLite (the demo) has none, and its
    # transactions take the write lock at BEGIN (transaction_mode IMMEDIATE): there the
    # drawing runs outside one, or every submit would wait for asy.
    lock = connection.features.has_select_for_update
    for diagram_id in list(pending.values_list("id", flat=True)):
        with transaction.atomic() if lock else contextlib.nullcontext():
            rows = Diagram.objects.filter(id=diagram_id, status=Diagram.PENDING)
            diagram = (rows.select_for_update(skip_locked=True) if lock else rows).first()
            if diagram is None:
                continue  # another worker holds it or has drawn it
            draw_one(diagram)
            diagram.save(update_fields=["status", "svg", "error", "draw_seconds", "drawn_at"])
        counts[diagram.status] += 1
    return counts[Diagram.DRAWN], counts[Diagram.FAILED]


def draw_one(diagram):
    """Draw ``diagram`` and set its status, SVG or error (not saved)."""
    start = time.monotonic()
    try:
        diagram.svg = sanitise(
            draw(diagram.code, timeout=settings.STEPMARK_DIAGRAM_TIMEOUT, memory_mb=settings.STEPMARK_DIAGRAM_MEMORY_MB)
        )
        diagram.status, diagram.error = Diagram.DRAWN, ""
    except (DrawFailed, UnsafeSVG) as exc:
        diagram.svg, diagram.status, diagram.error = "", Diagram.FAILED, str(exc)
    diagram.draw_seconds = time.monotonic() - start
    diagram.drawn_at = timezone.now()
