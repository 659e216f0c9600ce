"""How long a newcomer waits after ``make demo``: first page, then the researcher page's first jobs.

    .venv/bin/python -m bench.demo_start [--limit 600] [--keep]

Starts ``python -m annotator.demo`` (what ``make demo`` runs once the virtual environment and
the frontend are built) on a fresh, empty var folder (a temporary ``STEPMARK_VAR_DIR``: a new
SQLite database and broker, as in a clean clone) and a free port, then prints the seconds from
that start to: the login page answering, the snapshot of MATH-500 existing, GSM8K's first
generation being done (with how many candidates it scored), and MATH-500's retrained
checkpoint being judged (champion or rejected). It reads the demo's SQLite read-only and stops
the demo with SIGTERM once everything is there, or after ``--limit`` seconds.
"""
import argparse
import os
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def serving(url):
    try:
        with urllib.request.urlopen(url, timeout=2) as response:
            return response.status == 200
    except (urllib.error.URLError, OSError):
        return False


def query(database, sql):
    """The first row of ``sql`` on the demo's database, None while it (or the table) is not there yet."""
    if not database.exists():
        return None
    try:
        with sqlite3.connect(f"file:{database}?mode=ro", uri=True, timeout=1) as db:
            return db.execute(sql).fetchone()
    except sqlite3.Error:
        return None


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limit", type=float, default=600, help="give up after this many seconds")
    parser.add_argument("--keep", action="store_true", help="keep the var folder (its demo.log holds the demo's output)")
    args = parser.parse_args(argv)

    var = Path(tempfile.mkdtemp(prefix="stepmark-demo-bench-"))
    port = free_port()
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "STEPMARK_BROKER", "REDIS_URL")}
    env.update(STEPMARK_VAR_DIR=str(var), STEPMARK_DEMO_PORT=str(port))
    database = var / "stepmark.sqlite3"
    lines = []
    start = time.monotonic()
    proc = subprocess.Popen([sys.executable, "-m", "annotator.demo"], cwd=ROOT, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    threading.Thread(target=lambda: lines.extend(proc.stdout), daemon=True).start()

    checks = {
        "first page served": lambda: serving(f"http://127.0.0.1:{port}/accounts/login/"),
        "MATH-500 snapshot written": lambda: any((var / "exports").rglob("*.jsonl.gz")) if (var / "exports").exists() else False,
        "GSM8K generation done": lambda: query(
            database, "SELECT 'scored ' || scored || ' of ' || total || ', selected ' || selected "
                      "FROM scoring_generationrun WHERE state = 'done'"),
        "MATH-500 checkpoint trained": lambda: query(
            database, "SELECT 'status ' || status FROM scoring_checkpoint "
                      "WHERE parent_id IS NOT NULL AND status IN ('champion', 'rejected')"),
    }
    seen = {}
    try:
        while len(seen) < len(checks) and time.monotonic() - start < args.limit:
            if proc.poll() is not None:
                print("The demo exited early:\n" + "".join(lines), file=sys.stderr)
                return 1
            for name, check in checks.items():
                if name not in seen:
                    found = check()
                    if found:
                        seen[name] = (time.monotonic() - start, found)
                        detail = f" ({found[0]})" if isinstance(found, tuple) else ""
                        print(f"{seen[name][0]:6.1f} s  {name}{detail}", flush=True)
            time.sleep(0.5)
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()
    for name in checks:
        if name not in seen:
            print(f"  not within {args.limit:.0f} s: {name}")
    if args.keep:
        (var / "demo.log").write_text("".join(lines), encoding="utf-8")
        print(f"The demo's var folder and output: {var}")
    else:
        shutil.rmtree(var, ignore_errors=True)
    return 0 if len(seen) == len(checks) else 1


if __name__ == "__main__":
    sys.exit(main())
