"""Snapshots: a project's submitted labels as a PRM800K JSONL file (gzip), kept on disk.

``export_project_snapshot`` writes one; ``labeling.tasks`` runs it on a schedule
(``labeling/schedules.py``) and on demand (``POST /api/projects/{id}/snapshots/``), then
``apply_retention`` trims the project's folder. Layout, under a base directory
(``settings.STEPMARK_EXPORT_DIR``)::

    <project-slug>/<project-slug>-<UTC YYYYmmddTHHMMSSZ>.jsonl.gz

The project slug is the slugified name followed by the project id (``math-phase-2-7``), so two
projects never share a folder and a renamed project finds its folder again (by the id).

Safe to run twice (Celery redelivers a task whose worker died): the file is written under a
hidden temporary name and linked into place only under a name nobody holds (a second snapshot
in the same second gets ``-2``), so nothing is ever clobbered; and a snapshot whose content
equals the newest one is dropped, the newest standing for both, so a rerun adds no duplicate.
"""
import dataclasses
import datetime
import gzip
import itertools
import os
import re
import tempfile
import time
from pathlib import Path

from django.utils import timezone
from django.utils.text import slugify

from labeling.exports import ExportFilters, write_export

FORMAT = "prm800k"
SUFFIX = ".jsonl.gz"
# "<slug>-<stamp>[-<n>].jsonl.gz"; the slug part is not checked (a renamed project's older
# files keep their old slug).
NAME = re.compile(r"(?P<slug>[a-z0-9_-]+)-(?P<stamp>\d{8}T\d{6}Z)(?:-(?P<n>\d+))?\.jsonl\.gz")
STAMP_FORMAT = "%Y%m%dT%H%M%SZ"
# Leftovers of a crashed writer (ours and write_export's) older than this are removed.
STALE_TEMPORARY_SECONDS = 24 * 3600


@dataclasses.dataclass(frozen=True)
class Snapshot:
    name: str
    path: Path
    size: int  # bytes on disk (compressed)
    created: datetime.datetime  # from the name, UTC
    sequence: int  # 1, or n for the n-th snapshot of the same second


def project_slug(project):
    """``<slugified name>-<id>``: readable, and unique per project."""
    return f"{slugify(project.name)[:80].strip('-') or 'project'}-{project.pk}"


def project_directory(project, directory, *, adopt=False):
    """The project's snapshot folder under ``directory``.

    When only a folder from an earlier name of the project exists, that one is returned, or
    with ``adopt`` renamed to the current slug (the writer does; readers only look).
    """
    base = Path(directory)
    current = base / project_slug(project)
    if current.is_dir() or not base.is_dir():
        return current
    suffix = f"-{project.pk}"
    for older in sorted(base.glob(f"*{suffix}")):
        # "*-7" cannot match another project's "...-17": the id is what follows the last dash.
        if older.is_dir() and older.name.rsplit("-", 1)[-1] == str(project.pk):
            if not adopt:
                return older
            try:
                older.rename(current)
            except FileExistsError:  # another writer adopted it a moment ago
                pass
            return current
    return current


def list_snapshots(project, directory):
    """The project's snapshots, newest first."""
    folder = project_directory(project, directory)
    if not folder.is_dir():
        return []
    found = []
    for entry in os.scandir(folder):
        snapshot = _parse(folder, entry)
        if snapshot is not None:
            found.append(snapshot)
    found.sort(key=lambda s: (s.created, s.sequence), reverse=True)
    return found


def find_snapshot(project, directory, name):
    """The snapshot called ``name`` in the project's folder, or None.

    ``name`` comes from a URL: only a plain snapshot file name directly inside the folder is
    accepted (no separators, no dot files, no link leading elsewhere).
    """
    if not isinstance(name, str) or "/" in name or "\\" in name or "\x00" in name or not NAME.fullmatch(name):
        return None
    folder = project_directory(project, directory)
    path = folder / name
    try:
        if path.resolve(strict=True).parent != folder.resolve(strict=True) or not path.is_file():
            return None
    except (FileNotFoundError, RuntimeError):
        return None
    with os.scandir(folder) as entries:
        for entry in entries:
            if entry.name == name:
                return _parse(folder, entry)
    return None


def export_project_snapshot(project, directory, *, now=None):
    """Write a snapshot of ``project`` under ``directory``; return its path.

    When the new content equals the newest snapshot's, nothing is added and that snapshot's
    path is returned.
    """
    folder = project_directory(project, directory, adopt=True)
    folder.mkdir(parents=True, exist_ok=True)
    slug = project_slug(project)
    stamp = (now or timezone.now()).astimezone(datetime.timezone.utc).strftime(STAMP_FORMAT)
    fd, partial = tempfile.mkstemp(dir=folder, prefix=f".{slug}.", suffix=".partial")
    os.close(fd)
    try:
        write_export(FORMAT, ExportFilters(project_id=project.pk), partial, compress=True)
        existing = list_snapshots(project, directory)
        if existing and same_content(existing[0].path, partial):
            return existing[0].path
        return _claim(folder, slug, stamp, Path(partial))
    finally:
        Path(partial).unlink(missing_ok=True)


def apply_retention(project, directory, keep_last=None, max_age_days=None, *, keep=(), now=None):
    """Delete the project's snapshots beyond the newest ``keep_last`` or older than ``max_age_days``.

    Either rule may be None or 0 (off). The newest snapshot and the paths in ``keep`` (the file
    just written) are never deleted. Temporary files a crashed writer left behind are removed
    once a day old. Returns the names deleted, newest first.
    """
    now = now or timezone.now()
    protected = {Path(p).name for p in keep}
    cutoff = now - datetime.timedelta(days=max_age_days) if max_age_days else None
    deleted = []
    for index, snapshot in enumerate(list_snapshots(project, directory)):
        if index == 0 or snapshot.name in protected:
            continue
        if (keep_last and index >= keep_last) or (cutoff is not None and snapshot.created < cutoff):
            snapshot.path.unlink(missing_ok=True)
            deleted.append(snapshot.name)
    _remove_stale_temporaries(project_directory(project, directory))
    return deleted


def same_content(a, b, chunk_size=1 << 20):
    """Whether two gzip files hold the same bytes once decompressed."""
    with gzip.open(a, "rb") as left, gzip.open(b, "rb") as right:
        while True:
            x, y = left.read(chunk_size), right.read(chunk_size)
            if x != y:
                return False
            if not x:
                return True


def _claim(folder, slug, stamp, partial):
    """Link ``partial`` into place under the first free ``<slug>-<stamp>[-n]`` name."""
    for n in itertools.count(1):
        path = folder / f"{slug}-{stamp}{'' if n == 1 else f'-{n}'}{SUFFIX}"
        try:
            # A hard link appears whole and fails if the name is taken: never a clobber.
            os.link(partial, path)
            return path
        except FileExistsError:
            continue
        except OSError:
            # No hard links on this filesystem: claim the name, then move the file over it.
            try:
                os.close(os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644))
            except FileExistsError:
                continue
            os.replace(partial, path)
            return path


def _parse(folder, entry):
    match = NAME.fullmatch(entry.name)
    if not match or not entry.is_file(follow_symlinks=False):
        return None
    created = datetime.datetime.strptime(match["stamp"], STAMP_FORMAT).replace(tzinfo=datetime.timezone.utc)
    return Snapshot(
        name=entry.name,
        path=Path(folder) / entry.name,
        size=entry.stat(follow_symlinks=False).st_size,
        created=created,
        sequence=int(match["n"] or 1),
    )


def _remove_stale_temporaries(folder):
    if not folder.is_dir():
        return
    limit = time.time() - STALE_TEMPORARY_SECONDS
    for entry in os.scandir(folder):
        if entry.name.startswith(".") and entry.name.endswith((".partial", ".tmp")) and entry.is_file():
            if entry.stat().st_mtime < limit:
                Path(entry.path).unlink(missing_ok=True)


# --- The last on-demand or scheduled job of a project, for the researcher page -----------
# Kept in the shared "stats" cache (Redis in production; see settings.CACHES) because the
# broker keeps no results: the page reads what the worker wrote here.
JOB_TIMEOUT = 7 * 24 * 3600
QUEUED, RUNNING, DONE, FAILED = "queued", "running", "done", "failed"


def _job_cache():
    from django.conf import settings
    from django.core.cache import caches

    return caches["stats"] if "stats" in settings.CACHES else caches["default"]


def _job_key(project):
    return f"snapshot-job:{project.pk}:{int(project.created_at.timestamp() * 1_000_000)}"


def record_job(project, state, **fields):
    """Remember the state of the project's latest snapshot job (``QUEUED`` ... ``FAILED``)."""
    _job_cache().set(_job_key(project), {"state": state, "at": timezone.now().isoformat(), **fields}, JOB_TIMEOUT)


def job_status(project):
    """``{"state", "at", ...}`` of the project's latest snapshot job, or None."""
    return _job_cache().get(_job_key(project))
