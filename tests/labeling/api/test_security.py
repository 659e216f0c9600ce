"""Every /api/ route refuses anonymous users and users without a role.

The routes are found by walking the URL resolver, so an endpoint added later is covered
without anyone remembering to add it here. A route open to more people must be listed in
``OPEN_TO_ANONYMOUS`` or ``OPEN_TO_ANY_USER`` with the reason.
"""

import pytest
from django.conf import settings
from django.urls import get_resolver, reverse
from rest_framework.test import APIClient

from tests.factories import make_user, walk

METHODS = ["get", "post", "put", "patch", "delete"]

# route name -> why it is open
OPEN_TO_ANONYMOUS = {"api:auth-token": "the login itself: username and password in, token out"}
OPEN_TO_ANY_USER = {
    "api:me": "tells a signed-in user which roles they have (none, for a new account)",
    "api:me-tokens": "one's own API tokens: any account may script the API",
    "api:me-token": "revoking one of one's own tokens",
    "api:me-logout-everywhere": "ending one's own tokens and sessions",
    "openapi-schema": "API documentation, login required",
    "api-docs": "API documentation, login required",
}


def api_routes():
    routes = [(route, name, kwargs) for route, name, kwargs in walk(get_resolver().url_patterns)
              if route.lstrip("^").startswith("api/")]
    assert routes, "found no /api/ routes: the walker is broken"
    return routes


ROUTES = api_routes()


def test_every_api_route_is_named_so_it_can_be_checked():
    unnamed = [route for route, name, _ in ROUTES if not name]
    assert not unnamed, f"give these routes a name: {unnamed}"


def test_the_exemptions_still_exist():
    names = {name for _, name, _ in ROUTES}
    assert set(OPEN_TO_ANONYMOUS) | set(OPEN_TO_ANY_USER) <= names


def test_the_walk_finds_the_researcher_endpoints():
    names = {name for _, name, _ in ROUTES}
    assert {"api:project-list", "api:project-detail", "api:project-import", "api:project-export",
            "api:problem-list", "api:solution-detail"} <= names


def refused(response, *, anonymous):
    if response.status_code == 302:  # a plain Django view sending a visitor to the login page
        return anonymous and response["Location"].startswith(settings.LOGIN_URL)
    # 405: the method is not served at all; 401/403: refused. Never 404 (that would mean the
    # view looked something up before checking who asks) and never 2xx.
    return response.status_code in ({401, 403, 405} if anonymous else {403, 405})


@pytest.mark.parametrize("route, name, kwargs", ROUTES, ids=[r[1] or r[0] for r in ROUTES])
def test_anonymous_and_roleless_users_are_refused(db, project, route, name, kwargs):
    url = reverse(name, kwargs=kwargs)
    nobody = APIClient()
    nobody.force_authenticate(make_user("nobody"))
    for method in METHODS:
        if name not in OPEN_TO_ANONYMOUS:
            answer = getattr(APIClient(), method)(url)
            assert refused(answer, anonymous=True), f"anonymous {method.upper()} {url}: {answer.status_code}"
        if name not in OPEN_TO_ANONYMOUS and name not in OPEN_TO_ANY_USER:
            answer = getattr(nobody, method)(url)
            assert refused(answer, anonymous=False), f"role-less {method.upper()} {url}: {answer.status_code}"


@pytest.mark.parametrize("name, method", [
    ("api:project-list", "post"),
    ("api:project-detail", "patch"),
    ("api:project-import", "post"),
    ("api:project-export", "get"),
    ("api:problem-list", "get"),
    ("api:problem-detail", "get"),
    ("api:solution-list", "get"),
    ("api:solution-detail", "get"),
])
def test_annotators_are_refused_lead_and_researcher_endpoints(clients, project, name, method):
    url = reverse(name, kwargs={"pk": project.pk} if "list" not in name else {})
    assert getattr(clients["annotator"], method)(url).status_code == 403


def test_leads_cannot_import(clients, project):
    assert clients["lead"].post(reverse("api:project-import", args=[project.pk])).status_code == 403


def test_the_token_endpoint_gives_nothing_without_a_password(db):
    make_user("eve", "researcher")
    answer = APIClient().post(reverse("api:auth-token"), {"username": "eve"})
    assert answer.status_code == 400
    assert "token" not in answer.json()


def test_superusers_pass_every_role_check(db, project):
    staff = APIClient()
    staff.force_authenticate(make_user("boss", is_staff=True, is_superuser=True))
    assert staff.get(reverse("api:project-export", args=[project.pk])).status_code == 200
    assert staff.get(reverse("api:solution-list")).status_code == 200
    assert staff.post(reverse("api:project-import", args=[project.pk])).status_code == 400  # no file
