"""The server-rendered pages: login, the home page's projects by role, the built assets."""
import json
import re

import pytest

from labeling.models import Project
from tests.factories import PASSWORD, make_user, make_project

pytestmark = pytest.mark.django_db


@pytest.fixture
def projects():
    active = make_project(name="Active <b>project</b>", instructions="Rate $x^2$ <script>alert(1)</script>")
    inactive = make_project(name="Old project", is_active=False)
    return active, inactive


def test_home_needs_login(client):
    response = client.get("/")
    assert response.status_code == 302
    assert response["Location"] == "/accounts/login/?next=/"


def test_login_page_loads_the_built_frontend_and_logs_in(client):
    page = client.get("/accounts/login/")
    assert page.status_code == 200
    html = page.content.decode()
    script = re.search(r'<script type="module" src="(/static/assets/main-[^"]+\.js)"', html)
    stylesheet = re.search(r'<link rel="stylesheet" href="(/static/assets/main-[^"]+\.css)"', html)
    assert script and stylesheet, html
    # WhiteNoise serves the hashed files (the KaTeX fonts ride along in the CSS).
    js = client.get(script.group(1))
    assert js.status_code == 200 and "javascript" in js["Content-Type"]
    css = b"".join(client.get(stylesheet.group(1)).streaming_content)
    assert b"KaTeX_Main-Regular" in css

    make_user("ann", "annotator")
    response = client.post("/accounts/login/", {"username": "ann", "password": PASSWORD})
    assert response.status_code == 302 and response["Location"] == "/"
    bad = client.post("/accounts/login/", {"username": "ann", "password": "wrong"})
    assert "didn't match" in bad.content.decode()


def test_annotator_sees_active_projects_only(client, projects):
    active, inactive = projects
    client.force_login(make_user("ann", "annotator"))
    html = client.get("/").content.decode()
    assert f'data-project-id="{active.pk}"' in html
    assert f'data-project-id="{inactive.pk}"' not in html
    assert "passes by you" in html and "rated passes" not in html
    assert "/admin/" not in html


def test_lead_and_researcher_see_every_project(client, projects):
    for user in (make_user("lead", "lead"), make_user("research", "researcher")):
        client.force_login(user)
        html = client.get("/").content.decode()
        assert all(f'data-project-id="{p.pk}"' in html for p in projects)
        assert "rated passes" in html
        assert 'href="/api/docs/"' in html


def test_account_without_a_role_sees_no_project(client, projects):
    client.force_login(make_user("nobody"))
    html = client.get("/").content.decode()
    assert "data-project-id" not in html
    assert "no role yet" in html
    assert "/api/docs/" not in html


def test_superusers_get_the_admin_link(client, projects):
    client.force_login(make_user("boss", is_staff=True, is_superuser=True))
    html = client.get("/").content.decode()
    assert 'href="/admin/"' in html
    assert all(f'data-project-id="{p.pk}"' in html for p in projects)  # superusers act in every project


def test_imported_text_is_escaped_and_left_to_render_math(client, projects):
    client.force_login(make_user("lead", "lead"))
    html = client.get("/").content.decode()
    assert "<script>alert(1)</script>" not in html and "<b>project</b>" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    # The description is Markdown made safe on the server: raw HTML shows as text, math is left to the page.
    assert '<div class="instructions" data-math-html><p>Rate $x^2$ &lt;script&gt;' in html


def test_pass_counts(client, projects):
    from django.utils import timezone

    from labeling.models import Assignment, Problem, Solution

    active, _ = projects
    problem = Problem.objects.create(project=active, problem="1+1?", content_hash="p1")
    ann = make_user("ann", "annotator")
    for i, (annotator, state) in enumerate(
        [(None, Assignment.SUBMITTED), (ann.annotator, Assignment.SUBMITTED), (ann.annotator, Assignment.ACTIVE)]
    ):
        solution = Solution.objects.create(project=active, problem=problem, content_hash=f"s{i}")
        Assignment.objects.create(
            project=active, solution=solution, annotator=annotator, state=state,
            submitted_at=timezone.now() if state == Assignment.SUBMITTED else None,
            finish_reason="solution" if state == Assignment.SUBMITTED else None,
        )
    client.force_login(make_user("lead", "lead"))
    # An imported pass without a labeler counts; an unfinished one does not.
    assert "<b>2</b> rated passes" in client.get("/").content.decode()
    client.force_login(ann)
    assert "<b>1</b> passes by you" in client.get("/").content.decode()


def test_annotator_card_says_whether_work_waits_for_them(client, projects):
    """Open slots they never had and their own unfinished pass count; full, had, gold and a pause do not.
    The card says yes or no, never a number (a count tells a gold hand-out from an ordinary one)."""
    from django.utils import timezone

    from labeling.models import Assignment, Problem, Solution
    from labeling.quality import screening
    from labeling.web.pages import waiting_for
    from labeling.work.queue import recount_live_assignments

    active, _ = projects
    active.overlap = 2
    active.save()
    problem = Problem.objects.create(project=active, problem="1+1?", content_hash="p1")
    ann, bea, cal = (make_user(name, "annotator") for name in ("ann", "bea", "cal"))

    def solution(name, *passes, **fields):
        s = Solution.objects.create(project=active, problem=problem, content_hash=name, **fields)
        for user, state in passes:
            done = state == Assignment.SUBMITTED
            Assignment.objects.create(project=active, solution=s, annotator=user.annotator, state=state,
                                      submitted_at=timezone.now() if done else None,
                                      finish_reason="solution" if done else None)
        return s

    solution("open")
    solution("one-slot-left", (bea, Assignment.SUBMITTED))
    solution("full", (bea, Assignment.SUBMITTED), (cal, Assignment.ACTIVE))
    solution("had", (ann, Assignment.SUBMITTED))
    solution("mine-unfinished", (ann, Assignment.ACTIVE), (bea, Assignment.SUBMITTED))
    solution("gold", is_gold=True)
    solution("screening", is_screening=True)
    recount_live_assignments(active)

    client.force_login(ann)
    html = client.get("/").content.decode()
    # "open", "one-slot-left" and ann's own unfinished one wait; yes or no, never how many.
    assert 'data-waiting="yes"' in html and "Work is waiting for you." in html
    assert not re.search(r"<b>[\d,]+</b> waiting", html)
    assert waiting_for(ann, [active.pk]) == {active.pk}
    # cal: "open", "one-slot-left", "had" (ann's pass leaves a slot), and cal's own unfinished "full".
    client.force_login(cal)
    assert 'data-waiting="yes"' in client.get("/").content.decode()
    # Only cal's own unfinished one left for cal: still yes (the held assignment counts).
    for name in ("open", "one-slot-left", "had"):
        Assignment.objects.create(project=active, solution=Solution.objects.get(content_hash=name),
                                  annotator=make_user(f"x-{name}", "annotator").annotator, state=Assignment.ACTIVE)
        Assignment.objects.create(project=active, solution=Solution.objects.get(content_hash=name),
                                  annotator=make_user(f"y-{name}", "annotator").annotator, state=Assignment.ACTIVE)
    recount_live_assignments(active)
    assert waiting_for(cal, [active.pk]) == {active.pk}
    Assignment.objects.filter(annotator=cal.annotator, state=Assignment.ACTIVE).update(
        state=Assignment.SUBMITTED, submitted_at=timezone.now(), finish_reason="solution")
    assert waiting_for(cal, [active.pk]) == set()  # gold and screening items are never "waiting"

    screening.pause(ann.annotator, active, reason="test")
    client.force_login(ann)
    html = client.get("/").content.decode()
    assert 'data-waiting="no"' in html and "No work for you now." in html


def with_create_right(user):
    """``user`` with the site-wide right to create projects (labeling.add_project)."""
    from django.contrib.auth.models import Permission

    user.user_permissions.add(Permission.objects.get(content_type__app_label="labeling", codename="add_project"))
    return user


def test_the_new_project_form_is_for_whoever_may_create_projects_and_starts_from_the_models_defaults(client):
    lead = make_user("lead", "lead")
    client.force_login(lead)
    assert client.get("/projects/new/").status_code == 403  # a lead of projects, without the right
    assert "new-project-link" not in client.get("/").content.decode()

    client.force_login(with_create_right(make_user("founder")))  # no role anywhere yet
    home = client.get("/").content.decode()
    assert 'href="/projects/new/"' in home and "New project" in home
    page = client.get("/projects/new/")
    assert page.status_code == 200
    defaults = json.loads(re.search(r'<script id="project-defaults" type="application/json">(.*?)</script>',
                                    page.content.decode()).group(1))
    fresh = Project()
    for name in ("overlap", "stop_at_first_error", "allow_alternatives", "allow_human_steps", "lease_seconds",
                 "dollar_math", "show_calculator_markup", "is_active"):
        assert defaults[name] == getattr(fresh, name), name
    assert 'data-url="/api/projects/"' in page.content.decode()


def test_a_projects_settings_page_is_for_its_leads_and_researchers(client, projects):
    active, _ = projects
    for role in ("lead", "researcher"):
        client.force_login(make_user(role, role))
        page = client.get(f"/projects/{active.pk}/settings/")
        assert page.status_code == 200
        assert f'data-url="/api/projects/{active.pk}/"' in page.content.decode()
        assert f'href="/projects/{active.pk}/settings/"' in client.get("/").content.decode()
        if role == "lead":  # the lead's dashboard leads there too, and to the members page
            dashboard = client.get(f"/projects/{active.pk}/dashboard/").content.decode()
            assert f'href="/projects/{active.pk}/settings/"' in dashboard
            assert f'href="/projects/{active.pk}/members/"' in dashboard
    client.force_login(make_user("ann", "annotator"))
    assert client.get(f"/projects/{active.pk}/settings/").status_code == 403
    assert "/settings/" not in client.get("/").content.decode()
