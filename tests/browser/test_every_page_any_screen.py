"""Every page of a project fits a phone and 200% zoom: the pages the other small-screen tests do not open.

The workspace and home page (test_workspace_small_screens.py) and the dashboard and research
page (test_charts.py) are measured there; here the drill-down, the quality page, an annotator's
gold results, the members page and the project's settings, as a phone (390x844) and as a 1280x720 window at 200% zoom
(a 640x360 CSS viewport at device scale 2): nothing scrolls sideways, and no serious or critical
axe-core violation.
"""
import pytest

from labeling.access.roles import ANNOTATOR, LEAD, grant_role
from tests.factories import make_project, make_solution, make_user, rated_pass

from .axe import axe_violations
from .conftest import log_in, screenshot
from .test_charts import fits
from .test_workspace_small_screens import PHONE

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

ZOOM_200 = dict(viewport={"width": 640, "height": 360}, device_scale_factor=2)
LONG_STEP = "So $x = 2$, because subtracting $3$ from both sides of $2x + 3 = 7$ leaves $2x = 4$, halved."


@pytest.mark.parametrize("emulation", [PHONE, ZOOM_200], ids=["phone-390", "zoom-200"])
def test_lead_and_annotator_pages_fit_without_sideways_scrolling(browser, live_server, emulation):
    project = make_project(name="A project with a rather long name to wrap on a phone", overlap=2)
    both = make_user("lena-the-lead-and-annotator", projects=[])
    grant_role(both, LEAD, project)
    annotator = grant_role(both, ANNOTATOR, project)
    other = grant_role(make_user("bob", projects=[]), ANNOTATOR, project)
    solution = make_solution(project, ["We have $2x + 3 = 7$.", LONG_STEP, "# Answer\n\n2"],
                             problem="Find $x$ if $2x + 3 = 7$.", answer="2")
    rated_pass(solution, annotator, [1, 1, 1])
    rated_pass(solution, other, [1, -1])
    context = browser.new_context(bypass_csp=True, **emulation)
    context.set_default_timeout(10000)
    page = context.new_page()
    try:
        log_in(page, live_server, "lena-the-lead-and-annotator")
        pages = {
            "drilldown": (f"/projects/{project.pk}/dashboard/annotators/{annotator.pk}/", '#dashboard[data-state="ready"]'),
            "quality": (f"/projects/{project.pk}/quality/", '#quality[data-state="ready"]'),
            "gold-results": (f"/projects/{project.pk}/checks/", "main"),
            "members": (f"/projects/{project.pk}/members/", '[data-testid="members"]'),
            "settings": (f"/projects/{project.pk}/settings/", '#project-form[data-state="ready"]'),
            "tokens": ("/account/tokens/", "main"),
        }
        for name, (path, ready) in pages.items():
            page.goto(live_server.url + path)
            page.wait_for_selector(ready)
            screenshot(page, f"any-screen-{name}-{emulation['viewport']['width']}", full_page=True)
            assert fits(page), f"{name} scrolls sideways at {emulation['viewport']}"
            assert axe_violations(page) == [], name
    finally:
        context.close()
