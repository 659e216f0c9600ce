"""Judge runs as a researcher's job: the web side (no client, no network).

``start_judge_run`` makes a queued ``JudgeRun`` for a generation or a list of solutions (one
open run per project: two at once would share neither the budget nor the rate limit, and could
label the same steps twice); the API then queues ``scoring.judge_tasks.run_judge`` on the
``default`` queue, whose worker runs ``scoring.judge_job.run``.
"""
from django.db import transaction
from django.utils import timezone

from labeling.errors import DomainError
from labeling.models import Generation, Project, Solution
from scoring.judge_settings import key_names
from scoring.models import JudgeRun, JudgeSettings
from scoring.runs import JobConflict

MAX_SOLUTION_IDS = 100_000


def start_judge_run(project, *, generation=None, solution_ids=None, user=None):
    """A new queued JudgeRun for generation number ``generation`` or ``solution_ids`` (exactly one).

    DomainError (400) when the judge is not set up, the generation is not the project's or an id
    names no solution of it; JobConflict when a run of the project is still open.
    """
    if (generation is None) == (not solution_ids):
        raise DomainError("Give either a generation or solution_ids.", field="generation")
    judge = JudgeSettings.objects.filter(project=project).first()
    if judge is None or not (judge.base_url and judge.model):
        raise DomainError("Set the judge's base_url and model first (judge-settings).", field="generation")
    if judge.api_key_env and judge.api_key_env not in key_names():
        raise DomainError(f"api_key_env {judge.api_key_env} is no longer one of STEPMARK_JUDGE_KEY_VARS: "
                          "change the judge settings.", field="generation")
    if generation is not None:
        if not Generation.objects.filter(project=project, number=generation).exists():
            raise DomainError(f"No generation {generation} in this project.", field="generation")
        solution_ids = []
    else:
        solution_ids = sorted(set(solution_ids))
        found = set(Solution.objects.filter(project=project, pk__in=solution_ids).values_list("pk", flat=True))
        strangers = [pk for pk in solution_ids if pk not in found]
        if strangers:
            # The same words for an id of another project and one that exists nowhere.
            raise DomainError(f"No solution {', '.join(map(str, strangers[:10]))} in this project.",
                              field="solution_ids")
    with transaction.atomic():
        Project.objects.select_for_update().filter(pk=project.pk).first()
        existing = JudgeRun.objects.filter(project=project, state__in=JudgeRun.OPEN_STATES).first()
        if existing is not None:
            raise JobConflict(f"Judge run {existing.pk} is still {existing.state}.", existing)
        return JudgeRun.objects.create(
            project=project, generation=generation, solution_ids=solution_ids,
            requested_by=user if user is not None and user.is_authenticated else None)


def mark_failed(run_id, error, result=None):
    """Record why the run failed (and what it did before), for the research page."""
    fields = {"state": JudgeRun.FAILED, "error": str(error)[:10000], "finished_at": timezone.now()}
    if result is not None:
        fields["result"] = result
    JudgeRun.objects.filter(pk=run_id, state__in=JudgeRun.OPEN_STATES).update(**fields)
