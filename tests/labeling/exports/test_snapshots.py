"""Scheduled snapshots: PRM800K files named by project and time, written without clobbering,
trimmed by the retention rule, and the Celery tasks that run them."""
import datetime
import gzip
import os

import pytest

from annotator.celery import app
from labeling import tasks
from labeling.exports import ExportFilters, get_exporter, snapshots
from tests.factories import make_annotator, make_project, make_solution, rated_pass

pytestmark = pytest.mark.django_db

UTC = datetime.timezone.utc
NOW = datetime.datetime(2025, 3, 3, 9, 30, 5, 123456, tzinfo=UTC)


@pytest.fixture
def rated_project():
    project = make_project(name="MATH phase 2")
    ann = make_annotator("ann")
    rated_pass(make_solution(project), ann, [1, 1, -1])
    rated_pass(make_solution(project, steps=4), ann, [1, 0, 1, 1])
    return project


def lines(path):
    with gzip.open(path, "rt") as f:
        return f.read().splitlines()


def write_fake(folder, name, text):
    folder.mkdir(parents=True, exist_ok=True)
    with gzip.open(folder / name, "wt") as f:
        f.write(text)
    return folder / name


def names(project, directory):
    return [s.name for s in snapshots.list_snapshots(project, directory)]


def test_snapshot_is_the_projects_prm800k_export_named_by_project_and_time(rated_project, tmp_path):
    other = make_project(name="Other")
    rated_pass(make_solution(other), make_annotator("bob"), [1])

    path = snapshots.export_project_snapshot(rated_project, tmp_path, now=NOW)

    slug = f"math-phase-2-{rated_project.pk}"
    assert snapshots.project_slug(rated_project) == slug
    assert path == tmp_path / slug / f"{slug}-20250303T093005Z.jsonl.gz"
    expected = list(get_exporter("prm800k")(ExportFilters(project_id=rated_project.pk)))
    assert len(expected) == 2 and lines(path) == expected
    assert os.listdir(tmp_path / slug) == [path.name]  # no temporary file left behind
    [listed] = snapshots.list_snapshots(rated_project, tmp_path)
    assert listed.created == datetime.datetime(2025, 3, 3, 9, 30, 5, tzinfo=UTC)
    assert listed.size == path.stat().st_size


def test_running_twice_with_nothing_new_adds_no_duplicate(rated_project, tmp_path):
    first = snapshots.export_project_snapshot(rated_project, tmp_path, now=NOW)
    again = snapshots.export_project_snapshot(rated_project, tmp_path, now=NOW)
    later = snapshots.export_project_snapshot(rated_project, tmp_path, now=NOW + datetime.timedelta(days=1))
    assert again == first and later == first
    assert os.listdir(first.parent) == [first.name]


def test_new_labels_in_the_same_second_get_a_new_name_and_never_clobber(rated_project, tmp_path):
    first = snapshots.export_project_snapshot(rated_project, tmp_path, now=NOW)
    before = first.read_bytes()
    rated_pass(make_solution(rated_project), make_annotator("cat"), [-1])

    second = snapshots.export_project_snapshot(rated_project, tmp_path, now=NOW)

    assert second.name == first.name.replace("Z.jsonl.gz", "Z-2.jsonl.gz")
    assert first.read_bytes() == before
    assert len(lines(second)) == 3
    assert names(rated_project, tmp_path) == [second.name, first.name]  # newest first


def test_a_name_someone_else_holds_is_skipped(rated_project, tmp_path):
    folder = tmp_path / snapshots.project_slug(rated_project)
    taken = write_fake(folder, f"{folder.name}-20250303T093005Z.jsonl.gz", "another writer's file\n")
    path = snapshots.export_project_snapshot(rated_project, tmp_path, now=NOW)
    assert path.name.endswith("-2.jsonl.gz")
    assert lines(taken) == ["another writer's file"]


def test_projects_whose_names_slugify_alike_keep_apart(tmp_path):
    a, b = make_project(name="A b"), make_project(name="a-b")
    rated_pass(make_solution(a), make_annotator("ann"), [1])
    snapshots.export_project_snapshot(a, tmp_path, now=NOW)
    snapshots.export_project_snapshot(b, tmp_path, now=NOW)
    assert len(names(a, tmp_path)) == 1 and len(names(b, tmp_path)) == 1
    assert names(a, tmp_path) != names(b, tmp_path)
    snapshots.apply_retention(b, tmp_path, keep_last=1, max_age_days=0.001)
    assert len(names(a, tmp_path)) == 1


def test_a_renamed_project_keeps_its_snapshots(rated_project, tmp_path):
    old = snapshots.export_project_snapshot(rated_project, tmp_path, now=NOW)
    rated_project.name = "MATH phase 2 (final)"
    rated_project.save()
    assert names(rated_project, tmp_path) == [old.name]  # found by the project id

    rated_pass(make_solution(rated_project), make_annotator("cat"), [1])
    new = snapshots.export_project_snapshot(rated_project, tmp_path, now=NOW + datetime.timedelta(hours=1))
    assert new.parent.name == f"math-phase-2-final-{rated_project.pk}"
    assert names(rated_project, tmp_path) == [new.name, old.name]
    assert sorted(os.listdir(tmp_path)) == [new.parent.name]


@pytest.fixture
def history(rated_project, tmp_path):
    """Six snapshots of distinct content, one a day for the six days before NOW."""
    folder = tmp_path / snapshots.project_slug(rated_project)
    for day in range(6):
        stamp = (NOW - datetime.timedelta(days=day + 1)).strftime(snapshots.STAMP_FORMAT)
        write_fake(folder, f"{folder.name}-{stamp}.jsonl.gz", f"day {day}\n")
    return folder


def test_retention_keeps_the_newest_n(rated_project, tmp_path, history):
    all_names = names(rated_project, tmp_path)
    deleted = snapshots.apply_retention(rated_project, tmp_path, keep_last=4, now=NOW)
    assert deleted == all_names[4:]
    assert names(rated_project, tmp_path) == all_names[:4]


def test_retention_deletes_by_age_but_never_the_newest(rated_project, tmp_path, history):
    all_names = names(rated_project, tmp_path)
    snapshots.apply_retention(rated_project, tmp_path, max_age_days=3.5, now=NOW)
    assert names(rated_project, tmp_path) == all_names[:3]
    # Everything is old now: the newest still stays.
    snapshots.apply_retention(rated_project, tmp_path, keep_last=None, max_age_days=1, now=NOW + datetime.timedelta(days=30))
    assert names(rated_project, tmp_path) == all_names[:1]


def test_retention_never_deletes_the_file_just_written(rated_project, tmp_path, history):
    # A snapshot named for an older time (a clock behind the others) is still protected.
    newest, *_, oldest = names(rated_project, tmp_path)
    snapshots.apply_retention(rated_project, tmp_path, keep_last=1, max_age_days=1, now=NOW, keep=[history / oldest])
    assert names(rated_project, tmp_path) == [newest, oldest]


def test_retention_off_keeps_everything_and_leaves_other_files(rated_project, tmp_path, history):
    (history / "README.txt").write_text("notes")
    assert snapshots.apply_retention(rated_project, tmp_path, keep_last=0, max_age_days=0, now=NOW) == []
    assert len(names(rated_project, tmp_path)) == 6
    snapshots.apply_retention(rated_project, tmp_path, keep_last=1, now=NOW)
    assert (history / "README.txt").read_text() == "notes"


def test_retention_removes_a_crashed_writers_leftovers_after_a_day(rated_project, tmp_path, history):
    stale, fresh = history / ".x.abc.partial", history / ".y.jsonl.gz.def.tmp"
    stale.write_bytes(b"half"), fresh.write_bytes(b"half")
    day_ago = NOW.timestamp() - 2 * 24 * 3600
    os.utime(stale, (day_ago, day_ago))
    snapshots.apply_retention(rated_project, tmp_path, now=NOW)
    assert not stale.exists() and fresh.exists()


@pytest.mark.parametrize("name", [
    "../x-20250101T000000Z.jsonl.gz", "..", ".", "", "a/b-20250101T000000Z.jsonl.gz",
    "/etc/passwd", ".hidden-20250101T000000Z.jsonl.gz", "notes.txt", "x-20250101T000000Z.jsonl.gz\x00",
])
def test_find_snapshot_accepts_only_snapshot_names_inside_the_folder(rated_project, tmp_path, name):
    snapshots.export_project_snapshot(rated_project, tmp_path, now=NOW)
    assert snapshots.find_snapshot(rated_project, tmp_path, name) is None


def test_find_snapshot_refuses_links_and_other_projects_files(rated_project, tmp_path):
    mine = snapshots.export_project_snapshot(rated_project, tmp_path, now=NOW)
    assert snapshots.find_snapshot(rated_project, tmp_path, mine.name).path == mine

    other = make_project(name="Other")
    rated_pass(make_solution(other), make_annotator("bob"), [1])
    theirs = snapshots.export_project_snapshot(other, tmp_path, now=NOW)
    assert snapshots.find_snapshot(rated_project, tmp_path, theirs.name) is None

    outside = write_fake(tmp_path / "elsewhere", "secret-20250101T000000Z.jsonl.gz", "secret\n")
    (mine.parent / outside.name).symlink_to(outside)
    assert snapshots.find_snapshot(rated_project, tmp_path, outside.name) is None
    assert outside.name not in names(rated_project, tmp_path)


# --- The Celery tasks (run in this process: Task.apply, or eager for what they queue) -------
# export_dir (tests/conftest.py) keeps the latest two snapshots of a project.

def test_task_writes_applies_retention_and_records_the_job(rated_project, export_dir):
    folder = export_dir / snapshots.project_slug(rated_project)
    for day in range(3):
        write_fake(folder, f"{folder.name}-2024010{day + 1}T000000Z.jsonl.gz", f"old {day}\n")

    name = tasks.export_project_snapshot.apply(args=[rated_project.pk]).get()

    assert names(rated_project, export_dir) == [name, f"{folder.name}-20240103T000000Z.jsonl.gz"]
    job = snapshots.job_status(rated_project)
    assert job["state"] == snapshots.DONE and job["name"] == name and job["deleted"] == 2
    assert tasks.export_project_snapshot.apply(args=[rated_project.pk]).get() == name  # nothing new


def test_task_records_why_it_failed(rated_project, settings, tmp_path):
    settings.STEPMARK_EXPORT_DIR = tmp_path / "a-file"
    settings.STEPMARK_EXPORT_DIR.write_text("not a directory")
    result = tasks.export_project_snapshot.apply(args=[rated_project.pk])
    assert result.failed()
    job = snapshots.job_status(rated_project)
    assert job["state"] == snapshots.FAILED and "a-file" in job["error"]


def test_task_for_a_deleted_project_does_nothing(export_dir):
    assert tasks.export_project_snapshot.apply(args=[987654]).get() is None
    assert not export_dir.exists()


def test_export_all_snapshots_covers_every_project(rated_project, export_dir, eager):
    inactive = make_project(name="Old", is_active=False)
    rated_pass(make_solution(inactive), make_annotator("bob"), [1])
    assert tasks.export_all_snapshots.delay().get() == 2
    assert len(names(rated_project, export_dir)) == 1 and len(names(inactive, export_dir)) == 1
    tasks.export_all_snapshots.delay()
    assert len(names(rated_project, export_dir)) == 1  # safe to run twice


def test_tasks_go_to_the_default_queue():
    for task in (tasks.export_project_snapshot, tasks.export_all_snapshots):
        route = app.amqp.router.route({}, task.name)
        assert route["queue"].name == "default", task.name
