"""A generation run's pool in shards (scoring/shards.py), on the real database, without Celery.

Two workers are two claimers here: the test's own database session, and a second PostgreSQL
session (psycopg) that holds a shard's advisory lock the way a live worker does, and lets go of
it the way a dead one does, by its connection closing. The real workers, two of them and one
killed, are in tests/e2e/test_shards.py.
"""
import time

import psycopg
import pytest
from django.db import connection

from labeling.analyze import analyze
from labeling.data import open_text
from labeling.imports import run_import
from labeling.locks import SHARD_LOCK
from labeling.models import Generation, Problem, Solution, Step
from scoring import jobs, runs, shards, worker
from scoring.champions import ensure_champion
from scoring.models import Checkpoint, GenerationRun, ScoringShard, SolutionScore
from scoring.progress import run_pace, run_shards
from tests.factories import make_project

PROBLEMS = 12  # x 4 model solutions each: a pool of 48


@pytest.fixture
def project(db, tiny_base, tmp_path, data_dir, settings):
    settings.STEPMARK_CHECKPOINT_DIR = tmp_path / "checkpoints"
    settings.STEPMARK_SHARD_SIZE = 10
    path = tmp_path / "gsm8k-slice.jsonl"
    with open_text(data_dir / "gsm8k" / "example_model_solutions.jsonl.gz") as source:
        path.write_text("".join(line for _, line in zip(range(PROBLEMS), source)), encoding="utf-8")
    project = make_project(name="shards", generation_size=8, selection_wrong_share=0.75, base_model_path=str(tiny_base))
    run_import("gsm8k-examples", path, project)
    return project


def scoring_run(project):
    run = runs.start_generation(project)
    GenerationRun.objects.filter(pk=run.pk).update(state=GenerationRun.SCORING, checkpoint=ensure_champion(project))
    run.refresh_from_db()
    return run


def other_session():
    """A second database session on the test database (another worker's)."""
    db = connection.settings_dict
    return psycopg.connect(host=db["HOST"] or "127.0.0.1", port=db["PORT"] or 5432, user=db["USER"],
                           password=db["PASSWORD"] or None, dbname=db["NAME"], autocommit=True)


def die(session):
    """Close ``session`` and wait until its server process holds no lock any more: the server ends a
    backend after the client leaves, not at once, and a loaded machine shows the gap."""
    pid = session.info.backend_pid
    session.close()
    for _ in range(200):
        with connection.cursor() as cursor:
            # pg_locks is read live (pg_stat_activity is a snapshot kept for the whole transaction)
            cursor.execute("SELECT count(*) FROM pg_locks WHERE pid = %s", [pid])
            if cursor.fetchone()[0] == 0:
                return
        time.sleep(0.05)
    raise AssertionError(f"the server process {pid} still holds locks 10 s after its client left")


def score_rows_read():
    """Rows of the scores table read so far in this transaction, by sequential scans and through each
    of its indexes (PostgreSQL's counters for the current transaction, up to date after each statement)."""
    table = SolutionScore._meta.db_table
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_stat_get_xact_tuples_returned(%s::regclass) + (SELECT coalesce(sum("
                       "pg_stat_get_xact_tuples_returned(indexrelid)), 0) FROM pg_index WHERE indrelid = %s::regclass)",
                       [table, table])
        return cursor.fetchone()[0]


def test_the_shards_cover_the_pool_exactly_once(project):
    run = scoring_run(project)
    pool = list(runs.candidate_pool(project).order_by("pk").values_list("pk", flat=True))
    assert shards.plan(run) == 5 and shards.plan(run) == 0  # planned once
    cut = list(ScoringShard.objects.filter(run=run).order_by("index"))
    assert [s.index for s in cut] == [0, 1, 2, 3, 4] and [s.size for s in cut] == [10, 10, 10, 10, 8]
    covered = [pk for s in cut for pk in pool if s.first_id <= pk <= s.last_id]
    assert covered == pool  # each pool solution in one shard, in order
    assert all(a.last_id < b.first_id for a, b in zip(cut, cut[1:]))
    run.refresh_from_db()
    assert run.total == 48 and run.scored == 0
    # With a limit, only the first pool solutions are cut.
    limited = GenerationRun.objects.create(project=project, checkpoint=run.checkpoint, size=2, state=GenerationRun.SCORING)
    assert shards.plan(limited, pool_limit=15) == 2
    assert sum(ScoringShard.objects.filter(run=limited).values_list("size", flat=True)) == 15


def test_two_claimers_take_different_shards_and_score_the_pool_once(project):
    run = scoring_run(project)
    shards.plan(run)
    prm = worker.get_prm(run.checkpoint)
    first = shards.claim(run, name="worker-a")
    assert first.index == 0 and first.state == ScoringShard.CLAIMED and first.claimed_by == "worker-a"
    with other_session() as other:  # worker b holds shard 1 as a live worker does
        other.execute("SELECT pg_advisory_lock(%s, %s)", [SHARD_LOCK, ScoringShard.objects.get(run=run, index=1).pk])
        ScoringShard.objects.filter(run=run, index=1).update(state=ScoringShard.CLAIMED, claimed_by="worker-b")
        # a's next claim skips its own shard 0 and b's live shard 1
        second = shards.claim(run, name="worker-a")
        assert second.index == 2
        for shard in (first, second):
            shards.release(shard.pk)
        ScoringShard.objects.filter(pk__in=[first.pk, second.pk]).update(state=ScoringShard.PENDING)
        assert [s.index for s in (shards.claim(run), shards.claim(run), shards.claim(run))] == [0, 2, 3]
        for shard in ScoringShard.objects.filter(run=run, index__in=[0, 2, 3]):
            shards.release(shard.pk)
        die(other)  # b leaves: shard 1's lock goes once its server process has ended
    assert shards.score_claimed(run, prm, batch_size=4, name="worker-a")
    assert shards.all_done(run)
    scores = SolutionScore.objects.filter(checkpoint=run.checkpoint)
    assert scores.count() == scores.values("solution").distinct().count() == 48


def test_a_rerun_of_a_shard_scores_only_what_is_missing(project):
    run = scoring_run(project)
    shards.plan(run)
    prm = worker.get_prm(run.checkpoint)
    assert shards.score_claimed(run, prm, batch_size=3)
    shard = ScoringShard.objects.get(run=run, index=2)
    in_shard = SolutionScore.objects.filter(checkpoint=run.checkpoint, solution_id__gte=shard.first_id,
                                            solution_id__lte=shard.last_id)
    kept = dict(in_shard.values_list("solution_id", "pk"))
    lost = sorted(kept)[3:7]
    in_shard.filter(solution_id__in=lost).delete()  # as if the batches after the third solution were never written
    ScoringShard.objects.filter(pk=shard.pk).update(state=ScoringShard.CLAIMED, scored=3)
    newest = SolutionScore.objects.order_by("-pk").values_list("pk", flat=True).first()
    again = shards.claim(run)
    assert again.pk == shard.pk and again.claims == 2
    assert shards.score_shard(run, again, prm, batch_size=2)
    shards.release(again.pk)
    rewritten = SolutionScore.objects.filter(pk__gt=newest)
    assert sorted(rewritten.values_list("solution_id", flat=True)) == lost  # only the missing four
    assert {pk: sid for pk, sid in in_shard.values_list("solution_id", "pk") if pk not in lost} == \
           {pk: sid for pk, sid in kept.items() if pk not in lost}
    again.refresh_from_db()
    assert again.state == ScoringShard.DONE and again.scored == again.size == 10


def test_the_shard_of_a_dead_worker_is_taken_by_the_next_claim(project):
    run = scoring_run(project)
    shards.plan(run)
    prm = worker.get_prm(run.checkpoint)
    shard = ScoringShard.objects.get(run=run, index=0)
    other = other_session()  # worker b claims shard 0 and scores part of it
    other.execute("SELECT pg_advisory_lock(%s, %s)", [SHARD_LOCK, shard.pk])
    ScoringShard.objects.filter(pk=shard.pk).update(state=ScoringShard.CLAIMED, claimed_by="worker-b", claims=1)
    while_alive = shards.claim(run, name="worker-a")
    assert while_alive.index == 1  # b is alive: its shard is left to it
    shards.release(while_alive.pk)
    ScoringShard.objects.filter(pk=while_alive.pk).update(state=ScoringShard.PENDING)
    die(other)  # b dies: its session, and with it the lock, is gone
    taken = shards.claim(run, name="worker-a")
    assert taken.pk == shard.pk and taken.claims == 2 and taken.claimed_by == "worker-a"
    shards.release(taken.pk)
    assert shards.score_claimed(run, prm, batch_size=5, name="worker-a") and shards.all_done(run)
    assert SolutionScore.objects.filter(checkpoint=run.checkpoint).count() == 48


def test_a_stale_claim_is_taken_where_there_are_no_advisory_locks(project, monkeypatch):
    import datetime

    from django.utils import timezone

    run = scoring_run(project)
    shards.plan(run)
    shard = ScoringShard.objects.get(run=run, index=0)
    recent = timezone.now()
    ScoringShard.objects.filter(pk=shard.pk).update(state=ScoringShard.CLAIMED, claims=1, heartbeat_at=recent)
    monkeypatch.setattr(shards, "advisory_locks", lambda: False)  # claim's rule off PostgreSQL (SQLite, the demo)
    assert shards.claim(run, now=recent + datetime.timedelta(seconds=60)).index == 1
    stale = recent + datetime.timedelta(seconds=shards.STALE_S + 1)
    taken = shards.claim(run, now=stale)
    assert taken.pk == shard.pk and taken.claims == 2


def test_progress_is_summed_over_the_shards(project):
    run = scoring_run(project)
    shards.plan(run)
    prm = worker.get_prm(run.checkpoint)
    for _ in range(2):
        shard = shards.claim(run)
        shards.score_shard(run, shard, prm, batch_size=4)
        shards.release(shard.pk)
    half = shards.claim(run)  # a third, claimed and not scored yet
    run.refresh_from_db()
    summed = run_shards(run)
    assert summed == {"shards": 5, "done": 2, "claimed": 1, "scored": 20, "total": 48}
    assert run.scored == 20 and run.total == 48
    pace = run_pace(run)
    assert pace.fraction == pytest.approx(20 / 48) and pace.rate is not None and pace.rate > 0
    shards.release(half.pk)


def test_selection_runs_once_whichever_worker_is_last(project):
    run = runs.start_generation(project)
    fanned = []
    done = jobs.run_generation(run.pk, batch_size=7, fan_out=lambda r, n: fanned.append(n))
    assert fanned == [5]  # once, when planned
    assert done.state == GenerationRun.DONE and done.selected == 8 and done.scored == done.total == 48
    # The helpers' tasks arrive after the coordinator finished every shard: nothing happens twice.
    for _ in range(3):
        assert jobs.score_shards(run.pk).generation == done.generation
    assert jobs.run_generation(run.pk).generation == done.generation
    assert Generation.objects.filter(project=project).count() == 1
    assert Solution.objects.filter(project=project, generation__isnull=False).count() == 8
    assert SolutionScore.objects.count() == 48
    assert set(ScoringShard.objects.filter(run=run).values_list("claims", flat=True)) == {1}


def test_a_worker_that_is_not_last_leaves_the_selection_to_the_last(project):
    run = scoring_run(project)
    shards.plan(run)
    other = other_session()  # another worker still holds shard 4
    last = ScoringShard.objects.get(run=run, index=4)
    other.execute("SELECT pg_advisory_lock(%s, %s)", [SHARD_LOCK, last.pk])
    ScoringShard.objects.filter(pk=last.pk).update(state=ScoringShard.CLAIMED, claims=1)
    mine = jobs.score_shards(run.pk, batch_size=10)
    assert mine.state == GenerationRun.SCORING and mine.generation is None and mine.scored == 40
    # It died (its lock goes with its server process, which may outlive the client a moment: a
    # loaded machine showed it); the redelivered task (here, any worker's) takes the shard and selects.
    die(other)
    done = jobs.score_shards(run.pk, batch_size=10)
    assert done.state == GenerationRun.DONE and done.selected == 8 and done.scored == 48
    assert Generation.objects.filter(project=project).count() == 1


def test_an_empty_pool_selects_nothing_and_is_done(project):
    Solution.objects.filter(project=project).update(is_gold=True)
    done = jobs.run_generation(runs.start_generation(project).pk)
    assert done.state == GenerationRun.DONE and done.total == 0 and done.generation is None


def test_a_shard_reads_its_own_scores_whatever_the_checkpoint_has_scored(db, tiny_base, tmp_path, settings):
    """The checkpoint being scored is one the planner's statistics have not seen: the last ANALYZE (at
    the previous selection) found only an older checkpoint's scores. Claiming a shard and scoring it
    then read that shard's scores, not all the checkpoint's. The pool joined with the scores in one
    query was planned as a rescan of every score of the checkpoint for each solution of the shard,
    and a pool of 100,000 stalled (docs/prm.md, "Memory and workers")."""
    settings.STEPMARK_CHECKPOINT_DIR = tmp_path / "checkpoints"
    size, shard_size, missing = 3000, 100, 5
    project = make_project(name="a large pool", base_model_path=str(tiny_base))
    problems = Problem.objects.bulk_create(Problem(project=project, problem=f"Find x{n}.", content_hash=f"p{n}")
                                           for n in range(size // 4))
    pool = Solution.objects.bulk_create(Solution(project=project, problem=problems[n // 4], num_steps=1,
                                                 content_hash=f"s{n}") for n in range(size))
    Step.objects.bulk_create(Step(solution=solution, position=0, alternative=0, text=f"x{solution.pk} = 1.")
                             for solution in pool)
    older = Checkpoint.objects.create(project=project, path=str(tmp_path / "older"), status=Checkpoint.REJECTED)
    SolutionScore.objects.bulk_create(SolutionScore(solution=solution, checkpoint=older, score=0.5, step_scores=[0.5])
                                      for solution in pool)
    analyze(Problem, Solution, Step, SolutionScore)  # as the previous selection (and the import) ended
    run = scoring_run(project)
    # The new checkpoint has scored all but the last few, as a worker does before the last claim.
    SolutionScore.objects.bulk_create(SolutionScore(solution=solution, checkpoint=run.checkpoint, score=0.5,
                                                    step_scores=[0.5]) for solution in pool[:-missing])
    assert shards.plan(run, shard_size=shard_size) == size // shard_size
    before = score_rows_read()
    shard = shards.claim(run)
    claim_read = score_rows_read() - before
    assert shard.index == size // shard_size - 1 and shard.scored == shard_size - missing
    prm = worker.get_prm(run.checkpoint)
    before = score_rows_read()
    assert shards.score_shard(run, shard, prm, batch_size=10)
    scoring_read = score_rows_read() - before
    shards.release(shard.pk)
    assert SolutionScore.objects.filter(checkpoint=run.checkpoint).count() == size and shards.all_done(run)
    # The shard's scores, each read once or twice. The join read every score of the checkpoint for the claim
    # (2,997 here; at 100K in the pool, all of them again for each solution of the shard).
    assert claim_read <= 2 * shard_size, claim_read
    assert scoring_read <= 2 * shard_size, scoring_read
