"""An import as a background job: the upload saved to disk, imported by a worker, watched and
cancelled from the research page.

The web side checks the format's options, moves the uploaded file (Django's temporary file, the
upload handler streamed it to disk) into ``STEPMARK_IMPORT_DIR`` and queues ``run_import_job``
on the ``default`` queue (``start``); it reads a job's progress (``live``) and cancels it
(``cancel``). The worker (``run``) calls the one entry point, ``registry.run_import``, so the
job follows every rule of the formats, all or nothing, and deletes the files when it ends.

Progress: the import writes in one transaction, so the job's row cannot carry the live counts
(nothing would show until the commit, and the row would be locked against a cancel). Every
``CHECK_EVERY`` lines the worker writes them to the ``stats`` cache (Redis, or files in the
demo: shared by the web and worker processes) and asks the row whether the job was cancelled;
PostgreSQL's READ COMMITTED lets that question see a cancel committed since the import began.
The last statement inside the import's transaction marks the row done, so a cancel either came
first (the import rolls back) or waits for the commit and finds the job done.
"""
import uuid
from pathlib import Path

from celery import shared_task
from django.conf import settings
from django.core.cache import caches
from django.core.files.move import file_move_safe
from django.db import transaction
from django.utils import timezone

from formats.errors import FormatError
from labeling import audit
from labeling.errors import DomainError
from labeling.locks import IMPORT_JOB_LOCK, advisory_lock
from labeling.models import ImportJob
from labeling.outages import RetriedOnOutage, queued_or_failed, will_retry
from labeling.progress import pace

from .common import Progress
from .raw_outputs import preview
from .registry import check_options, get_importer, run_import

CHECK_EVERY = 500  # lines between two progress writes and cancel checks
LIVE_SECONDS = 24 * 3600  # how long the cache keeps a job's live counts


class Cancelled(Exception):
    """The job's row says cancelled: the import stops and its transaction rolls back."""


# The web side ---------------------------------------------------------------------------------


def clean_options(options):
    """The options a person filled in; empty fields are left out (the format's defaults)."""
    return {key: value for key, value in (options or {}).items() if value not in (None, "")}


def start(project, user, format_name, upload, options=None, requests=None):
    """A queued ImportJob for ``upload``; bad options raise FormatError naming the field, before
    anything is saved. ``requests`` is openai-batch's Batch input file."""
    options = clean_options(options)
    check_options(format_name, {**options, **({"requests": requests.name} if requests is not None else {})})
    path = save_upload(upload)
    requests_path = save_upload(requests) if requests is not None else None
    with transaction.atomic():
        job = ImportJob.objects.create(
            project=project, requested_by=user if user is not None and user.is_authenticated else None,
            format=format_name, options=options, file_name=Path(upload.name or "upload").name[:255], path=str(path),
            requests_path=str(requests_path or ""), bytes_total=path.stat().st_size,
        )
        audit.record(project, user, audit.IMPORT, target=f"import job {job.pk}",
                     after={"job": job.pk, "format": format_name, "file": job.file_name, "bytes": job.bytes_total,
                            "options": options})
    job_id = job.pk
    transaction.on_commit(lambda: queued_or_failed(lambda: run_import_job.delay(job_id),
                                                   lambda reason: _not_queued(job_id, reason)))
    return job


def _not_queued(job_id, reason):
    """The job queue was away when the job was made: failed, its upload removed (not "queued" for ever)."""
    job = ImportJob.objects.get(pk=job_id)
    job.state, job.error, job.finished_at = ImportJob.FAILED, reason, timezone.now()
    job.save(update_fields=["state", "error", "finished_at"])
    remove_files(job)


def save_upload(upload):
    """Move an upload into ``STEPMARK_IMPORT_DIR`` under a fresh name; returns the path.

    A temporary file (TemporaryFileUploadHandler) is renamed, or copied in chunks across file
    systems; a file held in memory (another handler, a test) is written in chunks.
    """
    folder = Path(settings.STEPMARK_IMPORT_DIR)
    folder.mkdir(parents=True, exist_ok=True)
    suffix = "".join(s for s in Path(upload.name or "").suffixes[-2:] if s[1:].isalnum())
    path = folder / f"{uuid.uuid4().hex}{suffix}"
    if hasattr(upload, "temporary_file_path"):
        file_move_safe(upload.temporary_file_path(), str(path))
    else:
        with open(path, "wb") as out:
            for chunk in upload.chunks():
                out.write(chunk)
    return path


def cancel(job):
    """Cancel a queued or running job; a DomainError (409) once it has ended."""
    now = timezone.now()
    if ImportJob.objects.filter(pk=job.pk, state=ImportJob.QUEUED).update(state=ImportJob.CANCELLED, finished_at=now):
        remove_files(job)  # no worker took it: nobody else will delete them
    else:
        # A running job's worker sees this at its next check and rolls back; one that has just
        # marked itself done holds the row until it commits, and this then changes nothing.
        ImportJob.objects.filter(pk=job.pk, state=ImportJob.RUNNING).update(state=ImportJob.CANCELLED,
                                                                            finished_at=now)
    job.refresh_from_db()
    if job.state != ImportJob.CANCELLED:
        raise DomainError(f"The import has ended ({job.state}); there is nothing to cancel.", status=409)
    return job


def live(job):
    """The job's counts as the page shows them (the live ones while it runs), how far it is and the time left."""
    counts = {"lines_read": job.lines_read, "records_stored": job.records_stored, "bytes_read": job.bytes_read}
    running = job.state == ImportJob.RUNNING and job.started_at is not None
    if job.state == ImportJob.RUNNING:
        counts.update(caches["stats"].get(live_key(job.pk)) or {})
    elapsed = (timezone.now() - job.started_at).total_seconds() if running else 0  # no rate unless running
    how_far = pace(counts["bytes_read"], job.bytes_total, elapsed)
    eta = None if how_far.eta_s is None else round(how_far.eta_s, 1)
    return {**counts, "fraction": round(how_far.fraction or 0.0, 4), "eta_s": eta}


def preview_upload(format_name, upload, options=None, requests=None, n=5, project=None):
    """The first ``n`` records of ``upload`` split as the import would split them, each answer
    graded against the ground truth it would get in ``project``; stores nothing."""
    options = clean_options(options)
    if requests is not None:
        options["requests"] = requests
    check_options(format_name, options)
    load = get_importer(format_name)
    show = load.preview if hasattr(load, "preview") else preview  # the step-label formats show their labels
    return show(format_name, upload, options or None, n=n, path=upload.name, project=project)


def live_key(job_id):
    return f"import-job:{job_id}"


def remove_files(job):
    for path in (job.path, job.requests_path):
        if path:
            Path(path).unlink(missing_ok=True)


# The worker's side ----------------------------------------------------------------------------


@shared_task(name="labeling.tasks.run_import_job", base=RetriedOnOutage, bind=True)
def run_import_job(self, job_id):
    """Import a queued upload (labeling/tasks.py registers it with the worker); an outage runs it again."""
    return run(job_id, will_retry=lambda exc: will_retry(self, exc))


class JobProgress(Progress):
    """Counts lines read (``watch``) and records stored (``advance``); every ``CHECK_EVERY``
    lines writes them to the cache and stops the import if the job was cancelled."""

    def __init__(self, job, source):
        super().__init__(f"import job {job.pk}", enabled=False)
        self.job, self.source, self.lines, self.next_check = job, source, 0, CHECK_EVERY

    def watch(self, records):
        for line, record in records:
            self.lines = line
            if line >= self.next_check:
                self.next_check = line + CHECK_EVERY
                self.check()
            yield line, record

    def counts(self):
        return {"lines_read": self.lines, "records_stored": self.count,
                "bytes_read": min(self.source.tell(), self.job.bytes_total)}

    def check(self):
        caches["stats"].set(live_key(self.job.pk), self.counts(), LIVE_SECONDS)
        if ImportJob.objects.filter(pk=self.job.pk, state=ImportJob.CANCELLED).exists():
            raise Cancelled()


def run(job_id, *, will_retry=lambda exc: False):
    """Run the job ``job_id``: its file imported whole or not at all, the outcome on its row.

    When ``will_retry(exc)`` says an error will be tried again (an outage), the job stays open
    and keeps its files for the next try.
    """
    job = ImportJob.objects.filter(pk=job_id).select_related("project").first()
    if job is None:
        return None  # its project was deleted since
    with advisory_lock(IMPORT_JOB_LOCK, job.pk) as acquired:
        if not acquired:
            return job.state  # a live worker imports it: this is a second delivery
        return _run(job, will_retry)


def _run(job, will_retry):
    # A redelivered job (its worker died) runs again: the dead worker's transaction rolled back.
    if not ImportJob.objects.filter(pk=job.pk, state__in=ImportJob.OPEN_STATES).update(
            state=ImportJob.RUNNING, started_at=timezone.now()):
        remove_files(job)  # cancelled while queued
        return job.state
    options = dict(job.options)
    if job.requests_path:
        options["requests"] = job.requests_path
    retrying = False
    try:
        with open(job.path, "rb") as source, transaction.atomic():
            progress = JobProgress(job, source)
            result = run_import(job.format, source, job.project, path=job.file_name, progress=progress,
                                options=options or None, job_id=job.pk)
            progress.check()
            if not ImportJob.objects.filter(pk=job.pk, state=ImportJob.RUNNING).update(
                    state=ImportJob.DONE, result=result.as_dict(), finished_at=timezone.now(), **progress.counts()):
                raise Cancelled()
    except Cancelled:
        end(job, ImportJob.CANCELLED)
    except FormatError as exc:
        end(job, ImportJob.FAILED, error=exc.message, error_file=exc.path or job.file_name, error_line=exc.line,
            error_field=exc.field or "")
    except Exception as exc:
        retrying = will_retry(exc)
        if not retrying:
            end(job, ImportJob.FAILED, error=f"{type(exc).__name__}: {exc}")
        raise
    finally:
        if not retrying:
            remove_files(job)
            caches["stats"].delete(live_key(job.pk))
    job.refresh_from_db()
    return job.state


def end(job, state, **fields):
    """Mark a job that stored nothing: cancelled (the row may say so already) or failed (unless cancelled)."""
    states = (*ImportJob.OPEN_STATES, ImportJob.CANCELLED) if state == ImportJob.CANCELLED else ImportJob.OPEN_STATES
    ImportJob.objects.filter(pk=job.pk, state__in=states).update(
        state=state, finished_at=timezone.now(), **fields)
