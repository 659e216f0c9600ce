"""The judge run's Celery task, on the ``default`` queue (CPU workers: the judge is a remote model).

Its name is outside ``scoring.tasks.*``, which the settings route to the GPU workers;
``scoring.tasks`` imports it so that every worker registers it. The body loads the client
(``scoring.judge_job``) only in the worker, so the web process that queues it never does.
"""
from celery import shared_task

from labeling.outages import RetriedOnOutage, will_retry
from scoring.judge_runs import mark_failed


@shared_task(bind=True, name="scoring.judge_tasks.run_judge", base=RetriedOnOutage)
def run_judge(self, run_id):
    """Judge the solutions of JudgeRun ``run_id``. An outage runs it again: the labels stored so
    far are kept and skipped; a failure for good is written on the run, then raised."""
    from scoring import judge_job

    try:
        run = judge_job.run(run_id)
    except Exception as exc:
        if not will_retry(self, exc):
            mark_failed(run_id, f"{type(exc).__name__}: {exc}")
        raise
    return None if run is None else {"run": run.pk, "state": run.state, "result": run.result}
