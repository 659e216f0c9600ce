"""The loop's generation jobs on the database: scoring the pool with the champion, selecting a generation.

Plain functions; the Celery tasks in ``scoring.tasks`` only call them. Every job is safe to
run twice, because Celery redelivers a task whose worker died:

- the pool is scored in shards (``scoring.shards``) that every worker claims from the database;
  scores are written once per (solution, checkpoint) and a rerun of a shard scores only what is
  missing; a dead worker's shard is claimed by the next worker that asks;
- selection happens in one transaction that also marks the run done, so a second run finds
  it done and does nothing;
- a worker holds a PostgreSQL advisory lock (``labeling.locks``) on what it works on (the run
  while it starts it, the shard it scores), so a redelivered copy that arrives while the first
  is still alive steps aside.

Starting and cancelling a run (what the web process does) lives in ``scoring.runs``, the
champion in ``scoring.champions``, the locks in ``labeling.locks``, retraining and promotion in
``scoring.retrain``. Torch is imported only inside the functions that need it, so
the web process may import this module.
"""
from django.db import transaction
from django.db.models import Max
from django.utils import timezone

from labeling.analyze import analyze
from labeling.models import Generation, Project, Solution
from scoring import prelabels, shards, worker
from scoring.shards import solution_texts  # noqa: F401 (read from here by scoring.retrain)
from scoring.champions import ensure_champion
from labeling.locks import GENERATION_LOCK, advisory_lock
from scoring.models import GenerationRun, SolutionScore
from scoring.prm import strategies
from scoring.prm.selection import Candidate
from scoring.runs import candidate_pool, strategy_of
from scoring.shards import dropout_passes


# Scoring the pool ---------------------------------------------------------------------


def mark_run_failed(run_id, error):
    """Record why a run failed for good (the researcher's page shows it)."""
    GenerationRun.objects.filter(pk=run_id, state__in=GenerationRun.OPEN_STATES).update(
        state=GenerationRun.FAILED, error=str(error)[:10000], finished_at=timezone.now()
    )


def run_generation(run_id, *, batch_size=None, task_id="", pool_limit=None, fan_out=None):
    """Plan the run's shards, score the shards this worker can claim, and select once all are in. Idempotent.

    ``pool_limit`` (None: the whole pool) is passed to ``score_pool``. ``fan_out(run, shards)``,
    called once when the shards are planned, asks other workers to help (``scoring.tasks`` queues
    ``score_shards`` tasks); without it this worker scores every shard itself.

    Returns the run as it stands (None when it does not exist): ``done`` when this worker
    finished the last shard (or found them all finished), still ``scoring`` when other workers hold shards.
    """
    run = GenerationRun.objects.filter(pk=run_id).first()
    if run is None or run.state not in GenerationRun.OPEN_STATES:
        return run
    with advisory_lock(GENERATION_LOCK, run.pk) as acquired:
        if not acquired:
            return run  # a live worker is starting it; this copy is a redelivery
        run.refresh_from_db()
        if run.state not in GenerationRun.OPEN_STATES:
            return run
        if run.checkpoint_id is None:
            checkpoint = ensure_champion(run.project)
            GenerationRun.objects.filter(pk=run.pk, checkpoint__isnull=True).update(checkpoint=checkpoint)
        GenerationRun.objects.filter(pk=run.pk, state=GenerationRun.QUEUED).update(
            state=GenerationRun.SCORING, started_at=timezone.now()
        )
        # A run queued without a strategy (not through scoring.runs.start_generation) takes the project's
        # now, so that scoring (uncertainty or not) and selection agree.
        GenerationRun.objects.filter(pk=run.pk, strategy="").update(
            strategy=run.project.selection_strategy, selection_mix=run.project.selection_mix)
        if task_id:
            GenerationRun.objects.filter(pk=run.pk).update(task_id=task_id)
        run.refresh_from_db()
        planned = shards.plan(run, pool_limit=pool_limit) if run.state == GenerationRun.SCORING else 0
    if planned > 1 and fan_out is not None:
        fan_out(run, planned)
    return score_shards(run.pk, batch_size=batch_size, pool_limit=pool_limit)


def score_shards(run_id, *, batch_size=None, pool_limit=None):
    """One worker's part of a run: score the shards it can claim; the worker that finds them all
    done moves the run to ``selecting`` and selects (once: ``select`` checks the state under a row lock).

    Returns the run as it stands (None when it does not exist).
    """
    run = GenerationRun.objects.filter(pk=run_id).first()
    if run is None or run.state not in (GenerationRun.SCORING, GenerationRun.SELECTING):
        return run
    if run.state == GenerationRun.SCORING:
        prm = worker.get_prm(run.checkpoint)
        if not score_pool(run, prm, batch_size=batch_size, pool_limit=pool_limit):
            run.refresh_from_db()
            return run  # cancelled
        if not shards.all_done(run):
            run.refresh_from_db()
            return run  # other workers still hold shards; the last one in selects
        GenerationRun.objects.filter(pk=run.pk, state=GenerationRun.SCORING).update(state=GenerationRun.SELECTING)
    return select(run)


def score_pool(run, prm, *, batch_size=None, pool_limit=None):
    """Score the pool solutions the run's checkpoint has not scored yet, in the shards this worker claims.

    The pool is cut into shards first if it was not (``scoring.shards.plan``); with ``pool_limit``
    only the first that many pool solutions (by id) count: the demo's first generation must
    finish within a minute on a CPU (``annotator/demo_jobs.py``); the selection then draws on
    what the checkpoint scored.

    Progress is written after each batch (the shard's and the run's ``scored``); a cancelled run
    stops between batches (returns False). Scores already written are kept and skipped. Reads
    one batch of solutions at a time: memory stays flat in the pool's size.
    """
    shards.plan(run, pool_limit=pool_limit)
    return shards.score_claimed(run, prm, batch_size=batch_size)


# Selecting ----------------------------------------------------------------------------


def select(run):
    """Select the run's generation from its checkpoint's scores, in one transaction.

    The run's strategy (``scoring.runs.strategy_of``; the rules are ``scoring.prm.strategies``)
    chooses; the chosen solutions join a new Generation (number = the project's highest + 1,
    with the strategy and how it was set) with ``selection_rank`` 1..n, ``verifier_score`` and
    ``selection_reason``; the run records the generation and is done. ``random`` is seeded by
    the run's id, so a redelivered selection chooses the same. A run that is not ``selecting``
    is returned untouched.
    """
    project = run.project
    with transaction.atomic():
        run = GenerationRun.objects.select_for_update().get(pk=run.pk)
        if run.state != GenerationRun.SELECTING:
            return run
        Project.objects.select_for_update().filter(pk=project.pk).first()  # one numbering at a time
        strategy, mix = strategy_of(run)
        recipe = {"mix": mix if strategy == strategies.MIXTURE else {}, "wrong_share": project.selection_wrong_share,
                  "per_problem_cap": project.selection_per_problem_cap, "seed": run.pk,
                  "dropout_passes": dropout_passes(run)}
        pool = candidate_pool(project).values("pk")
        rows = (SolutionScore.objects.filter(checkpoint_id=run.checkpoint_id, solution__in=pool)
                .values_list("solution_id", "solution__problem_id", "score", "solution__is_correct", "uncertainty"))
        # Streamed (no queryset cache of every row beside the candidates): the selection holds one
        # slotted Candidate per pooled solution and nothing else per row (docs/prm.md, memory).
        picks = strategies.choose(
            [Candidate(*row) for row in rows.iterator(chunk_size=10_000)], strategy=strategy, size=run.size, mix=mix,
            wrong_share=recipe["wrong_share"], per_problem_cap=recipe["per_problem_cap"], seed=recipe["seed"],
        )
        ids = sorted(p.candidate.solution_id for p in picks)
        # Lock the chosen rows (the queue may be handing one out right now), then look again.
        list(Solution.objects.filter(pk__in=ids).order_by("pk").select_for_update().values_list("pk"))
        still_free = set(candidate_pool(project).filter(pk__in=ids).values_list("pk", flat=True))
        picks = [p for p in picks if p.candidate.solution_id in still_free]
        generation = None
        if picks:
            highest = Generation.objects.filter(project=project).aggregate(n=Max("number"))["n"]
            generation = Generation.objects.create(project=project, number=max(highest or 0, 0) + 1,
                                                   strategy=strategy, selection=recipe)
            Solution.objects.bulk_update(
                [Solution(pk=p.candidate.solution_id, generation=generation, selection_rank=rank,
                          verifier_score=p.candidate.score, selection_reason=strategies.reason(p))
                 for rank, p in enumerate(picks, start=1)],
                ["generation", "selection_rank", "verifier_score", "selection_reason"], batch_size=1000,
            )
        run.generation = generation
        run.selected = len(picks)
        run.state = GenerationRun.DONE
        run.finished_at = timezone.now()
        run.save(update_fields=["generation", "selected", "state", "finished_at"])
    # The queue plans by generation: its statistics must know the new one (labeling/analyze.py).
    analyze(Solution, SolutionScore)
    if run.generation is not None:
        # The champion's view of what it selected, kept beside people's ratings to come (issue #31).
        prelabels.record(run.checkpoint, Solution.objects.filter(generation=run.generation).values_list("pk", flat=True))
    return run
