"""Headers and settings (issue #19, item 4).

Found: no Content-Security-Policy on any page; behind TLS no HSTS and no
``SECURE_PROXY_SSL_HEADER`` (``manage.py check --deploy`` warned security.W004 and W008); a
blank or short ``DJANGO_SECRET_KEY`` was accepted outside debug (only an unset one was refused).
The settings are read once per process, so the production ones run in subprocesses here; the
browser's side of the policy (every page working under it) is tests/browser/test_csp.py.
"""
import http.client
import json
import os
import secrets
import subprocess
import sys

import pytest
from django.conf import settings
from django.urls import reverse

from annotator.headers import policy
from bench._server import gunicorn, nginx
from labeling.models import Diagram, DiagramProject
from tests.conftest import ROOT
from tests.factories import client_for, make_project, make_user

HOST = "label.example.org"


def production_env(**extra):
    """A production web process's environment: debug off, a real key, cookies over HTTPS only."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DJANGO_", "STEPMARK_ALLOW"))}
    env.update(DJANGO_DEBUG="0", DJANGO_SECRET_KEY=secrets.token_urlsafe(50), DJANGO_ALLOWED_HOSTS=HOST)
    env.update(extra)
    return env


def run(args, env):
    return subprocess.run([sys.executable, *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)


# Content-Security-Policy -----------------------------------------------------------------


@pytest.mark.django_db
@pytest.mark.parametrize("path", ["/accounts/login/", "/api/auth/token/"])
def test_pages_and_api_answers_carry_the_policy(client, path):
    answer = client.get(path)
    assert answer["Content-Security-Policy"] == policy(settings.SECURE_CSP)


def test_the_policy_allows_only_the_sites_own_files():
    directives = settings.SECURE_CSP
    assert directives["default-src"] == ["'none'"]
    for kind in ("script-src", "style-src", "font-src", "img-src", "connect-src"):
        assert directives[kind] == ["'self'"], kind  # no 'unsafe-inline', no data:, no other host
    assert directives["frame-ancestors"] == ["'none'"] and directives["base-uri"] == ["'none'"]


@pytest.mark.django_db
def test_a_diagram_keeps_its_own_stricter_policy():
    project = make_project()
    diagram = Diagram.objects.create(sha256="a" * 64, code="draw((0,0)--(1,1));", status=Diagram.DRAWN,
                                     svg="<svg xmlns='http://www.w3.org/2000/svg'/>")
    DiagramProject.objects.create(diagram=diagram, project=project)
    answer = client_for(make_user("ann", "annotator")).get(
        reverse("api:project-diagram", args=[project.pk, diagram.sha256]))
    assert answer.status_code == 200
    assert answer["Content-Security-Policy"] == "default-src 'none'; style-src 'unsafe-inline'; sandbox"


# HTTPS behind the proxy ------------------------------------------------------------------

# What the web process answers, by scheme, under the production settings.
SCHEMES = """
import django, json; django.setup()
from django.test import Client
answers = {}
for proto in ("https", "http", None):
    headers = {"X-Forwarded-Proto": proto} if proto else {}
    r = Client().get("/accounts/login/", headers=headers, HTTP_HOST="%s")
    answers[str(proto)] = [r.status_code, r.get("Location"), r.get("Strict-Transport-Security"),
                           "Secure" in str(r.cookies.get("csrftoken", ""))]
print(json.dumps(answers))
""" % HOST


def test_with_secure_cookies_https_is_kept_and_plain_http_redirected():
    done = run(["-c", SCHEMES], production_env(DJANGO_SETTINGS_MODULE="annotator.settings"))
    assert done.returncode == 0, done.stderr
    answers = json.loads(done.stdout.strip().splitlines()[-1])
    # The proxy's X-Forwarded-Proto says https: served, with HSTS for a year and secure cookies.
    assert answers["https"] == [200, None, "max-age=31536000; includeSubDomains", True]
    # Anything else is plain http: sent to https, before any page or cookie.
    for proto in ("http", "None"):
        assert answers[proto][:3] == [301, f"https://{HOST}/accounts/login/", None], proto


def test_without_secure_cookies_plain_http_is_served():
    # DJANGO_SECURE_COOKIES=0: trying Stepmark over plain http (docs/deployment.md) still works.
    done = run(["-c", SCHEMES], production_env(DJANGO_SETTINGS_MODULE="annotator.settings", DJANGO_SECURE_COOKIES="0"))
    assert done.returncode == 0, done.stderr
    assert '"None": [200, null, null, false]' in done.stdout


@pytest.mark.slow
def test_the_shipped_nginx_passes_on_https_and_nothing_else(monkeypatch):
    # A TLS proxy in front of nginx says "https"; a client talking http to nginx gets nginx's
    # own scheme whatever it claims, so the redirect to https holds.
    monkeypatch.setenv("DJANGO_SECURE_COOKIES", "1")
    ready = {"X-Forwarded-Proto": "https"}
    with gunicorn(os.environ["DATABASE_URL"], workers=1, threads=0, ready_path="/accounts/login/",
                  headers=ready) as (web, _), nginx(web) as (proxy, _):
        def get(proto):
            conn = http.client.HTTPConnection("127.0.0.1", proxy, timeout=30)
            conn.request("GET", "/accounts/login/", headers={"X-Forwarded-Proto": proto} if proto else {})
            response = conn.getresponse()
            response.read()
            return response.status, response.getheader("Strict-Transport-Security")

        assert get("https") == (200, "max-age=31536000; includeSubDomains")
        for claim in (None, "http", "https, http", "wss"):
            assert get(claim)[0] == 301, claim


# check --deploy and the secret key -------------------------------------------------------


def test_check_deploy_is_clean_with_the_production_settings():
    done = run(["manage.py", "check", "--deploy", "--fail-level", "WARNING"], production_env())
    assert done.returncode == 0, done.stdout + done.stderr
    assert "System check identified no issues" in done.stdout + done.stderr


@pytest.mark.parametrize("key, why", [
    ("", "is not set"),
    ("   ", "is not set"),
    ("change-me", "is too weak"),
    ("f3a9c0e27b" * 4, "is too weak"),  # 40 characters
    ("x" * 80, "is too weak"),  # 1 distinct character
    ("django-insecure-q8Zr2LmX0pWv5TnYb7Ke9HcJ4sDg1FaQ6uNtR3yBxE0oP", "is too weak"),  # Django's placeholder
], ids=["blank", "spaces", "short", "40-hex", "one-character", "django-placeholder"])
def test_a_blank_or_weak_secret_key_stops_the_start(key, why):
    done = run(["manage.py", "check"], production_env(DJANGO_SECRET_KEY=key))
    assert done.returncode != 0
    assert f"DJANGO_SECRET_KEY {why}" in done.stderr
    assert not key.strip() or key not in done.stderr  # the refusal does not print the key


def test_a_long_random_secret_key_starts_and_debug_needs_none():
    assert run(["manage.py", "check"], production_env(DJANGO_SECRET_KEY=secrets.token_hex(32))).returncode == 0
    assert run(["manage.py", "check"], production_env(DJANGO_SECRET_KEY="", DJANGO_DEBUG="1")).returncode == 0
