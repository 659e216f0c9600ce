"""`manage.py load_demo`: the demo projects, from the repository's data (`data/`), and the demo accounts.

Runs the real importers against the test PostgreSQL database.
"""
import io
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.request

import pytest
from django.apps import apps
from django.contrib.auth import authenticate, get_user_model
from django.core.management import CommandError, call_command
from django.db import transaction
from django.test import override_settings

from annotator import demo_jobs
from annotator.demo_jobs import start_demo_jobs
from labeling.access import roles
from labeling.markdown_text import render_markdown
from labeling.management.commands import load_demo as demo
from labeling.management.commands.load_demo import (
    ACCOUNTS,
    DEMO_ANNOTATORS,
    GSM8K_PROJECT,
    MATH_PROJECT,
    REPLAYED_SOLUTIONS,
    SCREENING_ITEMS,
)
from labeling.models import Assignment, GoldScore, Problem, Project, Rating, Solution, Step
from tests.conftest import FAST_HASHERS, ROOT
from tests.factories import FastPBKDF2PasswordHasher

pytestmark = [pytest.mark.django_db, pytest.mark.slow]


@pytest.fixture(autouse=True)
def demo_debug(settings):
    # The demo runs with DEBUG (annotator/demo.py); without it load_demo refuses or, given
    # --allow-production, publishes no password (tests/security/test_accounts.py).
    settings.DEBUG = True


# Four model solutions for each of GSM8K's 1,319 test problems, less the 8 that repeat another
# model's solution to the same problem word for word: a candidate is its problem and steps
# (labeling/imports/hashing.py), so those are stored once.
GSM8K_CANDIDATES = 1319 * 4 - 8


def load(data_dir):
    call_command("load_demo", data_dir=str(data_dir), quiet_progress=True, stdout=io.StringIO())


@pytest.fixture(scope="module")
def demo_loaded(django_db_setup, django_db_blocker, data_dir):
    """The demo loaded once for the tests below, in a transaction of this module's that each test's
    own (a savepoint inside it) rolls back to, and that is rolled back after the last of them."""
    with django_db_blocker.unblock(), override_settings(DEBUG=True, PASSWORD_HASHERS=FAST_HASHERS), \
            transaction.atomic():
        load(data_dir)
        yield
        transaction.set_rollback(True)


def row_counts():
    return {model._meta.label: model.objects.count() for model in apps.get_models()}


# These two run before the tests that share the loaded demo (``demo_loaded``), which they must not see.
def test_missing_data_is_a_clear_error(tmp_path):
    with pytest.raises(CommandError, match=r"Demo data not found: .*math500\.jsonl\.gz.*STEPMARK_DATA"):
        call_command("load_demo", data_dir=str(tmp_path))
    assert not Project.objects.exists()


def test_data_directory_comes_from_the_environment(tmp_path, monkeypatch):
    monkeypatch.setenv("STEPMARK_DATA", str(tmp_path))
    with pytest.raises(CommandError, match=str(tmp_path)):
        call_command("load_demo")


class CountingHasher(FastPBKDF2PasswordHasher):
    """The tests' hasher, counting its hashes: each costs 0.7 s at the production cost."""

    hashes = 0

    def encode(self, password, salt, iterations=None):
        CountingHasher.hashes += 1
        return super().encode(password, salt, iterations)


def test_new_demo_accounts_are_hashed_once_and_checked_accounts_only_when_they_exist(settings):
    settings.PASSWORD_HASHERS = ["tests.test_demo.CountingHasher"]
    projects = [Project.objects.create(name="accounts")]
    CountingHasher.hashes = 0
    assert demo.ensure_accounts(projects) == {name: password for name, (password, _, _) in ACCOUNTS.items()}
    assert CountingHasher.hashes == len(ACCOUNTS)  # set, not first checked against no password
    CountingHasher.hashes = 0
    assert demo.ensure_accounts(projects) == {}  # a restart: each checked, none set again
    assert CountingHasher.hashes == len(ACCOUNTS)
    assert all(authenticate(username=name, password=password) for name, (password, _, _) in ACCOUNTS.items())


def test_demo_projects_and_accounts(demo_loaded):
    check_math_project()
    check_screening()
    check_gsm8k_project()
    check_accounts()


def check_math_project():
    project = Project.objects.get(name=MATH_PROJECT)
    # PRM800K phase 1 rules: every step rated, alternatives, human-written steps.
    assert (project.stop_at_first_error, project.allow_alternatives, project.allow_human_steps) == (False, True, True)
    # The 101 PRM800K problems are MATH-500 problems: they add no problem of their own.
    assert Problem.objects.filter(project=project).count() == 500
    labelled = Solution.objects.filter(project=project, assignments__state=Assignment.SUBMITTED).distinct()
    assert labelled.count() == 101
    # The imported pass plus the three demo annotators' replays on the first solutions.
    assert project.overlap == 1 + len(DEMO_ANNOTATORS)
    replayed = Assignment.objects.filter(project=project, annotator__user__username__in=DEMO_ANNOTATORS)
    assert replayed.filter(state=Assignment.SUBMITTED).count() == REPLAYED_SOLUTIONS * len(DEMO_ANNOTATORS)
    # The 101 PRM800K solutions and the demo's screening items (check_screening).
    assert Solution.objects.filter(project=project, is_screening=False).count() == 101
    # 5,192 rated candidate steps plus the steps annotators wrote themselves.
    candidate_steps = Step.objects.filter(solution__project=project, solution__is_screening=False).exclude(source="human")
    assert candidate_steps.count() == 5192
    assert Rating.objects.filter(assignment__project=project, step__source="human").exists()


def check_screening():
    """A newcomer to MATH is screened on items with known answers, and the instructions teach the scale."""
    from labeling.quality import gold, screening

    project = Project.objects.get(name=MATH_PROJECT)
    assert project.requires_screening and project.screening_size == 0
    items = list(screening.screening_items(project))
    assert len(items) == len(SCREENING_ITEMS)
    values = []
    for item, (unique_id, steps) in zip(items, SCREENING_ITEMS):
        # A MATH-500 problem of the project (no new problem), its steps as written, gold on every one.
        assert (item.problem.source_id, item.generation.number, item.is_gold) == (unique_id, -1, True)
        assert list(item.steps.order_by("position").values_list("text", flat=True)) == [t for t, _ in steps]
        assert gold.gold_ratings(item) == {(i, 0): v for i, (_, v) in enumerate(steps)}
        values += [v for _, v in steps]
    assert set(values) == {-1, 0, 1}  # the items use the whole scale
    # Nobody rated them in PRM800K: they are the newcomer's, not the dashboard's.
    assert not Assignment.objects.filter(solution__in=items).exists()

    # The instructions: the scale and a worked example with a +1, a 0 and a -1, each with its why.
    text = project.instructions
    for heading in ("## How to rate", "## Worked example", "## Screening"):
        assert heading in text
    example = text.split("## Worked example")[1].split("## Screening")[0]
    verdicts = [line.split("**")[1] for line in example.splitlines() if line[:2] in ("1.", "2.", "3.")]
    assert verdicts == ["+1", "0", "-1"], verdicts
    assert all(f"**{v}**: " in example for v in verdicts)  # and why, after each
    html = render_markdown(text)
    assert "<h2>Worked example</h2>" in html and html.count("<li>") == 6 and "<script" not in html


def check_gsm8k_project():
    project = Project.objects.get(name=GSM8K_PROJECT)
    assert project.stop_at_first_error is True
    # Phase 2's instructions: the scale, the first -1 ends the pass, a worked +1, 0 and -1 with why.
    example = project.instructions.split("## Worked example")[1]
    verdicts = [line.split("**")[1] for line in example.splitlines() if line[:2] in ("1.", "2.", "3.")]
    assert verdicts == ["+1", "0", "-1"] and "first -1 ends the solution" in project.instructions
    assert Problem.objects.filter(project=project).count() == 1319
    solutions = Solution.objects.filter(project=project)
    assert solutions.count() == GSM8K_CANDIDATES
    assert not solutions.filter(is_correct=None).exists()  # outcome labels came with the data
    assert not Assignment.objects.filter(project=project).exists()  # nobody has rated them yet


def check_accounts():
    expected = {"ann": ["annotator"], "lead": ["lead"], "research": ["researcher"],
                **{name: ["annotator"] for name in DEMO_ANNOTATORS}}
    for username, held in expected.items():
        user = authenticate(username=username, password=ACCOUNTS[username][0])
        assert user is not None, username
        assert roles.roles_of(user) == held
        assert not user.is_staff
    assert hasattr(get_user_model().objects.get(username="ann"), "annotator")
    admin = authenticate(username="admin", password=ACCOUNTS["admin"][0])
    assert admin is not None and admin.is_superuser and admin.is_staff


def test_running_twice_adds_nothing_and_repairs_accounts(demo_loaded, data_dir):
    before = row_counts()
    user = get_user_model().objects.get(username="lead")
    user.set_password("something-else")
    user.save()
    load(data_dir)
    assert row_counts() == before
    assert authenticate(username="lead", password="demo-lead") is not None


def test_every_flow_has_something_to_show(demo_loaded, client, eager, settings, tmp_path, monkeypatch, tiny_base):
    """ann has work everywhere; the lead's MATH dashboard has alpha, gold and a pause; research has jobs."""
    from labeling.web.pages import waiting_for
    from labeling.work.queue import next_assignment

    settings.STEPMARK_CHECKPOINT_DIR = tmp_path / "checkpoints"
    settings.STEPMARK_EXPORT_DIR = tmp_path / "exports"
    math, gsm8k = Project.objects.get(name=MATH_PROJECT), Project.objects.get(name=GSM8K_PROJECT)

    ann = get_user_model().objects.get(username="ann")
    waiting = waiting_for(ann, [math.pk, gsm8k.pk])
    assert waiting == {math.pk, gsm8k.pk}, waiting
    # ann is new to MATH: the queue hands the screening items first; rated as their gold, they
    # pass her, and real work follows.
    screen(ann.annotator, math)
    # What the queue hands ann in MATH is phase-1 work (own steps allowed), from the solutions the
    # demo annotators left open; 81 of those 89 carry alternatives at their steps (the queue
    # serves them in a scrambled order, so the first one handed out may be among the other 8).
    task = next_assignment(ann.annotator, math)
    assert task is not None and not task.solution.is_gold
    left_open = Solution.objects.filter(project=math, is_gold=False).exclude(
        assignments__annotator__user__username__in=DEMO_ANNOTATORS)
    assert left_open.filter(pk=task.solution_id).exists()
    with_alternatives = left_open.filter(steps__alternative__gt=0, steps__author__isnull=True).distinct()
    assert (left_open.count(), with_alternatives.count()) == (101 - REPLAYED_SOLUTIONS, 81)
    assert next_assignment(ann.annotator, gsm8k) is not None

    # The lead's dashboard, as the page reads it.
    client.force_login(get_user_model().objects.get(username="lead"))
    board = client.get(f"/api/projects/{math.pk}/dashboard/").json()
    assert board["agreement"]["alpha"]["estimate"] is not None, board["agreement"]
    rows = {row["label"]: row for row in board["annotators"]}
    assert all(rows[name]["gold_passes"] >= 1 for name in DEMO_ANNOTATORS)
    assert GoldScore.objects.filter(project=math, is_screening=False).count() == len(DEMO_ANNOTATORS)
    assert GoldScore.objects.filter(project=math, is_screening=True, annotator=ann.annotator).count() == 3
    dan = rows[demo.PAUSED[0]]["id"]
    assert board["statuses"] == {
        str(dan): {"status": "paused", "status_reason": demo.PAUSED[1]},
        str(ann.annotator.pk): {"status": "active", "status_reason": "screening score 1.00 >= 0.80 over 3 items"},
    }
    assert len(board["throughput"]["daily"]) >= demo.DAYS_SPREAD

    # The jobs on a tiny random model: what they write is checked here, not the model (the bundled
    # MiniLM trains and scores in tests/scoring/prm/test_checkpoint.py: seconds there, minutes here).
    Project.objects.update(base_model_path=str(tiny_base))
    check_research_jobs(math, gsm8k, monkeypatch)


def screen(annotator, project):
    """Take and submit every screening item the queue hands ``annotator``, rated as its gold."""
    from labeling.quality import screening
    from labeling.work import submission
    from labeling.work.queue import next_assignment

    for unique_id, steps in SCREENING_ITEMS:
        task = next_assignment(annotator, project)
        assert task.solution.is_screening and task.solution.problem.source_id == unique_id
        assert screening.status_of(annotator, project).state == "screening"
        ratings = [{"position": i, "alternative": 0, "value": v, "flagged": False} for i, (_, v) in enumerate(steps)]
        submission.submit(task, finish_reason="found_error" if steps[-1][1] == -1 else "solution", ratings=ratings)
    assert screening.status_of(annotator, project).state == "active"


def check_research_jobs(math, gsm8k, monkeypatch):
    from django.conf import settings

    from labeling.exports import snapshots
    from scoring.models import Checkpoint, GenerationRun, SolutionScore

    # The demo's generation scores the first DEMO_POOL_LIMIT candidates of the 5,268 (about
    # 20 s on a CPU); here the same limit, smaller.
    monkeypatch.setattr(demo_jobs, "DEMO_POOL_LIMIT", 40)
    monkeypatch.setattr(demo_jobs, "DEMO_GENERATION_SIZE", 10)
    queued = start_demo_jobs(log=lambda line: None)  # eager: each job runs as it is queued
    assert len(queued) == 3, queued
    run = GenerationRun.objects.get(project=gsm8k)
    assert (run.state, run.scored, run.total, run.selected) == (GenerationRun.DONE, 40, 40, 10), run.error
    first = list(Solution.objects.filter(project=gsm8k).order_by("pk").values_list("pk", flat=True)[:40])
    assert set(SolutionScore.objects.values_list("solution_id", flat=True)) == set(first)
    assert Solution.objects.filter(project=gsm8k, generation=run.generation).count() == 10
    trained = Checkpoint.objects.get(project=math, parent__isnull=False)
    assert trained.status in (Checkpoint.CHAMPION, Checkpoint.REJECTED), trained.metrics
    assert trained.metrics["heldout"]["steps"] > 0
    assert trained.metrics["train"]["steps"] == demo_jobs.DEMO_TRAIN_SETTINGS["max_steps"]
    assert len(snapshots.list_snapshots(math, settings.STEPMARK_EXPORT_DIR)) == 1
    # Started again, the demo queues nothing twice.
    assert start_demo_jobs(log=lambda line: None) == []
    assert GenerationRun.objects.count() == 1 and Checkpoint.objects.filter(project=math).count() == 2


def start_demo(env):
    """``python -m annotator.demo`` with its output collected by a thread (so pipes never fill)."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "annotator.demo"], cwd=ROOT, env=env,
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )
    lines = []
    threading.Thread(target=lambda: lines.extend(proc.stdout), daemon=True).start()
    return proc, lines


def wait_for(predicate, proc, lines, limit=180):
    deadline = time.monotonic() + limit
    while not predicate():
        assert proc.poll() is None, "the demo exited early:\n" + "".join(lines)
        assert time.monotonic() < deadline, "the demo did not come up:\n" + "".join(lines)
        time.sleep(0.5)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def port_open(port):
    with socket.socket() as s:
        return s.connect_ex(("127.0.0.1", port)) == 0


def process_table():
    """``{pid: (state, ppid, pgrp, start time, command line)}`` of every process now, from /proc."""
    table = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                stat = f.read()
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                command = f.read().replace(b"\0", b" ").decode(errors="replace").strip()
        except OSError:  # it ended meanwhile
            continue
        fields = stat[stat.rindex(")") + 2:].split()  # after "pid (comm) "; comm may hold spaces
        table[int(entry)] = (fields[0], int(fields[1]), int(fields[2]), int(fields[19]), command)
    return table


def started_by(root):
    """``{(pid, start time): command line}`` of every process below ``root`` (children, grandchildren...)."""
    table, found, todo = process_table(), {}, [root]
    while todo:
        parent = todo.pop()
        for pid, (state, ppid, _, start, command) in table.items():
            if ppid == parent and state != "Z":
                found[(pid, start)] = command
                todo.append(pid)
    return found


def outermost(processes, table, matches):
    """The pids of ``processes`` whose command ``matches`` and whose parent's does not: a process
    that has just forked (the Celery worker starting a drawing's ``asy``) has a child of the same
    command line until the child's exec, which is not a second worker."""
    pids = {pid for (pid, _), command in processes.items() if matches(command)}
    return [pid for pid in pids if pid in table and table[pid][1] not in pids]


def still_running(processes, groups):
    """Of ``processes`` (as ``started_by`` gives them) and of the members of ``groups``, those alive
    (a zombie has ended: only its entry waits for whoever adopted it to reap it)."""
    left = {}
    groups = set(groups) - {os.getpgrp()}  # a child left in our own group is found by pid: never kill pytest
    for pid, (state, _, pgrp, start, command) in process_table().items():
        if state != "Z" and ((pid, start) in processes or pgrp in groups):
            left[pid] = command
    return left


def kill_all(processes, groups):
    """So that a failing test leaves nothing behind."""
    for pid in still_running(processes, groups):
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM, signal.SIGKILL],
                         ids=["ctrl-c", "sigterm", "sigkill"])
def test_make_demo_runner_serves_then_stops_everything_it_started(signum, tmp_path_factory):
    """Whatever ends the demo (Ctrl-C, SIGTERM, or the demo process killed outright), every process it
    started is gone after it: web server and its worker, the Celery worker, beat, and anything below."""
    var = tmp_path_factory.getbasetemp() / "demo-var"  # one demo database for the three runs
    port = free_port()
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "STEPMARK_BROKER", "DJANGO_DEBUG")}
    # No data directory named: the demo finds the repository's data/ by itself. No model jobs,
    # and no time to draw the imports' 44 [asy] diagrams (each run is cut at 10 ms, so each fails
    # at once): either would keep the worker busy until the stop's grace ran out (the jobs are
    # test_every_flow_has_something_to_show's, the drawings tests/browser/test_workspace_diagrams.py's;
    # here, the processes).
    env.update(STEPMARK_VAR_DIR=str(var), STEPMARK_DEMO_PORT=str(port), STEPMARK_DEMO_JOBS="0",
               STEPMARK_DIAGRAM_TIMEOUT="0.01")
    first_run = not (var / "stepmark.sqlite3").exists()
    proc, lines = start_demo(env)
    processes, groups = {}, set()
    try:
        wait_for(lambda: any("Press Ctrl-C" in line for line in lines), proc, lines)
        output = "".join(lines)
        # The second run finds what the first one loaded.
        assert ("Created project" if first_run else "Found project") in output
        assert f"http://127.0.0.1:{port}/" in output and "ann       / demo-annotator" in output
        assert "Queued" not in output  # STEPMARK_DEMO_JOBS=0
        assert (var / "stepmark.sqlite3").exists()  # the embedded SQLite, not PostgreSQL
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/accounts/login/") as response:
            assert response.status == 200
        wait_for(lambda: any("ready." in line for line in lines), proc, lines)  # the Celery worker
        # ... and beat: the scheduled jobs (gold scoring every minute) run in the demo.
        wait_for(lambda: any("beat: Starting" in line for line in lines), proc, lines)

        processes = started_by(proc.pid)
        commands = list(processes.values())
        # A short-lived child (a worker's helper) may have ended since started_by read the table.
        table = process_table()
        assert sum("gunicorn" in c for c in commands) >= 2, commands  # the arbiter and its worker, a grandchild
        assert len(outermost(processes, table, lambda c: " worker " in c and "celery" in c)) == 1, commands
        assert len(outermost(processes, table, lambda c: " beat " in c and "celery" in c)) == 1, commands
        groups = {table[pid][2] for pid, _ in processes if pid in table}

        proc.send_signal(signum)
        code = proc.wait(timeout=60)
        if signum == signal.SIGKILL:
            assert code == -signal.SIGKILL  # nothing of the demo ran after this: its children are on their own
        else:
            assert code == 0, "".join(lines)
            assert "Stopped." in "".join(lines)
        deadline = time.monotonic() + 60
        while still_running(processes, groups) and time.monotonic() < deadline:
            time.sleep(0.5)
        assert still_running(processes, groups) == {}, "outlived the demo"
        assert not port_open(port), "the web server outlived the demo"
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        kill_all(processes, groups)
