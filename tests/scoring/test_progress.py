"""Progress of the loop's jobs: a run's states and rate, a retrain's phases, and the report it stores.

The jobs run on the real database with the tiny random BERT of tests/scoring/conftest.py (the
fixtures of test_jobs.py); spies record what the worker wrote at each point, nothing is mocked.
"""
from datetime import timedelta

import pytest
from django.utils import timezone

from scoring import jobs
from scoring.models import Checkpoint, GenerationRun
from scoring.progress import RetrainProgress, scoring_rate
from scoring.retrain import retrain_if_due
from tests.factories import make_project
from tests.scoring.test_jobs import checkpoint_dir, gsm8k_slice, project, rate_everything, run_one  # noqa: F401


def test_a_run_is_scoring_while_it_scores_then_selecting(project, monkeypatch):
    seen = []
    score_pool, select = jobs.score_pool, jobs.select

    def spy_score(run, prm, **kwargs):
        seen.append(("score", GenerationRun.objects.get(pk=run.pk).state))
        return score_pool(run, prm, **kwargs)

    def spy_select(run):
        row = GenerationRun.objects.get(pk=run.pk)
        seen.append(("select", row.state, row.scored_at_start, row.scoring_started_at is not None, row.scored, row.total))
        return select(run)

    monkeypatch.setattr(jobs, "score_pool", spy_score)
    monkeypatch.setattr(jobs, "select", spy_select)
    run = run_one(project, batch_size=16)
    assert seen == [("score", "scoring"), ("select", "selecting", 0, True, run.total, run.total)]
    assert run.state == "done" and run.total == 48


def test_a_resumed_pass_counts_its_rate_from_what_it_scores_itself(project):
    run = run_one(project, pool_limit=20)  # 20 scored by this checkpoint
    again = GenerationRun.objects.create(project=project, checkpoint=run.checkpoint, size=4)
    jobs.run_generation(again.pk, pool_limit=30)
    again.refresh_from_db()
    # The pool shrank by what the first run selected; what it scored before is not this pass's work.
    assert again.scored_at_start > 0 and again.scored == again.total


@pytest.mark.django_db
def test_rate_and_time_left():
    project = make_project(name="rate")
    start = timezone.now()
    run = GenerationRun(project=project, size=1, state=GenerationRun.SCORING, total=500, scored=150,
                        scored_at_start=50, scoring_started_at=start)
    assert scoring_rate(run, now=start + timedelta(seconds=50)) == (2.0, 175.0)
    assert scoring_rate(run, now=start) == (None, None)  # no time has passed
    run.scored = 50
    assert scoring_rate(run, now=start + timedelta(seconds=50)) == (None, None)  # nothing scored in this pass yet
    run.state = GenerationRun.SELECTING
    assert scoring_rate(run, now=start + timedelta(seconds=50)) == (None, None)


@pytest.mark.django_db
def test_training_steps_are_written_at_most_every_interval_and_on_the_last():
    project = make_project(name="throttle")
    checkpoint = Checkpoint.objects.create(project=project)
    now = [0.0]
    progress = RetrainProgress(checkpoint.pk, every_s=2.0, clock=lambda: now[0])
    progress.phase("training", step=0, total_steps=None)
    written = []
    for step in range(1, 11):
        now[0] = step * 0.5  # two steps a second
        if progress.step(step, 10, loss=1.0 / step):
            written.append(step)
    assert written == [4, 8, 10]
    checkpoint.refresh_from_db()
    assert checkpoint.progress["phase"] == "training" and checkpoint.progress["step"] == 10
    assert checkpoint.progress["loss"] == pytest.approx(0.1) and checkpoint.progress["eta_s"] == 0
    now[0] = 4.0
    progress.phase("training")
    now[0] = 6.0
    assert progress.step(4, 10, loss=0.5)  # 2 s after the phase began, 4 of 10 steps: 3 s left
    checkpoint.refresh_from_db()
    assert checkpoint.progress["eta_s"] == pytest.approx(3.0)


def test_a_retrain_writes_its_phases_and_keeps_its_report_beside_the_champions(project, monkeypatch):
    first = run_one(project)
    rate_everything(project)
    writes = []
    write = RetrainProgress._write

    def spy(self):
        write(self)
        writes.append(dict(self.state))

    monkeypatch.setattr(RetrainProgress, "_write", spy)
    checkpoint = retrain_if_due(project.pk, force=True)
    phases = [w["phase"] for w in writes]
    assert phases[0] == "exporting" and phases[-2:] == ["evaluating", "saving"]
    training = [w for w in writes if w["phase"] == "training"]
    last = training[-1]
    assert last["step"] == last["total_steps"] == checkpoint.metrics["train"]["steps"] > 0
    assert isinstance(last["loss"], float) and last["eta_s"] == 0
    assert checkpoint.progress["phase"] == "saving"

    report = checkpoint.report
    assert report["champion_id"] == first.checkpoint_id and report["metric"] == "log_loss"
    assert report["heldout_problems"] == checkpoint.metrics["heldout_problems"] > 0
    for side, figures in (("challenger", "heldout"), ("champion", "champion_heldout")):
        steps = report[side]["steps"]
        assert steps["auroc"] == checkpoint.metrics[figures]["step_auroc"]
        assert steps["roc"][0] == [0.0, 0.0] and steps["roc"][-1] == [1.0, 1.0]
        assert sum(b["count"] for b in steps["calibration"]["bins"]) == steps["steps"] == checkpoint.metrics[figures]["steps"]
        best = report[side]["best-of-n"]  # the held-out problems' four graded GSM8K solutions each
        assert best["ns"] == [1, 2, 4] and best["largest_pool"] == 4
        assert best["candidates"] == 4 * best["problems"][0]
    assert report["challenger"]["best-of-n"]["solved"]["majority_vote"] == report["champion"]["best-of-n"]["solved"]["majority_vote"]
