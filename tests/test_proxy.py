"""deploy/nginx.conf, the production proxy, in front of a real gunicorn with gunicorn.conf.py.

The web process runs sync workers, which must never wait on a slow client: the proxy reads
a whole request before passing it on. Here gunicorn gets one worker, a client starts an
upload and stalls, and another request still gets its answer through the proxy.
"""
import contextlib
import http.client
import os
import secrets
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from bench._server import NGINX, free_port, nginx_config
from tests.conftest import ROOT

# A form post that announces a megabyte and stops after a few bytes. Django reads this body
# (the CSRF check looks for the form's token once the cookie is there), so whoever serves
# the request waits for the rest of it.
STALLED_UPLOAD = (b"POST /accounts/login/ HTTP/1.1\r\nHost: 127.0.0.1\r\nCookie: csrftoken=" + b"a" * 32 + b"\r\n"
                  b"Content-Type: application/x-www-form-urlencoded\r\nContent-Length: 1048576\r\n\r\nusername=")


def one_sync_worker(port):
    """gunicorn with gunicorn.conf.py as production reads it (sync workers), one worker."""
    env = dict(os.environ, DJANGO_DEBUG="0", DJANGO_SECRET_KEY=secrets.token_urlsafe(50),
               DJANGO_ALLOWED_HOSTS="127.0.0.1", DJANGO_SECURE_COOKIES="0")
    return subprocess.Popen([sys.executable, "-m", "gunicorn", "annotator.wsgi", "--bind", f"127.0.0.1:{port}",
                             "--workers", "1", "--log-level", "warning"], cwd=ROOT, env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def stop(*processes):
    for process in processes:
        process.terminate()
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()


def wait_for(port, path, deadline=60):
    end = time.monotonic() + deadline
    while time.monotonic() < end:
        with contextlib.suppress(OSError, http.client.HTTPException):
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
            conn.request("GET", path)
            if conn.getresponse().status < 500:
                return
        time.sleep(0.2)
    raise AssertionError(f"nothing answered on port {port}")


@pytest.fixture
def workdir():
    path = Path(tempfile.mkdtemp(prefix="stepmark-proxy-"))
    yield path
    shutil.rmtree(path, ignore_errors=True)


def test_the_config_is_valid_nginx(workdir):
    config = nginx_config(workdir, free_port(), free_port())
    check = subprocess.run([NGINX, "-t", "-c", str(config)], capture_output=True, text=True, timeout=60)
    assert check.returncode == 0, check.stderr


def test_the_proxy_keeps_a_stalled_upload_off_the_only_sync_worker(workdir):
    web_port, proxy_port = free_port(), free_port()
    web = one_sync_worker(web_port)
    proxy = subprocess.Popen([NGINX, "-c", str(nginx_config(workdir, web_port, proxy_port))],
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    stalled = None
    try:
        wait_for(web_port, "/accounts/login/")
        wait_for(proxy_port, "/accounts/login/")
        stalled = socket.create_connection(("127.0.0.1", proxy_port), timeout=10)
        stalled.sendall(STALLED_UPLOAD)
        time.sleep(0.5)  # let nginx take the connection
        conn = http.client.HTTPConnection("127.0.0.1", proxy_port, timeout=20)
        conn.request("GET", "/accounts/login/", headers={"Host": f"127.0.0.1:{proxy_port}"})
        response = conn.getresponse()
        body = response.read().decode()
        assert response.status == 200 and 'name="password"' in body
    finally:
        if stalled is not None:
            stalled.close()
        stop(proxy, web)


def test_the_same_stalled_upload_blocks_a_sync_worker_without_the_proxy():
    """Guards the test above: gunicorn alone (one sync worker) does wait on the stalled client."""
    web_port = free_port()
    web = one_sync_worker(web_port)
    stalled = None
    try:
        wait_for(web_port, "/accounts/login/")
        stalled = socket.create_connection(("127.0.0.1", web_port), timeout=10)
        stalled.sendall(STALLED_UPLOAD)
        time.sleep(0.5)
        conn = http.client.HTTPConnection("127.0.0.1", web_port, timeout=3)
        conn.request("GET", "/accounts/login/")
        with pytest.raises(TimeoutError):
            conn.getresponse()
    finally:
        if stalled is not None:
            stalled.close()
        stop(web)


def test_the_favicon_comes_through_the_proxy(workdir):
    """Browsers ask every site for /favicon.ico: nginx passes it on and Django answers with the icon."""
    web_port, proxy_port = free_port(), free_port()
    web = one_sync_worker(web_port)
    proxy = subprocess.Popen([NGINX, "-c", str(nginx_config(workdir, web_port, proxy_port))],
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_for(web_port, "/accounts/login/")
        wait_for(proxy_port, "/accounts/login/")
        conn = http.client.HTTPConnection("127.0.0.1", proxy_port, timeout=20)
        conn.request("GET", "/favicon.ico", headers={"Host": f"127.0.0.1:{proxy_port}"})
        response = conn.getresponse()
        body = response.read()
        assert response.status == 200
        assert response.getheader("Content-Type") == "image/x-icon"
        assert "max-age" in response.getheader("Cache-Control")
        assert body == (ROOT / "labeling" / "web" / "favicon.ico").read_bytes()
    finally:
        stop(proxy, web)
