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

from labeling.access import roles
from labeling.management.commands.load_demo import (
    ACCOUNTS,
    GSM8K_PROJECT,
    MATH_PROJECT,
)
from labeling.models import Assignment, Problem, Project, Rating, Solution, Step
from tests.conftest import ROOT

pytestmark = [pytest.mark.django_db, pytest.mark.slow]

# Four model solutions for each of GSM8K's 1,319 test problems; the gsm8k-examples importer
# documents no skipped entries, and this file has no duplicate solutions.
GSM8K_CANDIDATES = 1319 * 4


def load(data_dir):
    call_command("load_demo", data_dir=str(data_dir), quiet_progress=True, stdout=io.StringIO())


def row_counts():
    return {model._meta.label: model.objects.count() for model in apps.get_models()}


def test_demo_projects_and_accounts(data_dir):
    load(data_dir)
    check_math_project()
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
    assert Solution.objects.filter(project=project).count() == 101
    # 5,192 rated candidate steps plus the steps annotators wrote themselves.
    candidate_steps = Step.objects.filter(solution__project=project).exclude(source="human")
    assert candidate_steps.count() == 5192
    assert Rating.objects.filter(assignment__project=project, step__source="human").exists()


def check_gsm8k_project():
    project = Project.objects.get(name=GSM8K_PROJECT)
    assert project.stop_at_first_error is True
    assert Problem.objects.filter(project=project).count() == 1319
    solutions = Solution.objects.filter(project=project)
    assert solutions.count() == GSM8K_CANDIDATES
    assert not solutions.filter(is_correct=None).exists()  # outcome labels came with the data
    assert not Assignment.objects.filter(project=project).exists()  # nobody has rated them yet


def check_accounts():
    expected = {"ann": ["annotator"], "lead": ["lead"], "research": ["researcher"]}
    for username, held in expected.items():
        user = authenticate(username=username, password=ACCOUNTS[username][0])
        assert user is not None, username
        assert roles.roles_of(user) == held
        assert not user.is_staff
    assert hasattr(get_user_model().objects.get(username="ann"), "annotator")
    admin = authenticate(username="admin", password=ACCOUNTS["admin"][0])
    assert admin is not None and admin.is_superuser and admin.is_staff


def test_running_twice_adds_nothing_and_repairs_accounts(data_dir):
    load(data_dir)
    before = row_counts()
    user = get_user_model().objects.get(username="lead")
    user.set_password("something-else")
    user.save()
    load(data_dir)
    assert row_counts() == before
    assert authenticate(username="lead", password="demo-lead") is not None


def test_missing_data_is_a_clear_error(tmp_path):
    with pytest.raises(CommandError, match=r"Demo data not found: .*math500\.jsonl\.gz.*STEPMARK_DATA"):
        call_command("load_demo", data_dir=str(tmp_path))
    assert not Project.objects.exists()


def test_data_directory_comes_from_the_environment(tmp_path, monkeypatch):
    monkeypatch.setenv("STEPMARK_DATA", str(tmp_path))
    with pytest.raises(CommandError, match=str(tmp_path)):
        call_command("load_demo")


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


def test_make_demo_runner_serves_then_stops_on_ctrl_c_and_runs_again(tmp_path):
    port = free_port()
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "STEPMARK_BROKER", "DJANGO_DEBUG")}
    # No data directory named: the demo finds the repository's data/ by itself.
    env.update(STEPMARK_VAR_DIR=str(tmp_path), STEPMARK_DEMO_PORT=str(port))
    for signum, expect in ((signal.SIGINT, "Created project"), (signal.SIGTERM, "Found project")):
        proc, lines = start_demo(env)
        try:
            wait_for(lambda: any("Press Ctrl-C" in line for line in lines), proc, lines)
            output = "".join(lines)
            assert expect in output  # the second run finds what the first one loaded
            assert f"http://127.0.0.1:{port}/" in output and "ann       / demo-annotator" in output
            assert (tmp_path / "stepmark.sqlite3").exists()  # the embedded SQLite, not PostgreSQL
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/accounts/login/") as response:
                assert response.status == 200
            wait_for(lambda: any("ready." in line for line in lines), proc, lines)  # the Celery worker
            proc.send_signal(signum)
            assert proc.wait(timeout=60) == 0, "".join(lines)
        finally:
            if proc.poll() is None:
                proc.kill()
        assert "Stopped." in "".join(lines)
        assert not port_open(port), "the web server outlived the demo"
