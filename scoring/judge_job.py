"""The worker's side of a judge run: ask the project's LLM judge about each step, store its labels.

``run(run_id)`` (called by ``scoring.judge_tasks.run_judge``, queue ``default``): reads the
project's ``JudgeSettings`` and the key from the environment variable they name, finds (or makes)
the run's ``LabelSource`` (kind ``judge``; details: base_url, model, prompt_version and the
template's sha256, never the key), and sends every solution that has a step without an ``ok``
label of that source through ``scoring.judge.judge_all``. Each verdict becomes one ``StepLabel``
per step of the solution (its own steps, alternative 0), written in bulk: ``ok`` with the value
and reason, or ``unparseable`` / ``refused`` / ``error`` with a null value and the answer's excerpt
or the error as its reason. Running it again therefore skips what is labelled and asks again
about the rest. The run's ``progress`` is updated as verdicts come in; its ``result`` counts steps
labelled, unparseable, refused and in error, the requests used, and the solutions skipped as
already labelled or left over the budget.

A template edited without a new ``prompt_version`` would mix two prompts under one source: the
run fails and says so. A 401, 403 or 404 stops the run (failed, with what it stored so far).
"""
import hashlib
import logging
import os
import time
from urllib.parse import urlsplit

from django.conf import settings
from django.db.models import Exists, OuterRef, Q
from django.utils import timezone

from labeling.locks import advisory_lock
from labeling.models import LabelSource, Solution, Step, StepLabel
from labeling.progress import pace
from scoring import judge
from scoring.judge_prompt import DEFAULT_PROMPT
from scoring.judge_runs import mark_failed
from scoring.models import JudgeRun, JudgeSettings

logger = logging.getLogger(__name__)

JUDGE_LOCK = 0x534A  # advisory lock namespace: a run, held while a worker judges it
CHUNK = 200  # solutions read from the database at once
FLUSH_EVERY = 2.0  # seconds between two writes of labels and progress


class NotReady(Exception):
    """The run cannot start: the judge is not set up, the key is missing, the template changed."""


def run(run_id, *, sleep=time.sleep, backoff_s=None):
    """Judge the run's solutions; returns the JudgeRun (None when gone or judged by another worker now).

    ``backoff_s`` overrides the first wait after a 429 or timeout (tests and benches; 1 s otherwise).
    """
    with advisory_lock(JUDGE_LOCK, run_id) as acquired:
        if not acquired:
            return None  # a second delivery while the first still runs
        job = JudgeRun.objects.select_related("project").filter(pk=run_id).first()
        if job is None or job.state not in JudgeRun.OPEN_STATES:
            return job
        try:
            config, source = _prepare(job, backoff_s)
        except NotReady as error:
            mark_failed(job.pk, error)
            job.refresh_from_db()
            return job
        job.state, job.source, job.started_at = JudgeRun.RUNNING, source, job.started_at or timezone.now()
        job.save(update_fields=["state", "source", "started_at"])
        return _judge(job, config, source, sleep)


def _prepare(job, backoff_s):
    """The client's Config and the run's LabelSource, or NotReady saying what to fix."""
    setup = JudgeSettings.objects.filter(project=job.project).first()
    if setup is None or not (setup.base_url and setup.model):
        raise NotReady("The judge has no base_url or model: set them in the judge settings.")
    key = ""
    if setup.api_key_env:
        if setup.api_key_env not in settings.STEPMARK_JUDGE_KEY_VARS:
            raise NotReady(f"api_key_env {setup.api_key_env} is not one of STEPMARK_JUDGE_KEY_VARS.")
        key = os.environ.get(setup.api_key_env, "")
        if not key:
            raise NotReady(f"The environment variable {setup.api_key_env} is not set on the worker.")
    template = setup.prompt_template or DEFAULT_PROMPT
    config = judge.Config(
        base_url=setup.base_url, model=setup.model, api_key=key, prompt_template=template,
        concurrency=setup.concurrency, rate_limit=setup.rate_limit, budget=setup.budget,
        max_attempts=setup.max_attempts, timeout_s=setup.timeout_s, max_tokens=setup.max_tokens,
        temperature=setup.temperature, **({} if backoff_s is None else {"backoff_s": backoff_s}))
    return config, _source(job.project, setup, template)


def _source(project, setup, template):
    """The LabelSource of this endpoint, model and prompt version (made on first use)."""
    digest = hashlib.sha256(template.encode()).hexdigest()
    host = urlsplit(setup.base_url).netloc
    name = f"{setup.model} · {setup.prompt_version} @ {host}"
    if len(name) > 200:
        name = f"{name[:183]} {hashlib.sha256(name.encode()).hexdigest()[:16]}"
    details = {"base_url": setup.base_url, "model": setup.model, "prompt_version": setup.prompt_version,
               "prompt_sha256": digest}
    source, _ = LabelSource.objects.get_or_create(project=project, kind=LabelSource.JUDGE, name=name,
                                                  defaults={"details": details})
    if source.details.get("prompt_sha256") != digest:
        raise NotReady(f"The prompt template changed since prompt version {setup.prompt_version} labelled with "
                       f"source {source.pk}: give the new template a prompt_version of its own.")
    return source


def _candidates(job):
    if job.generation is not None:
        # The project's gold items too: shown to annotators as ordinary work, they must carry the
        # judge's pre-labels as ordinary work does, or their lack would tell them apart
        # (labeling/work/prelabels.py); steps already labelled are skipped, so each is asked once.
        return Solution.objects.filter(Q(generation__number=job.generation) | Q(is_gold=True), project=job.project)
    return Solution.objects.filter(project=job.project, pk__in=job.solution_ids)


def _judge(job, config, source, sleep):
    candidates = _candidates(job)
    unlabelled = Step.objects.filter(solution=OuterRef("pk"), alternative=0).exclude(
        Exists(StepLabel.objects.filter(source=source, step=OuterRef("pk"), status=StepLabel.OK)))
    todo = list(candidates.filter(Exists(unlabelled)).order_by("pk").values_list("pk", flat=True))
    counts = {"solutions": candidates.count(), "already_labelled": 0, "judged": 0, "over_budget": 0, "stopped": 0,
              "labelled": 0, "unparseable": 0, "refused": 0, "errors": 0, "requests": 0, "budget": config.budget,
              "source": source.pk}
    counts["already_labelled"] = counts["solutions"] - len(todo)
    steps_of = {}  # solution id -> ([its step ids], [those to write]), filled as the pool reads items
    rows, started, last = [], time.monotonic(), time.monotonic()
    status_key = {judge.OK: "labelled", judge.UNPARSEABLE: "unparseable", judge.REFUSED: "refused",
                  judge.ERROR: "errors"}

    def items():
        for at in range(0, len(todo), CHUNK):
            ids = todo[at:at + CHUNK]
            problems = dict(Solution.objects.filter(pk__in=ids).values_list("pk", "problem__problem"))
            steps = {}
            for step in (Step.objects.filter(solution_id__in=ids, alternative=0).order_by("solution_id", "position")
                         .annotate(done=Exists(StepLabel.objects.filter(source=source, step=OuterRef("pk"),
                                                                        status=StepLabel.OK)))
                         .values("pk", "solution_id", "text", "done")):
                steps.setdefault(step["solution_id"], []).append(step)
            for pk in ids:
                own = steps.get(pk, [])
                steps_of[pk] = ([step["pk"] for step in own], [step["pk"] for step in own if not step["done"]])
                yield pk, problems[pk], [step["text"] for step in own]

    def flush():
        if rows:
            StepLabel.objects.bulk_create(rows, update_conflicts=True, unique_fields=["source", "step"],
                                          update_fields=["value", "reason", "status"])
            rows.clear()
        done = counts["judged"] + counts["over_budget"] + counts["stopped"]
        at = pace(done, len(todo), time.monotonic() - started)
        JudgeRun.objects.filter(pk=job.pk).update(progress={
            "done": done, "total": len(todo), "requests": counts["requests"], "budget": config.budget,
            "fraction": at.fraction, "rate": at.rate, "eta_s": at.eta_s, "updated_at": timezone.now().isoformat()})

    flush()  # total and requests from the start
    try:
        for solution_id, verdict in judge.judge_all(config, items(), sleep=sleep):
            counts["requests"] += verdict.requests
            all_ids, step_ids = steps_of.pop(solution_id)
            if verdict.status in (judge.OVER_BUDGET, judge.STOPPED):
                counts[verdict.status] += 1  # never asked: nothing stored, a later run asks
                continue
            counts["judged"] += 1
            counts[status_key[verdict.status]] += len(step_ids)
            if verdict.status == judge.OK:
                by_id = dict(zip(all_ids, verdict.labels))  # the answer numbers every step, 1..n
                rows.extend(StepLabel(source=source, step_id=pk, value=by_id[pk][0], reason=by_id[pk][1],
                                      status=StepLabel.OK) for pk in step_ids)
            else:
                rows.extend(StepLabel(source=source, step_id=pk, value=None, reason=verdict.detail,
                                      status=verdict.status) for pk in step_ids)
            if time.monotonic() - last >= FLUSH_EVERY:
                flush()
                last = time.monotonic()
    except judge.JudgeStopped as error:
        flush()
        mark_failed(job.pk, f"The judge's endpoint refused the run: {error}", result=counts)
        job.refresh_from_db()
        return job
    flush()
    JudgeRun.objects.filter(pk=job.pk).update(state=JudgeRun.DONE, result=counts, finished_at=timezone.now())
    logger.info("judge run %s of project %s: %s", job.pk, job.project_id, counts)
    job.refresh_from_db()
    return job
