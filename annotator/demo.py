"""``python -m annotator.demo`` (``make demo``): Stepmark on one machine, nothing to install.

Runs the embedded configuration: SQLite under ``var/`` and a filesystem Celery broker (no
PostgreSQL, no Redis). It migrates, loads the demo projects and accounts (``load_demo``),
then runs and watches three children: the web server (gunicorn, static files by WhiteNoise),
a Celery worker for both queues and Celery beat. Ctrl-C (or SIGTERM) stops them all and
exits; if one child dies the others are stopped too and the demo exits with an error.

Nothing the demo started outlives it, however it ends:

- Ctrl-C or SIGTERM: each child gets one SIGTERM; after ``STOP_GRACE_SECONDS`` whatever is
  left in each child's process group (the child, and its own children: gunicorn's worker, a
  process a job started) is SIGKILLed. Each child leads a process group of its own
  (``start_new_session``), so that group holds exactly what the child started.
- The demo itself killed (SIGKILL, or a crash): nothing of ours runs any more, so each child
  asked Linux to signal it when its parent dies (``PR_SET_PDEATHSIG``, ``DEATH_SIGNALS``).
  Gunicorn and beat stop on SIGTERM (gunicorn stops its worker, which also leaves by itself
  once its parent is gone); the worker gets SIGKILL, as a solo worker would finish its
  current job first on SIGTERM (minutes, with nobody left to stop it). It has no children of
  its own: ``--pool=solo``, and beat is a child of the demo rather than ``--beat`` inside the
  worker, whose beat process would outlive a killed worker.

Environment set here unless already set: DJANGO_DEBUG=1, STEPMARK_BROKER=filesystem.
``STEPMARK_DEMO_PORT`` picks the port (8000); ``STEPMARK_DEMO_JOBS=0`` queues none of the first
model jobs (``annotator/demo_jobs.py``), which otherwise keep the worker busy for minutes.
"""
import functools
import os
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request

HOST = "127.0.0.1"
STOP_GRACE_SECONDS = 15
# Connections the web server's one worker holds at once: every annotator's browser (a few
# connections each) for a team of up to 32, with room to spare.
DEMO_WORKER_CONNECTIONS = 256


def configure_environment():
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "annotator.settings")
    os.environ.setdefault("DJANGO_DEBUG", "1")
    os.environ.setdefault("STEPMARK_BROKER", "filesystem")
    # The demo serves plain http on localhost: secure-only cookies would never be sent back.
    os.environ.setdefault("DJANGO_SECURE_COOKIES", "0")


def prepare():
    """Migrate, load the demo data, queue the first research jobs, the default schedule (all safe to repeat)."""
    import django
    from django.conf import settings
    from django.core.management import call_command

    django.setup()
    db = settings.DATABASES["default"]
    print(f"Database: {db['ENGINE'].rsplit('.', 1)[-1]} {db['NAME']}", flush=True)
    call_command("migrate", interactive=False, verbosity=1)
    call_command("load_demo")
    # Loading graded answers in child processes of this one (labeling/grading/pool.py): end them
    # now, or they would live on beside the demo's servers, and outlive a demo killed outright.
    from labeling.grading import pool

    pool.shutdown()
    if os.environ.get("STEPMARK_DEMO_JOBS", "1") != "0":  # 0: a quick start, the research pages empty
        from annotator.demo_jobs import start_demo_jobs

        start_demo_jobs(log=lambda line: print(line, flush=True))
    # The default beat schedule, which the demo's beat runs: among it the job that
    # scores gold passes every minute (labeling/quality/gold_passes.py).
    call_command("setup_schedules")


# What each child gets when the demo process dies without stopping it (see the module docstring).
DEATH_SIGNALS = {"web": signal.SIGTERM, "worker": signal.SIGKILL, "beat": signal.SIGTERM}


def children(port):
    """The commands of the supervised processes."""
    web = [
        sys.executable, "-m", "gunicorn", "annotator.wsgi:application",
        "--bind", f"{HOST}:{port}",
        # One process with threads: SQLite has a single writer anyway.
        "--workers", "1", "--threads", "4",
        # Room for every client's keep-alive connection: under gunicorn.conf.py's cap (8 for
        # 4 threads) clients past the 8th waited for a first answer until others closed theirs
        # (docs/performance.md#the-embedded-default-make-demo).
        "--keep-alive", "2", "--worker-connections", str(DEMO_WORKER_CONNECTIONS),
        "--graceful-timeout", "10",
    ]
    worker = [
        sys.executable, "-m", "celery", "-A", "annotator", "worker",
        "-Q", "default,gpu", "--pool=solo", "--loglevel=INFO", "--hostname", "demo@%h",
    ]
    # Beat (settings.CELERY_BEAT_SCHEDULER: the schedule in the database) runs the scheduled
    # jobs, gold scoring every minute among them; a child of the demo, not of the worker.
    beat = [sys.executable, "-m", "celery", "-A", "annotator", "beat", "--loglevel=INFO"]
    return {"web": web, "worker": worker, "beat": beat}


def die_with_parent(parent, signum):
    """In the child, between fork and exec: get ``signum`` when the demo process dies (Linux).

    The setting outlives exec; a parent that died before it was made is caught by the check
    after it (the child has been adopted by then).
    """
    try:
        import ctypes

        PR_SET_PDEATHSIG = 1
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, int(signum))
    except (OSError, AttributeError):
        return  # not Linux: Ctrl-C and SIGTERM to the demo still stop the children
    if os.getppid() != parent:
        os._exit(1)


def start(name, cmd):
    """Start a child in a session (so a process group) of its own, dying with the demo."""
    return subprocess.Popen(cmd, start_new_session=True,
                            preexec_fn=functools.partial(die_with_parent, os.getpid(), DEATH_SIGNALS[name]))


def exited(proc):
    """Whether ``proc`` has exited, without reaping it: while it is unreaped its process group
    id cannot be taken by a new process, so ``stop`` can still signal the group safely."""
    if proc.returncode is not None:
        return True
    return os.waitid(os.P_PID, proc.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None


def wait_until_serving(url, process, stopped, timeout=60):
    """True once ``url`` answers; False if ``process`` exits, ``stopped()`` or time runs out."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if exited(process) or stopped():
            return False
        try:
            with urllib.request.urlopen(url, timeout=2) as response:
                if response.status == 200:
                    return True
        except (urllib.error.URLError, OSError):
            pass
        time.sleep(0.5)
    return False


def stop(processes):
    """SIGTERM every live child, wait for them, then SIGKILL whatever is left in their process
    groups: a child that outlived the grace period, and anything a child left behind."""
    for proc in processes.values():
        if not exited(proc):
            os.kill(proc.pid, signal.SIGTERM)  # not Popen.send_signal, whose poll() may reap it
    deadline = time.monotonic() + STOP_GRACE_SECONDS
    for name, proc in processes.items():
        while not exited(proc) and time.monotonic() < deadline:
            time.sleep(0.1)
        if not exited(proc):
            print(f"{name} did not stop in {STOP_GRACE_SECONDS}s; killing it", flush=True)
    for proc in processes.values():
        try:
            os.killpg(proc.pid, signal.SIGKILL)  # the group's leader is not reaped yet: still ours
        except (ProcessLookupError, PermissionError):
            pass
        proc.wait()


# What to try first, one line per role (printed under the accounts).
FIRST_STEPS = (
    ("Try first as ann: open the MATH-500 project, rate each step (+1, 0, -1) and its alternatives, "
     "write your own step where every candidate is wrong."),
    ("As lead: open the MATH-500 dashboard: agreement (alpha) of bea, cal and dan over five days, "
     "their gold scores, and dan paused with the reason."),
    ("As research: download MATH-500's snapshot, open GSM8K's first generation (ready within a minute) "
     "and watch MATH-500's retrained checkpoint finish (within a minute) on their research pages."),
)


def banner(url):
    from labeling.management.commands.load_demo import ACCOUNTS

    lines = [
        "",
        f"Stepmark demo running at {url}",
        "Log in as (username / password):",
        *(f"  {u:<9} / {p:<16} {', '.join(roles) or 'superuser (admin)'}" for u, (p, roles, _) in ACCOUNTS.items()),
        *FIRST_STEPS,
        "Press Ctrl-C to stop.",
        "",
    ]
    print("\n".join(lines), flush=True)


def main():
    configure_environment()
    prepare()
    port = int(os.environ.get("STEPMARK_DEMO_PORT", "8000"))
    url = f"http://{HOST}:{port}/"

    stopping = False

    def request_stop(signum, frame):
        nonlocal stopping
        stopping = True

    # The children run in their own sessions: a terminal Ctrl-C (or a signal to our process
    # group) reaches only us, and we stop them with one SIGTERM each. Two signals at once
    # (SIGINT from the terminal, SIGTERM from us) make gunicorn's threaded worker hang until
    # its graceful timeout.
    signal.signal(signal.SIGINT, request_stop)
    signal.signal(signal.SIGTERM, request_stop)

    processes = {name: start(name, cmd) for name, cmd in children(port).items()}
    status = 0
    try:
        if wait_until_serving(url + "accounts/login/", processes["web"], lambda: stopping):
            banner(url)
        elif not stopping:
            print(f"The web server did not come up on {url} (is the port in use? set STEPMARK_DEMO_PORT)", flush=True)
            status = 1
        while not stopping and status == 0:
            for name, proc in processes.items():
                if exited(proc):
                    print(f"The {name} process exited; stopping the demo.", flush=True)
                    status = 1
            time.sleep(0.5)
    finally:
        print("Stopping the web server, the worker and beat...", flush=True)
        stop(processes)
    print("Stopped.", flush=True)
    return status


if __name__ == "__main__":
    sys.exit(main())
