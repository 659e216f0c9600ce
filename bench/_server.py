"""Helpers for benchmarks that talk HTTP to a real server: a free port, gunicorn as a child.

Not a benchmark itself (the leading underscore keeps ``python -m bench`` from running it).
"""
import contextlib
import http.client
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def free_port():
    """A TCP port on 127.0.0.1 that nobody listens on right now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def server_env(database_url, **extra):
    """The environment of a production-like web process: DEBUG off, a real secret key."""
    env = dict(os.environ)
    # Plain http on the loopback unless the caller's environment says otherwise: secure cookies
    # would also redirect every request to https.
    env.setdefault("DJANGO_SECURE_COOKIES", "0")
    env.update(
        DATABASE_URL=database_url,
        DJANGO_DEBUG="0",
        DJANGO_SECRET_KEY=secrets.token_urlsafe(50),
        DJANGO_ALLOWED_HOSTS="127.0.0.1",
        DJANGO_SETTINGS_MODULE="annotator.settings",
    )
    env.update(extra)
    return env


@contextlib.contextmanager
def gunicorn(database_url, *, workers, threads, ready_path, headers=None, timeout=90, extra_args=(), env=None,
             log_path=None):
    """Run ``gunicorn annotator.wsgi`` on a free port; yield ``(port, pid)`` once it answers.

    ``ready_path`` is GET until it answers 200 with ``headers``. The server gets SIGTERM (a
    graceful stop: requests in flight finish) when the block ends; its log is printed if it
    failed to start. ``env`` adds to its environment; its log (stderr) goes to ``log_path`` if
    given and is kept there, else to a temporary file.
    """
    port = free_port()
    log = (open(log_path, "wb") if log_path else
           tempfile.NamedTemporaryFile(prefix="stepmark-gunicorn-", suffix=".log", delete=False))
    command = [
        sys.executable, "-m", "gunicorn", "annotator.wsgi",
        "--bind", f"127.0.0.1:{port}",
        "--workers", str(workers),
        # threads=0: sync workers (one request at a time each, a connection per request, so
        # the kernel's accept queue spreads the load); otherwise gthread with keep-alive.
        *(["--worker-class", "sync"] if not threads else ["--worker-class", "gthread", "--threads", str(threads)]),
        "--graceful-timeout", "30",
        "--log-level", "warning",
        "--error-logfile", log.name,
        *extra_args,
    ]
    process = subprocess.Popen(command, cwd=ROOT, env=server_env(database_url, **(env or {})), stdout=log, stderr=log)
    try:
        _wait_ready(process, port, ready_path, headers or {}, timeout, log.name)
        yield port, process.pid
    finally:
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
            try:
                process.wait(timeout=40)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        log.close()
        if not log_path:
            os.unlink(log.name)


NGINX = shutil.which("nginx") or "/usr/sbin/nginx"


def nginx_config(workdir, upstream_port, listen_port):
    """A whole nginx.conf serving deploy/nginx.conf on ``listen_port`` in front of ``upstream_port``.

    The compose names (``web:8000``, port 80) become local ports; everything nginx writes
    (pid, error log, temporary files) stays under ``workdir``. Returns the file's path.
    """
    workdir = Path(workdir)
    site = (ROOT / "deploy" / "nginx.conf").read_text()
    if "server web:8000;" not in site or "listen 80;" not in site:
        raise ValueError("deploy/nginx.conf no longer names web:8000 and port 80")
    site = site.replace("server web:8000;", f"server 127.0.0.1:{upstream_port};")
    (workdir / "site.conf").write_text(site.replace("listen 80;", f"listen 127.0.0.1:{listen_port};"))
    temp = "\n".join(f"    {kind}_temp_path {workdir}/{kind};" for kind in
                     ("client_body", "proxy", "fastcgi", "uwsgi", "scgi"))
    config = workdir / "nginx.conf"
    config.write_text(f"""daemon off;
pid {workdir}/nginx.pid;
error_log {workdir}/error.log warn;
events {{}}
http {{
    access_log off;
{temp}
    include {workdir}/site.conf;
}}
""")
    return config


@contextlib.contextmanager
def nginx(upstream_port):
    """Run nginx with deploy/nginx.conf in front of ``upstream_port``; yield ``(port, pid)`` once it answers."""
    port = free_port()
    workdir = tempfile.mkdtemp(prefix="stepmark-nginx-")
    process = subprocess.Popen([NGINX, "-c", str(nginx_config(workdir, upstream_port, port))],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 30
        while True:
            if process.poll() is not None:
                raise SystemExit(f"nginx did not start: {Path(workdir, 'error.log').read_text(errors='replace')}")
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise SystemExit("nginx did not listen") from None
                time.sleep(0.1)
        yield port, process.pid
    finally:
        process.terminate()
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        shutil.rmtree(workdir, ignore_errors=True)


def _wait_ready(process, port, path, headers, timeout, log_name):
    deadline = time.monotonic() + timeout
    last = None
    while time.monotonic() < deadline:
        if process.poll() is not None:
            break
        try:
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
            conn.request("GET", path, headers=headers)
            response = conn.getresponse()
            response.read()
            conn.close()
            if response.status == 200:
                return
            last = f"HTTP {response.status}"
        except OSError as exc:
            last = repr(exc)
        time.sleep(0.2)
    sys.stderr.write(Path(log_name).read_text(errors="replace")[-4000:])
    raise SystemExit(f"gunicorn did not answer {path} with 200 (last: {last})")


TICK = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid):
    """User + system CPU seconds ``pid`` has used (0 when it is gone)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / TICK


def children(pid):
    """Process ids whose parent is ``pid`` (gunicorn's workers)."""
    found = []
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            try:
                stat = Path(entry.path, "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(stat[1]) == pid:
                found.append(int(entry.name))
    return found
