"""The Content-Security-Policy in real Chromium: every page works under it with no violation.

The policy (settings.SECURE_CSP) allows only Stepmark's own scripts, styles, fonts and images.
Each page is loaded as the person who uses it and waited on until its script has drawn it;
Chromium reports a blocked script, style, font or image both as a ``securitypolicyviolation``
event (collected by an init script) and on the console, and the test fails on either. A page
that did not get the header would pass that check vacuously, so each one's header is checked
too, and one test shows Chromium refusing an inline script under it.
"""
import pytest
from django.conf import settings

from annotator.headers import policy
from labeling.diagrams.blocks import diagram_hash
from labeling.models import Diagram, DiagramProject
from tests.factories import make_annotator, make_solution, make_user, rated_pass, make_project

from .conftest import log_in, screenshot

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

CODE = "draw((0,0)--(1,1));"
SVG = ('<svg xmlns="http://www.w3.org/2000/svg" width="120" height="80" viewBox="0 0 120 80">'
       '<path d="M0 80L120 0" stroke="black" style="stroke-width:2"/></svg>')
# Records each violation with where it came from; Playwright runs it before the page's own scripts.
COLLECT = """window.__csp = [];
document.addEventListener('securitypolicyviolation', (e) =>
  window.__csp.push(`${e.effectiveDirective} blocked ${e.blockedURI || 'inline'} at ${e.sourceFile}:${e.lineNumber}`));"""


@pytest.fixture
def site(settings):
    """A project with math and a drawn diagram, a rated pass, and one person of each kind."""
    project = make_project(name="Geometry", overlap=2)
    solution = make_solution(project, ["Let $x^2 + y^2 = r^2$.", "So $$\\frac{a}{b} = \\sqrt{2}$$."],
                             problem=f"Find $x$ in the figure.\n[asy]{CODE}[/asy]", generation=0, rank=1)
    diagram = Diagram.objects.create(sha256=diagram_hash(CODE), code=CODE, status=Diagram.DRAWN, svg=SVG)
    DiagramProject.objects.create(diagram=diagram, project=project)
    bob = make_annotator("bob")
    rated_pass(solution, bob, [1, -1], seconds=30)
    make_user("ann", "annotator")
    make_user("boss", "annotator", "lead", "researcher", is_staff=True, is_superuser=True)
    return project, diagram, bob


@pytest.fixture
def watched(page):
    """The page with violations collected: ``watched.violations()`` after each visit."""
    console = []
    page.add_init_script(COLLECT)
    page.on("console", lambda m: console.append(m.text) if "Content Security Policy" in m.text else None)

    def violations():
        return console + page.evaluate("window.__csp || []")

    page.violations = violations
    return page


def visit(page, url, ready, directives=None):
    """Open ``url``, check it carries the site's policy (or ``directives``), wait for ``ready``;
    the violations seen."""
    response = page.goto(url)
    assert response.status == 200, url
    assert response.headers["content-security-policy"] == policy(directives or settings.SECURE_CSP), url
    page.wait_for_selector(ready)
    return page.violations()


def test_the_login_page_works_under_the_policy(watched, live_server, site):
    assert visit(watched, f"{live_server.url}/accounts/login/", "form #id_username") == []
    log_in(watched, live_server, "ann")
    assert watched.violations() == []


def test_the_annotators_pages_draw_math_fonts_and_diagrams_under_the_policy(watched, live_server, site):
    project, diagram, _ = site
    log_in(watched, live_server, "ann")
    assert visit(watched, f"{live_server.url}/", "[data-project-id]") == []
    assert visit(watched, f"{live_server.url}/projects/{project.pk}/work/", '#workspace[data-state="working"]') == []
    watched.wait_for_function("""() => { const img = document.querySelector('.ws-problem figure.diagram img');
                                         return img && img.complete && img.naturalWidth > 0; }""")
    assert watched.locator(".ws-problem figure.diagram img").get_attribute("src").endswith(f"{diagram.sha256}.svg")
    assert watched.locator(".ws-problem .katex").count() == 1 and watched.locator(".ws-step .katex").count() >= 1
    # KaTeX's own fonts, not a fallback: a font the policy blocked would never load.
    loaded = watched.evaluate("""async () => { await document.fonts.ready;
        return [...document.fonts].filter((f) => f.status === 'loaded').map((f) => f.family); }""")
    assert "KaTeX_Main" in loaded and "KaTeX_Math" in loaded
    assert watched.violations() == []
    screenshot(watched, "csp-workspace")
    assert visit(watched, f"{live_server.url}/projects/{project.pk}/checks/", '#my-missed[data-state="ready"]') == []


def test_the_lead_and_research_pages_work_under_the_policy(watched, live_server, site):
    project, _, bob = site
    log_in(watched, live_server, "boss")
    base = f"{live_server.url}/projects/{project.pk}"
    assert visit(watched, f"{base}/dashboard/", '#dashboard[data-state="ready"]') == []
    assert watched.locator('[data-testid="throughput-chart"]').count() == 1
    assert visit(watched, f"{base}/dashboard/annotators/{bob.pk}/", '#dashboard[data-state="ready"]') == []
    assert visit(watched, f"{base}/research/", '#research[data-state="ready"]') == []
    assert watched.locator('[data-testid="generation-stats"] tr[data-generation="0"]').count() == 1
    assert visit(watched, f"{base}/quality/", '#quality[data-state="ready"]') == []


def test_the_account_pages_work_under_the_policy(watched, live_server, site):
    log_in(watched, live_server, "ann")
    watched.click("header.topbar >> text=API tokens")  # the account menu's link
    assert visit(watched, watched.url, "h1") == []
    watched.fill("#id_token_name", "nightly export")
    watched.click("text=Make a token")
    key = watched.locator('[data-testid="new-token"] .token-key').inner_text()
    assert len(key) >= 40
    assert watched.locator('[data-testid="tokens"] tr[data-token-id]').count() == 1
    assert watched.violations() == []
    screenshot(watched, "account-tokens")
    assert visit(watched, f"{live_server.url}/accounts/password_change/", "#id_old_password") == []


def test_the_admin_works_under_the_policy(watched, live_server, site):
    project, diagram, bob = site
    watched.goto(f"{live_server.url}/admin/login/")
    watched.fill("#id_username", "boss")
    watched.fill("#id_password", "a-long-test-password")
    watched.press("#id_password", "Enter")
    watched.wait_for_url(f"{live_server.url}/admin/")
    for path in ["/admin/", "/admin/labeling/project/", f"/admin/labeling/project/{project.pk}/change/",
                 "/admin/auth/user/", f"/admin/auth/user/{bob.user_id}/change/",
                 f"/admin/labeling/diagram/{diagram.pk}/change/"]:
        assert visit(watched, f"{live_server.url}{path}", "#content") == [], path
    # The admin's own stylesheet applies (a blocked one would leave the header unstyled).
    assert watched.locator("#header").evaluate("node => getComputedStyle(node).display") == "flex"


def test_the_browsable_api_and_its_docs_work_under_the_policy(watched, live_server, site):
    project, *_ = site
    log_in(watched, live_server, "boss")
    for path in ["/api/me/", "/api/projects/", f"/api/projects/{project.pk}/"]:
        assert visit(watched, f"{live_server.url}{path}", ".response-info pre") == [], path
    # Swagger UI's icons are data: images; the docs page alone allows those.
    docs = {**settings.SECURE_CSP, "img-src": ["'self'", "data:"]}
    assert visit(watched, f"{live_server.url}/api/docs/", ".swagger-ui .opblock", docs) == []
    watched.locator(".swagger-ui .opblock").first.wait_for()
    assert watched.violations() == []
    screenshot(watched, "csp-api-docs")


def test_chromium_refuses_an_inline_script_under_the_policy(watched, live_server, site):
    # What the policy is for: markup that slipped past escaping does not run.
    visit(watched, f"{live_server.url}/accounts/login/", "form")
    ran = watched.evaluate("""() => { const s = document.createElement('script');
        s.textContent = 'window.__ran = true'; document.body.append(s); return window.__ran === true; }""")
    assert not ran
    assert any("script-src" in v for v in watched.violations())
