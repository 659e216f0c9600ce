"""Generation runs as the web side starts and cancels them: rows only, no model.

The researcher API (``scoring.api``) creates a queued ``GenerationRun`` here and queues the
``scoring.tasks.run_generation`` task; the worker does the rest (``scoring.jobs``). Kept apart
from the jobs so that the web process's imports never reach the PRM core (the import-linter
contract "the web side never imports torch" in pyproject.toml).
"""
from django.db import transaction
from django.db.models import Exists, OuterRef
from django.utils import timezone

from labeling.models import Assignment, Project, Solution
from scoring.models import GenerationRun


class JobConflict(Exception):
    """The request clashes with work already under way (``existing`` names it)."""

    def __init__(self, message, existing=None):
        super().__init__(message)
        self.existing = existing


def candidate_pool(project):
    """Solutions a generation may select: ordinary, never selected, never handed out."""
    handed_out = Assignment.objects.filter(solution=OuterRef("pk"))
    return Solution.objects.filter(
        project=project, generation__isnull=True, is_gold=False, is_screening=False
    ).filter(~Exists(handed_out))


def start_generation(project, *, size=None, user=None):
    """A new queued GenerationRun; JobConflict when one is still open for the project."""
    with transaction.atomic():
        Project.objects.select_for_update().filter(pk=project.pk).first()
        existing = GenerationRun.objects.filter(project=project, state__in=GenerationRun.OPEN_STATES).first()
        if existing is not None:
            raise JobConflict(f"Generation run {existing.pk} is still {existing.state}.", existing)
        return GenerationRun.objects.create(
            project=project, size=project.generation_size if size is None else size,
            strategy=project.selection_strategy, selection_mix=project.selection_mix,
            requested_by=user if user is not None and user.is_authenticated else None,
        )


def strategy_of(run):
    """``(strategy, mix)`` the run selects by: those it was started with, else the project's now."""
    if run.strategy:
        return run.strategy, run.selection_mix
    return run.project.selection_strategy, run.project.selection_mix


def cancel_run(run):
    """Cancel a queued or scoring run; False when it is past that (selecting or finished)."""
    changed = GenerationRun.objects.filter(
        pk=run.pk, state__in=(GenerationRun.QUEUED, GenerationRun.SCORING)
    ).update(state=GenerationRun.CANCELLED, finished_at=timezone.now())
    run.refresh_from_db()
    return bool(changed)
