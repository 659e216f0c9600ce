"""Progress of the loop's jobs, worked out from the rows: a run's rate and time left, a retrain's throttled steps.

The jobs' own progress (a run's states, a retrain's phases and report) is tested with the jobs,
in test_jobs.py.
"""
from datetime import timedelta

import pytest
from django.utils import timezone

from scoring.models import Checkpoint, GenerationRun
from scoring.progress import RetrainProgress, run_pace
from tests.factories import make_project


@pytest.mark.django_db
def test_rate_and_time_left():
    project = make_project(name="rate")
    start = timezone.now()
    run = GenerationRun(project=project, size=1, state=GenerationRun.SCORING, total=500, scored=150,
                        scored_at_start=50, scoring_started_at=start)

    def rate_and_left(seconds):
        how_far = run_pace(run, now=start + timedelta(seconds=seconds))
        return how_far.rate, how_far.eta_s

    assert rate_and_left(50) == (2.0, 175.0) and run_pace(run).fraction == 0.3
    assert rate_and_left(0) == (None, None)  # no time has passed
    run.scored = 50
    assert rate_and_left(50) == (None, None)  # nothing scored in this pass yet
    run.state = GenerationRun.SELECTING
    assert rate_and_left(50) == (None, None)


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


@pytest.mark.django_db
def test_the_time_left_goes_by_the_pace_of_the_steps_not_the_model_loading_before_them():
    checkpoint = Checkpoint.objects.create(project=make_project(name="pace"))
    now = [0.0]
    progress = RetrainProgress(checkpoint.pk, every_s=0, clock=lambda: now[0])
    progress.phase("training")
    now[0] = 10.0  # loading the base model and encoding the examples
    progress.step(1, 10, loss=0.7)
    checkpoint.refresh_from_db()
    assert checkpoint.progress["eta_s"] == pytest.approx(90.0)  # one step so far: only the phase's pace is known
    now[0] = 12.0  # four more steps, half a second each
    progress.step(5, 10, loss=0.6)
    checkpoint.refresh_from_db()
    assert checkpoint.progress["eta_s"] == pytest.approx(2.5) and checkpoint.progress["step"] == 5
