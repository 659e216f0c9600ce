"""One generation scored by two real Celery workers, each claiming shards of the pool; and one of them
killed (SIGKILL) while it holds a shard, which the other then scores.
"""
import pytest

from labeling.imports import run_import
from labeling.models import Generation, Solution
from scoring import runs, tasks
from scoring.models import GenerationRun, ScoringShard, SolutionScore
from tests.e2e.conftest import gsm8k_slice, wait_for
from tests.factories import make_project
from tests.scoring.test_shards import other_session

pytestmark = [pytest.mark.e2e, pytest.mark.slow]


def _pool_project(name, tiny_base, data_dir, tmp_path, problems):
    project = make_project(name=name, generation_size=20, base_model_path=str(tiny_base))
    run_import("gsm8k-examples", gsm8k_slice(data_dir, tmp_path / "pool.jsonl", problems), project)
    return project


def _scored_once(run, pool):
    scores = SolutionScore.objects.filter(checkpoint=run.checkpoint)
    return scores.count() == scores.values("solution").distinct().count() == pool


def test_two_workers_score_one_generation_in_shards(worker_factory, tiny_base, data_dir, tmp_path):
    project = _pool_project("two workers", tiny_base, data_dir, tmp_path, 100)
    pool = runs.candidate_pool(project).count()
    workers = [worker_factory(STEPMARK_SHARD_SIZE=25, STEPMARK_SCORING_BATCH=5).start() for _ in range(2)]
    run = runs.start_generation(project)
    # No score can be written until both workers hold a shard: which of them is quicker to load the
    # model and score does not decide whether the second takes part.
    with other_session() as gate:
        gate.execute("BEGIN")
        gate.execute("LOCK TABLE scoring_solutionscore IN EXCLUSIVE MODE")  # reads pass, writes wait
        tasks.run_generation.delay(run.pk)
        holders = lambda: set(ScoringShard.objects.filter(run_id=run.pk, state="claimed")  # noqa: E731
                              .values_list("claimed_by", flat=True))
        wait_for(lambda: len(holders()) == 2, timeout=300, every=0.1, message="both workers holding a shard")
        gate.execute("COMMIT")
    wait_for(lambda: GenerationRun.objects.filter(pk=run.pk, state="done").exists(), timeout=300, every=0.3,
             message="the run")
    run.refresh_from_db()
    assert run.scored == run.total == pool and run.selected == 20 and run.error == ""
    assert _scored_once(run, pool)
    cut = ScoringShard.objects.filter(run=run)
    assert cut.count() == pool // 25 and set(cut.values_list("state", flat=True)) == {"done"}
    assert sum(cut.values_list("scored", flat=True)) == pool and set(cut.values_list("claims", flat=True)) == {1}
    pids = {name.rsplit(":", 1)[1] for name in cut.values_list("claimed_by", flat=True)}
    assert pids == {str(w.process.pid) for w in workers}  # both workers scored shards
    assert Generation.objects.filter(project=project).count() == 1
    assert Solution.objects.filter(project=project, generation__isnull=False).count() == 20


def test_a_worker_killed_holding_a_shard_costs_that_shard_and_the_other_finishes(worker_factory, tiny_base,
                                                                                 data_dir, tmp_path):
    project = _pool_project("killed worker", tiny_base, data_dir, tmp_path, 100)
    pool = runs.candidate_pool(project).count()
    doomed = worker_factory(STEPMARK_SHARD_SIZE=100, STEPMARK_SCORING_BATCH=2).start()
    run = runs.start_generation(project)
    tasks.run_generation.delay(run.pk)
    mark = f":{doomed.process.pid}"

    def midway():  # the doomed worker is inside a shard, part of it written
        return ScoringShard.objects.filter(run_id=run.pk, state="claimed", claimed_by__endswith=mark,
                                           scored__gt=0).first()

    held = wait_for(midway, timeout=300, every=0.02, message="a shard under way")
    doomed.kill()
    held.refresh_from_db()
    assert held.state == "claimed" and 0 < held.scored < held.size
    survivor = worker_factory(STEPMARK_SHARD_SIZE=100, STEPMARK_SCORING_BATCH=50).start()
    wait_for(lambda: GenerationRun.objects.filter(pk=run.pk, state="done").exists(), timeout=300, every=0.3,
             message="the run, finished by the survivor")
    run.refresh_from_db()
    assert run.scored == run.total == pool and run.selected == 20
    assert _scored_once(run, pool)
    held.refresh_from_db()
    assert held.state == "done" and held.claims == 2 and held.claimed_by.endswith(f":{survivor.process.pid}")
    assert held.scored == held.size
    # Only the dead worker's shard was claimed twice.
    assert list(ScoringShard.objects.filter(run=run, claims__gt=1).values_list("pk", flat=True)) == [held.pk]
    assert Generation.objects.filter(project=project).count() == 1
