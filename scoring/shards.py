"""A generation run's pool in shards, which every GPU worker claims from the database and scores in parallel.

- **Planning** (``plan``, once per run, by the worker that starts it) streams the pool's ids in
  order and cuts them into shards of ``STEPMARK_SHARD_SIZE`` solutions: one ``ScoringShard`` row
  each, holding an id range, its size and how many of it the checkpoint already scored. Memory
  is one chunk of ids, whatever the pool's size.
- **Claiming** (``claim``): a worker takes the first shard that is not done and that nobody
  alive holds, in a short transaction (``select_for_update(skip_locked=True)``: two workers
  never take the same row), and holds a PostgreSQL advisory lock on it while it scores. The lock
  belongs to the worker's database session, so when a worker dies its shard is free at once and
  the next worker that asks takes it: a dead worker costs one shard. Where there are no
  advisory locks (SQLite, the one-worker demo) a claimed shard whose heartbeat is older than
  ``STALE_S`` is taken instead.
- **Scoring** (``score_shard``) reads the shard's pool solutions ``batch_size`` at a time by id
  (keyset pages: one batch in memory), drops those the checkpoint has scored, scores the rest
  and writes their ``SolutionScore`` rows together with the shard's and the run's counts, in one
  transaction. A rerun of a shard therefore scores only what is missing.
- **What the checkpoint has scored** (``scored_among``) is read for a shard's or a batch's ids
  only, from the scores alone, never joined with the pool: see there why. A run whose strategy
  reads the uncertainty (``scoring.prm.strategies.needs_uncertainty``) counts a score as missing
  until it holds ``DROPOUT_PASSES`` MC-dropout passes, and rewrites it with them.
- **The last shard in** (``all_done``) lets the run move on to selection, which happens once
  (``scoring.jobs.select`` locks the run row and checks its state).

No torch here (the scorer is imported inside ``score_shard``).
"""
import datetime
import os
import socket

from django.conf import settings
from django.db import connection, transaction
from django.db.models import F
from django.utils import timezone

from labeling.locks import SHARD_LOCK
from labeling.models import Solution, Step
from scoring.models import GenerationRun, ScoringShard, SolutionScore
from scoring.prm.strategies import DROPOUT_PASSES, needs_uncertainty
from scoring.runs import candidate_pool, strategy_of

# Where there are no advisory locks: a claimed shard with no batch written for this long is taken again.
STALE_S = 600


def worker_name():
    """This process, as a shard's ``claimed_by`` shows it."""
    return f"{socket.gethostname()}:{os.getpid()}"


def dropout_passes(run):
    """MC-dropout passes the run's strategy needs per solution (0: it reads no uncertainty)."""
    return DROPOUT_PASSES if needs_uncertainty(*strategy_of(run)) else 0


def scored_among(checkpoint_id, passes, ids):
    """The ids among ``ids`` (pool ids in ascending order: a shard's or a batch's) that checkpoint
    ``checkpoint_id`` has scored, with ``passes`` MC-dropout passes at least.

    One query on the scores alone, over the ids' range, which the ``(checkpoint, solution)`` index
    answers: the rows read are the range's, however many the checkpoint has scored elsewhere. Not
    an ``EXISTS`` joined with the pool, as it was: the planner's statistics hardly ever know the
    checkpoint being scored (the last ANALYZE, at the previous selection, saw none of its scores,
    and autovacuum may be off or far behind), so it expected one score and planned the join as a
    rescan of all the checkpoint's scores for each solution of a shard, quadratic in the pool: a
    claim with 20,000 solutions scored took 14.5 s, and a 100K pool stalled (docs/prm.md). The
    table has no index on the checkpoint alone, which the planner took for the same reason
    (migration 0008): with it, this query too read every score of the checkpoint.
    """
    if not ids:
        return set()
    scores = SolutionScore.objects.filter(checkpoint_id=checkpoint_id, solution_id__gte=ids[0], solution_id__lte=ids[-1])
    if passes:
        scores = scores.filter(dropout_passes__gte=passes)
    wanted = set(ids)
    return {pk for pk in scores.values_list("solution_id", flat=True) if pk in wanted}


def plan(run, *, pool_limit=None, shard_size=None):
    """Cut the run's pool (its first ``pool_limit`` solutions by id, if given) into shards, unless
    the run has them already. Returns how many shards it made (0: planned before).

    Also writes the run's ``total``, ``scored`` and the start of its scoring pass (the rate counts
    only what the pass scores, ``scoring.progress``).
    """
    shard_size = shard_size or settings.STEPMARK_SHARD_SIZE
    with transaction.atomic():
        GenerationRun.objects.select_for_update().filter(pk=run.pk).first()  # one planner at a time
        if ScoringShard.objects.filter(run_id=run.pk).exists():
            return 0
        rows = candidate_pool(run.project).order_by("pk").values_list("pk", flat=True)
        if pool_limit is not None:
            rows = rows[:pool_limit]
        passes, shards, ids = dropout_passes(run), [], []

        def cut():
            shards.append(ScoringShard(run_id=run.pk, index=len(shards), first_id=ids[0], last_id=ids[-1], size=len(ids),
                                       scored=len(scored_among(run.checkpoint_id, passes, ids))))

        for pk in rows.iterator(chunk_size=5000):  # one shard's ids in memory
            ids.append(pk)
            if len(ids) == shard_size:
                cut()
                ids = []
        if ids:
            cut()
        for shard in shards:
            if shard.scored == shard.size:
                shard.state, shard.finished_at = ScoringShard.DONE, timezone.now()
        ScoringShard.objects.bulk_create(shards, batch_size=1000)
        scored = sum(s.scored for s in shards)
        GenerationRun.objects.filter(pk=run.pk).update(
            total=sum(s.size for s in shards), scored=scored, scored_at_start=scored, scoring_started_at=timezone.now()
        )
    return len(shards)


# Shards this process holds: a session's advisory locks are re-entrant, so its own must be skipped by name.
_held = set()


def advisory_locks():
    """Whether the database has advisory locks (PostgreSQL); elsewhere a claim goes by the heartbeat."""
    return connection.vendor == "postgresql"


def _try_lock(shard_id):
    if shard_id in _held:
        return False
    if advisory_locks():
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_try_advisory_lock(%s, %s)", [SHARD_LOCK, shard_id])
            if not cursor.fetchone()[0]:
                return False
    _held.add(shard_id)
    return True


def release(shard_id):
    """Let go of the advisory lock on a shard (``claim`` took it)."""
    if shard_id not in _held:
        return
    _held.discard(shard_id)
    if advisory_locks():
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_unlock(%s, %s)", [SHARD_LOCK, shard_id])


def claim(run, *, name=None, now=None):
    """The next shard of ``run`` this worker may score, now marked claimed by it (None: none is left).

    A shard is free when it is pending, or claimed by a worker that is gone: on PostgreSQL its
    advisory lock can be taken (the lock went with the dead worker's session), elsewhere its
    heartbeat is older than ``STALE_S``. The caller scores it and then calls ``release``.
    """
    now = now or timezone.now()
    stale_before = now - datetime.timedelta(seconds=STALE_S)
    passed = []  # claimed by a live worker
    while True:
        with transaction.atomic():
            shard = (ScoringShard.objects.select_for_update(skip_locked=True)
                     .filter(run_id=run.pk).exclude(state=ScoringShard.DONE).exclude(pk__in=passed)
                     .order_by("index").first())
            if shard is None:
                return None
            if not advisory_locks() and shard.state == ScoringShard.CLAIMED \
                    and shard.heartbeat_at is not None and shard.heartbeat_at > stale_before:
                passed.append(shard.pk)
                continue
            if not _try_lock(shard.pk):
                passed.append(shard.pk)
                continue
            try:
                # Counted again: what the checkpoint has scored of the shard is the truth, whoever wrote it.
                ids = list(candidate_pool(run.project).filter(pk__gte=shard.first_id, pk__lte=shard.last_id)
                           .order_by("pk").values_list("pk", flat=True))
                scored = len(scored_among(run.checkpoint_id, dropout_passes(run), ids))
                ScoringShard.objects.filter(pk=shard.pk).update(
                    state=ScoringShard.CLAIMED, claimed_by=name or worker_name(), claims=F("claims") + 1,
                    heartbeat_at=now, scored=scored)
                if scored != shard.scored:
                    GenerationRun.objects.filter(pk=run.pk).update(scored=F("scored") + (scored - shard.scored))
            except BaseException:
                release(shard.pk)
                raise
        shard.refresh_from_db()
        return shard


def solution_texts(solution_ids):
    """``{solution id: (problem text, [step texts])}``: each solution's own steps, in order."""
    texts = {pk: (problem, []) for pk, problem in
             Solution.objects.filter(pk__in=solution_ids).values_list("pk", "problem__problem")}
    steps = (Step.objects.filter(solution_id__in=solution_ids, alternative=0, author__isnull=True)
             .order_by("solution_id", "position").values_list("solution_id", "text"))
    for pk, text in steps:
        texts[pk][1].append(text)
    return texts


def score_shard(run, shard, prm, *, batch_size=None):
    """Score what the run's checkpoint has not scored in ``shard``, one keyset page of ``batch_size`` at a time.

    Each batch's scores, the shard's count and heartbeat, and the run's count are written in one
    transaction. Returns False when the run was cancelled (checked between batches), else True
    with the shard marked done. Holds no more than one batch of solutions in memory.
    """
    from scoring.prm.scorer import score_solutions

    batch_size = batch_size or settings.STEPMARK_SCORING_BATCH
    aggregation = getattr(prm, "meta", {}).get("aggregation") or "prod"
    checkpoint_id = run.checkpoint_id
    passes = dropout_passes(run)
    pool = candidate_pool(run.project).filter(pk__lte=shard.last_id).order_by("pk").values_list("pk", flat=True)
    after = shard.first_id - 1
    while True:
        if GenerationRun.objects.filter(pk=run.pk, state=GenerationRun.CANCELLED).exists():
            return False
        page = list(pool.filter(pk__gt=after)[:batch_size])
        if not page:
            break
        after = page[-1]
        known = scored_among(checkpoint_id, passes, page)
        batch = [pk for pk in page if pk not in known]
        if not batch:  # a rerun: this page was scored before
            continue
        texts = solution_texts(batch)
        results = score_solutions(prm, [texts[pk] for pk in batch], aggregation=aggregation, dropout_passes=passes)
        rows = [SolutionScore(solution_id=pk, checkpoint_id=checkpoint_id, score=r.score, step_scores=r.step_scores,
                              step_uncertainty=r.step_uncertainty, uncertainty=r.uncertainty, dropout_passes=passes)
                for pk, r in zip(batch, results)]
        with transaction.atomic():
            if passes:  # a score kept from a run that measured no uncertainty gets it now
                SolutionScore.objects.bulk_create(
                    rows, update_conflicts=True, unique_fields=["checkpoint", "solution"],
                    update_fields=["score", "step_scores", "step_uncertainty", "uncertainty", "dropout_passes"])
            else:  # a stale claim taken while its worker lives on (SQLite): first write wins
                SolutionScore.objects.bulk_create(rows, ignore_conflicts=True)
            ScoringShard.objects.filter(pk=shard.pk).update(scored=F("scored") + len(batch), heartbeat_at=timezone.now())
            GenerationRun.objects.filter(pk=run.pk).update(scored=F("scored") + len(batch))
        del texts, results
    ScoringShard.objects.filter(pk=shard.pk).update(state=ScoringShard.DONE, finished_at=timezone.now())
    return True


def score_claimed(run, prm, *, batch_size=None, name=None):
    """Claim and score shards of ``run`` until none is left to this worker. False: the run was cancelled."""
    while True:
        shard = claim(run, name=name)
        if shard is None:
            return not GenerationRun.objects.filter(pk=run.pk, state=GenerationRun.CANCELLED).exists()
        try:
            if not score_shard(run, shard, prm, batch_size=batch_size):
                return False
        finally:
            release(shard.pk)


def all_done(run):
    """Whether every shard of the (planned) run is scored: an empty pool has none, and is done."""
    return not ScoringShard.objects.filter(run_id=run.pk).exclude(state=ScoringShard.DONE).exists()
