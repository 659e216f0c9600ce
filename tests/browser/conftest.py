"""Real Chromium (Playwright) against a live Django server on the test database.

The pages load the built frontend (frontend/dist, `cd frontend && npm run build`), served by
the live server's static handler. Tests that use ``live_server`` need transactional database
access (``pytest.mark.django_db(transaction=True)``): the server thread sees only committed
rows.
"""
import json
import os

import pytest

from tests.conftest import ROOT

MANIFEST = ROOT / "frontend" / "dist" / ".vite" / "manifest.json"
SCREENSHOTS = ROOT / "tests" / "screenshots"


@pytest.fixture(scope="module")
def browser(chromium):
    """The test process's Chromium (``chromium``, tests/conftest.py), once the frontend is built.

    A context a test left open is closed with its module, as when each module had a Chromium of
    its own: its pages would otherwise go on running (and calling the live server) in the tests
    after it.
    """
    entries = json.loads(MANIFEST.read_text()) if MANIFEST.exists() else {}
    assert "src/workspace.js" in entries, "The frontend is not built: cd frontend && npm run build"
    yield chromium
    for context in chromium.contexts:
        context.close()


@pytest.fixture
def context(browser):
    """A fresh browser profile (cookies, localStorage) with a 1280x720 window."""
    context = browser.new_context(viewport={"width": 1280, "height": 720})
    context.set_default_timeout(10000)
    yield context
    context.close()


@pytest.fixture
def axe_context(browser):
    """Like ``context``, with the page's Content-Security-Policy bypassed so that axe-core
    (tests/browser/axe.py) can be injected; for accessibility checks only."""
    context = browser.new_context(viewport={"width": 1280, "height": 720}, bypass_csp=True)
    context.set_default_timeout(10000)
    yield context
    context.close()


@pytest.fixture
def page(context):
    page = context.new_page()
    errors = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    yield page
    assert not errors, f"JavaScript errors on the page: {errors}"


def log_in(page, live_server, username, next_path="/"):
    """Open ``next_path`` logged in as ``username`` (None: open nothing, the test goes on to a page
    of its own): a session made on the server (Django's ``force_login``) whose cookie the page's
    context is given.

    The login form itself is tested through the page where it is the subject: its way back to
    ``next`` (test_workspace_states.py), the lockout (test_login_lockout.py), the demo accounts
    (test_demo_pages.py). Here it would be two more page loads in every test, and the home page
    it led to a third where the test opens another.
    """
    from django.conf import settings
    from django.contrib.auth import get_user_model
    from django.test import Client

    client = Client()
    client.force_login(get_user_model().objects.get(username=username))
    session = client.cookies[settings.SESSION_COOKIE_NAME].value
    page.context.add_cookies([{"name": settings.SESSION_COOKIE_NAME, "value": session, "url": live_server.url}])
    if next_path is not None:
        page.goto(f"{live_server.url}{next_path}")


def screenshot(target, name, **options):
    """Save ``tests/screenshots/<name>.png`` of a page or an element (``options``: Playwright's, such
    as ``full_page``) when screenshots are asked for: ``STEPMARK_SCREENSHOTS=1`` (``make
    screenshots``, docs/screenshots.md). They are for a person to look at, never compared, and
    encoding them was a minute of the suite's CPU, so a plain run makes none."""
    if os.environ.get("STEPMARK_SCREENSHOTS") != "1":
        return
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    target.screenshot(path=str(SCREENSHOTS / f"{name}.png"), **options)


def workspace_url(live_server, project):
    return f"{live_server.url}/projects/{project.pk}/work/"


def open_workspace(page, live_server, project):
    page.goto(workspace_url(live_server, project))
    page.wait_for_selector('#workspace[data-state="working"]')


def stored_ratings(username):
    """{(position, alternative): (value, flagged)} the server holds for ``username``."""
    from labeling.models import Rating

    rows = Rating.objects.filter(assignment__annotator__user__username=username).select_related("step")
    return {(r.step.position, r.step.alternative): (r.value, r.flagged) for r in rows}


def current(page):
    """``(position, alternative)`` of the step the workspace has the keyboard on."""
    node = page.locator(".ws-step.current")
    return node.get_attribute("data-position"), node.get_attribute("data-alternative")


def wait_saved(page):
    page.wait_for_selector('#workspace[data-save="saved"]')
