"""The demo's first jobs: what the researcher page shows a newcomer within minutes of ``make demo``.

``annotator/demo.py`` calls ``start_demo_jobs`` after ``manage.py load_demo``; the jobs run on the
demo's own Celery worker. This lives in the project package, not in ``labeling``, because it
queues the model side's tasks (``scoring.tasks``), which the human side never imports
(pyproject.toml's import-linter contracts).
"""
import time

from labeling.management.commands.load_demo import GSM8K_PROJECT, MATH_PROJECT
from labeling.models import Project

# A retrain of six small optimizer steps on the MATH passes (enough to beat the untrained
# champion), and a generation of 100 picked by the project's first (untrained) champion from
# the first 400 GSM8K candidates (100 problems, 253 wrong answers, ample for the generation's
# wrong-answer slots): scoring the whole pool took minutes on two cores, and the research pages
# should fill within one (docs/performance.md#the-demos-first-jobs-benchdemo_startpy).
DEMO_TRAIN_SETTINGS = {"max_steps": 6, "max_batch": 4, "epochs": 1, "log_every": 1}
DEMO_GENERATION_SIZE = 100
DEMO_POOL_LIMIT = 400


def ordered():
    """Let the clock pass a millisecond before the next message.

    kombu's filesystem broker (the demo's) hands out one queue's messages in the order of their
    file names: the millisecond each was written, then a random uuid, so two messages of the
    same millisecond could swap.
    """
    time.sleep(0.002)


def start_demo_jobs(log=print):
    """Queue the researcher page's first jobs unless they ran before; return what was queued.

    On the demo's worker (``annotator/demo.py``) they run with the bundled MiniLM while the
    page shows their progress: a snapshot of the MATH project
    (``labeling.tasks.export_project_snapshot``), a generation over the first
    ``DEMO_POOL_LIMIT`` candidates of the GSM8K pool (``scoring.runs.start_generation`` and
    ``scoring.tasks.run_generation``), and a forced retrain on the MATH passes with tiny
    ``DEMO_TRAIN_SETTINGS`` (``scoring.tasks.retrain_if_due``). Only ids and rows are touched
    here: the model loads in the worker.
    """
    from django.conf import settings

    from labeling import tasks as labeling_tasks
    from labeling.exports import snapshots
    from scoring import runs
    from scoring import tasks as scoring_tasks
    from scoring.models import Checkpoint, GenerationRun

    queue = settings.CELERY_TASK_ROUTES["scoring.tasks.*"]["queue"]  # the model side's queue
    queued = []
    math = Project.objects.get(name=MATH_PROJECT)
    gsm8k = Project.objects.get(name=GSM8K_PROJECT)
    # In this order on the demo's one worker, quickest first so that the research pages fill
    # within a minute: the snapshot, the generation, the retrain. All three go to the model
    # side's queue: the worker takes its two queues in turn, and on "default" the imports'
    # diagram jobs (labeling.diagrams) wait ahead of a snapshot sent there, which then came
    # after the retrain (docs/performance.md#the-demos-first-jobs-benchdemo_startpy).
    if not snapshots.list_snapshots(math, settings.STEPMARK_EXPORT_DIR) and snapshots.job_status(math) is None:
        snapshots.record_job(math, snapshots.QUEUED)
        labeling_tasks.export_project_snapshot.apply_async((math.pk,), queue=queue)
        ordered()
        queued.append(f"a snapshot of {math.name!r}")
    if not GenerationRun.objects.filter(project=gsm8k).exists():
        run = runs.start_generation(gsm8k, size=DEMO_GENERATION_SIZE)
        scoring_tasks.run_generation.apply_async((run.pk,), {"pool_limit": DEMO_POOL_LIMIT}, queue=queue)
        ordered()
        queued.append(f"generation run {run.pk} of {gsm8k.name!r}")
    # The settings mark the retrain as queued: a message the worker has not taken yet waits in
    # the broker's folder under var/, so a second start must not queue another.
    if math.train_settings != DEMO_TRAIN_SETTINGS and not Checkpoint.objects.filter(project=math).exists():
        Project.objects.filter(pk=math.pk).update(train_settings=DEMO_TRAIN_SETTINGS)
        scoring_tasks.retrain_if_due.apply_async((math.pk,), {"force": True}, queue=queue)
        queued.append(f"a retrain of {math.name!r}")
    for job in queued:
        log(f"Queued {job}: the research page shows its progress")
    return queued
