"""Every route and page is scoped to the caller's projects: walked as a member and a non-member of each role.

Two projects, ``mine`` and ``theirs``, each with a solution, a submitted pass, a gold proposal,
a generation run, a membership and an annotator. For every route that names a project or a
row of one (found by walking the URL resolver, so a route added later must be listed in
``ROLES_OF`` or this test fails), a person holding role R in ``mine`` only asks for the row of
``theirs``: where R is one of the route's roles the answer must be 404 (the project does not
exist for them), where it is not, a refusal (403/404/405); never a 2xx, a 400 (input read
before the scope) or a 500. A member of ``theirs`` with an allowed role reads it (GET).
And the answer to an id of ``theirs`` is the answer to an id that exists nowhere, byte for
byte, for every method and role: a non-member cannot tell which ids exist elsewhere.
"""
import itertools

import pytest
from django.db import transaction
from django.test import override_settings
from django.urls import get_resolver, reverse
from rest_framework.test import APIClient

from labeling.access.roles import ANNOTATOR, LEAD, RESEARCHER, ROLES, grant_role
from labeling.models import Assignment
from tests.conftest import FAST_HASHERS
from tests.factories import WORLD_ROW_OF, make_user, make_world, walk

A, L, R = ANNOTATOR, LEAD, RESEARCHER

# route name -> the roles that act on it (the policy, written once more as the test's spec)
ROLES_OF = {
    "api:project-members": {L}, "api:project-member": {L},
    "api:project-import": {R}, "api:project-import-preview": {R}, "api:import-job": {R},
    "api:import-job-cancel": {R}, "api:project-export": {L, R}, "api:project-label-sources": {L, R},
    "api:project-next": {A}, "api:assignment-detail": {A}, "api:assignment-draft": {A},
    "api:assignment-submit": {A}, "api:assignment-unsubmit": {A},
    "api:solution-gold": {L}, "api:solution-gold-from-assignment": {L}, "api:solution-gold-propose": {L},
    "api:solution-consensus": {L}, "api:project-gold-proposals": {L}, "api:gold-proposal-approve": {L},
    "api:gold-proposal-reject": {L}, "api:project-quality-settings": {L},
    "api:project-annotator-pause": {L}, "api:project-annotator-resume": {L}, "api:project-my-status": {A},
    "api:project-my-missed": {A}, "api:project-disagreements": {L},
    "api:project-dashboard": {L}, "api:project-annotators": {L}, "api:project-annotator-passes": {L},
    "api:project-flag-settings": {L},
    "api:project-snapshots": {L, R}, "api:project-snapshot-download": {L, R},
    "api:project-generation-stats": {R}, "api:project-diagram": {A, L, R},
    "api:project-detail": {A, L, R}, "api:problem-detail": {L, R}, "api:solution-detail": {L, R},
    "scoring:project-generations": {R}, "scoring:generation-run-detail": {R}, "scoring:generation-run-cancel": {R},
    "scoring:project-checkpoints": {R}, "scoring:project-retrain": {R}, "scoring:project-loop-settings": {R},
    "scoring:checkpoint-report": {R}, "scoring:checkpoint-champion": {R}, "scoring:checkpoint-evaluate": {R},
    "scoring:project-people-vs-prm": {L, R}, "scoring:project-simulations": {R}, "scoring:simulation-detail": {R},
    "scoring:project-judge-settings": {R}, "scoring:project-judge-runs": {R}, "scoring:judge-run-detail": {R},
    "workspace": {A}, "dashboard": {L}, "dashboard-annotator": {L}, "research": {R}, "members": {L},
    "quality": {L}, "my-missed": {A}, "my-passes": {A},
    "api:project-audit": {L, R}, "api:project-reports": {L}, "api:assignment-resolve": {L},
    "api:project-prelabel-settings": {L}, "api:project-source-agreement": {L, R}, "api:project-source-disagreements": {L, R},
    "audit": {L, R}, "inbox": {L}, "project-settings": {L, R},
}
# Routes whose GET may be a 404 for a member too: the sample names no real snapshot or diagram.
NAMED_FILES = {"api:project-snapshot-download", "api:project-diagram"}
# Routes of one's own rows: the member who reads them is the pass's annotator.
OWN_ROWS = {"api:assignment-detail", "api:assignment-draft", "api:assignment-submit", "api:assignment-unsubmit"}
# Routes without a project in them: each caller's own rows or lists filtered to their projects.
UNSCOPED = {"openapi-schema", "api-docs", "api:auth-token", "api:me", "api:me-tokens", "api:me-token",
            "api:me-logout-everywhere", "api:me-assignments", "api:me-counts", "api:me-keys", "api:project-list",
            "api:problem-list", "api:solution-list", "home", "account-tokens", "api:import-formats",
            "favicon",  # the site's icon, the same for anyone (signed in or not)
            "new-project"}  # a site-wide right, no project's role (tests/labeling/web/test_pages.py)
# A method that needs another role than the route's others: (route, method) -> its roles.
METHOD_ROLES = {("api:project-snapshots", "post"): {R}}
METHODS = ["get", "post", "put", "patch", "delete"]


def routes():
    found = [(name, route) for route, name, _ in walk(get_resolver().url_patterns)
             if name and not route.startswith(("admin/", "accounts/"))]
    assert len(found) > 40, "the walk found too few routes: it is broken"
    return found


ROUTES = routes()
SCOPED = [(name, route) for name, route in ROUTES if name not in UNSCOPED]


def test_every_route_is_listed_with_its_roles_or_as_unscoped():
    names = {name for name, _ in ROUTES}
    assert names - set(ROLES_OF) - UNSCOPED == set(), "list the new route's roles in ROLES_OF"
    assert set(ROLES_OF) <= names and UNSCOPED <= names, "a listed route no longer exists"


def url_of(name, route, ids):
    """The route's URL naming ``ids``' rows: the first path segment says what ``pk`` is."""
    head = route.removeprefix("api/").lstrip("^").split("/")[0]
    kwargs = {}
    _, _, sample = next(entry for entry in walk(get_resolver().url_patterns) if entry[1] == name)
    for key in sample:
        if key == "pk":
            kwargs[key] = ids[WORLD_ROW_OF[head]]
        elif key == "annotator_id":
            kwargs[key] = ids["annotator"]
        elif key == "membership_id":
            kwargs[key] = ids["membership"]
        elif key == "sha256":
            kwargs[key] = "0" * 64
        elif key == "name":
            kwargs[key] = "stepmark-none.jsonl.gz"
        else:
            raise AssertionError(f"{name}: a URL argument {key!r} this test does not know")
    return reverse(name, kwargs=kwargs)


_people = itertools.count()


def person(role, project):
    user = make_user(f"{role}-of-{project.pk}-{next(_people)}", projects=[])
    grant_role(user, role, project)
    client = APIClient()
    client.force_login(user)  # a session: the pages and the API alike
    return client


@pytest.fixture(scope="module")
def worlds(django_db_setup, django_db_blocker):
    """Both projects, made once for the module's 277 tests (a third of its time when each made its
    own) in a transaction of the module's that each test's own (a savepoint inside it) rolls back
    to, and that is rolled back after the last of them."""
    with django_db_blocker.unblock(), override_settings(PASSWORD_HASHERS=FAST_HASHERS), transaction.atomic():
        yield make_world("mine"), make_world("theirs")
        transaction.set_rollback(True)


@pytest.fixture
def two(db, export_dir, worlds):
    return worlds


@pytest.mark.parametrize("name, route", SCOPED, ids=[name for name, _ in SCOPED])
@pytest.mark.parametrize("role", ROLES)
def test_a_non_member_finds_nothing_and_a_member_finds_it(two, name, route, role):
    (mine, _), (theirs, their_ids) = two
    url = url_of(name, route, their_ids)
    outsider = person(role, mine)
    for method in METHODS:
        answer = getattr(outsider, method)(url)
        code = answer.status_code
        if code == 405:
            continue
        if role in METHOD_ROLES.get((name, method), ROLES_OF[name]):
            assert code == 404, f"{role} of another project, {method.upper()} {url}: {code}"
        else:
            assert code in (403, 404), f"{role} of another project, {method.upper()} {url}: {code}"
    if role in ROLES_OF[name]:
        if name in OWN_ROWS:
            insider = APIClient()
            insider.force_login(their_ids["worker"])
        else:
            insider = person(role, theirs)
        answer = insider.get(url)
        allowed = {404} if name in NAMED_FILES else set()
        assert answer.status_code not in {403, 500} and (answer.status_code != 404 or 404 in allowed), (
            f"{role} of the project, GET {url}: {answer.status_code}")


NOWHERE = 2 ** 31 - 1  # an id no row holds (the largest a URL may carry)
SUB_IDS = ("annotator", "membership")  # rows named inside a project's URL


def answers(client, url):
    return {method: (answer.status_code, answer.content)
            for method in METHODS for answer in [getattr(client, method)(url)]}


@pytest.mark.parametrize("name, route", SCOPED, ids=[name for name, _ in SCOPED])
def test_an_id_of_another_project_is_answered_as_one_that_exists_nowhere(two, name, route):
    (mine, my_ids), (_, their_ids) = two
    ghost = {kind: NOWHERE if isinstance(pk, int) else pk for kind, pk in their_ids.items()}
    for role in ROLES:
        outsider = person(role, mine)
        assert answers(outsider, url_of(name, route, their_ids)) == answers(outsider, url_of(name, route, ghost)), (
            f"{role}: {name} tells an id of another project from one that exists nowhere")
    # An annotator or membership of another project named under one's own project, by its lead.
    for kind in SUB_IDS:
        if f"<int:{kind}_id>" in route:
            lead = person(LEAD, mine)
            theirs_here, nowhere_here = dict(my_ids, **{kind: their_ids[kind]}), dict(my_ids, **{kind: NOWHERE})
            assert answers(lead, url_of(name, route, theirs_here)) == answers(lead, url_of(name, route, nowhere_here)), (
                f"{name} tells the lead of one project which {kind} ids exist in another")


def test_lists_hold_only_the_callers_projects(two):
    (mine, _), (theirs, their_ids) = two
    for role in ROLES:
        client = person(role, mine)
        listed = {p["id"] for p in client.get(reverse("api:project-list")).json()["results"]}
        assert listed == {mine.pk}, role
        home = client.get(reverse("home")).content.decode()
        assert f'data-project-id="{mine.pk}"' in home and f'data-project-id="{theirs.pk}"' not in home
    for role in (LEAD, RESEARCHER):
        client = person(role, mine)
        for name, key in (("api:problem-list", "problem"), ("api:solution-list", "solution")):
            rows = client.get(reverse(name)).json()["results"]
            assert their_ids[key] not in {row["id"] for row in rows} and rows, (role, name)


def test_an_annotator_of_one_project_rates_nothing_of_another(two):
    (mine, _), (theirs, _) = two
    client = person(ANNOTATOR, mine)
    assert client.post(reverse("api:project-next", args=[theirs.pk])).status_code == 404
    assert client.post(reverse("api:project-next", args=[mine.pk])).status_code == 201


def test_deactivating_a_project_stops_saves_and_submits_with_a_409(two):
    (mine, _), _ = two
    client = person(ANNOTATOR, mine)
    taken = client.post(reverse("api:project-next", args=[mine.pk]))
    assert taken.status_code == 201
    pk = taken.json()["id"]
    mine.is_active = False
    mine.save()
    draft = client.patch(reverse("api:assignment-draft", args=[pk]), {"ratings": [{"position": 0, "value": 1}]},
                         format="json")
    assert draft.status_code == 409 and "deactivated" in draft.json()["detail"]
    submitted = client.post(reverse("api:assignment-submit", args=[pk]), {"finish_reason": "solution"}, format="json")
    assert submitted.status_code == 409
    assert Assignment.objects.get(pk=pk).state == Assignment.ACTIVE


def test_a_superuser_acts_in_every_project(two):
    (_, _), (theirs, _) = two
    root = APIClient()
    root.force_login(make_user("root", projects=[], is_superuser=True, is_staff=True))
    assert root.get(reverse("api:project-dashboard", args=[theirs.pk])).status_code in (200, 503)
    assert root.get(reverse("members", args=[theirs.pk])).status_code == 200
