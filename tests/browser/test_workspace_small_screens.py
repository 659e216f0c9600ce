"""The workspace and the home page on small screens and at 200% zoom, and their accessibility
(issue #20 item 5, and item 4's project cards).

Two emulations: a phone, 390x844 CSS pixels (device scale 3, touch, mobile viewport), and a
1280x844 desktop window at 200% zoom, which is what the page sees as a 640x422 CSS-pixel
viewport with device scale factor 2 (browser zoom changes the CSS pixels per device pixel and
the viewport's width in CSS pixels, exactly this). Every measure is taken in the page: the
document's scrollWidth against its clientWidth (no sideways scrolling), the current step's
bounding rectangle against the viewport and the sticky bar's top, the rating buttons' height.
"""
import pytest

from labeling.models import Solution
from labeling.work import queue
from tests.factories import make_annotator, make_project, make_solution, make_task, make_user

from .axe import axe_violations
from .conftest import current, log_in, screenshot

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

PHONE = dict(viewport={"width": 390, "height": 844}, device_scale_factor=3, is_mobile=True, has_touch=True)
ZOOM_200 = dict(viewport={"width": 640, "height": 422}, device_scale_factor=2)
STEPS = [
    "Subtract $3$ from both sides of $2x + 3 = 7$ to get $2x = 4$.",
    "Divide both sides by $2$: $x = 2$.",
    "Check the answer: $2 \\cdot 2 + 3 = 4 + 3 = 7$, so $x = 2$ is right.",
    "The equation is linear, so this is its only solution.",
    "# Answer\n\n2",
]
PROBLEM = ("A number $x$ satisfies $2x + 3 = 7$. Find $x$, and check that the value found satisfies the "
           "equation. Then say whether any other number satisfies it.")

MEASURE = """() => {
  const doc = document.documentElement;
  const step = document.querySelector('.ws-step.current').getBoundingClientRect();
  const bar = document.querySelector('.ws-bar').getBoundingClientRect();
  const buttons = [...document.querySelectorAll('.ws-bar .ws-button.rate')].map((b) => b.getBoundingClientRect().height);
  return {scrollWidth: doc.scrollWidth, clientWidth: doc.clientWidth, innerHeight: window.innerHeight,
          top: step.top, bottom: step.bottom, left: step.left, right: step.right, barTop: bar.top,
          barHeight: bar.height, buttons};
}"""


@pytest.fixture
def small_context(browser, request):
    """A browser context with the emulation the test names (bypassing the CSP for axe-core)."""
    def make(emulation):
        context = browser.new_context(bypass_csp=True, **emulation)
        context.set_default_timeout(10000)
        request.addfinalizer(context.close)
        return context.new_page()
    return make


def check_layout(page):
    m = page.evaluate(MEASURE)
    assert m["scrollWidth"] <= m["clientWidth"], m  # no sideways scrolling
    assert 0 <= m["top"] and m["bottom"] <= m["innerHeight"], m  # the current step is in the viewport ...
    assert m["bottom"] <= m["barTop"], m  # ... and not under the sticky bar
    assert 0 <= m["left"] and m["right"] <= m["clientWidth"], m
    return m


@pytest.mark.parametrize("name, emulation", [("390", PHONE), ("zoom-200", ZOOM_200)])
def test_the_workspace_stacks_keeps_the_current_step_in_view_and_passes_axe(small_context, live_server, name,
                                                                            emulation):
    project, _ = make_task(STEPS, problem=PROBLEM, alternatives={2: ["Check with $x = 3$: $9 \\ne 7$."]},
                           stop_at_first_error=False, allow_alternatives=True, allow_human_steps=True,
                           instructions="## How to rate\n\nRate **each** step: +1, 0 or -1.")
    make_user("ann", "annotator")
    page = small_context(emulation)
    log_in(page, live_server, "ann", next_path=f"/projects/{project.pk}/work/")
    page.wait_for_selector('#workspace[data-state="working"]')

    m = check_layout(page)
    # Two columns would leave a few characters a line: the steps take the whole width.
    width = page.evaluate("() => document.querySelector('.ws-step.current').getBoundingClientRect().width")
    assert width >= 0.8 * m["clientWidth"]
    assert all(height >= 44 for height in m["buttons"]) and len(m["buttons"]) == 3
    assert m["barHeight"] <= 0.3 * m["innerHeight"], m  # a compact bar, not a quarter of the screen and more

    # Down the solution (the rating buttons, as a thumb does): each new current step comes into view.
    for button, expected in (("good", ("1", "0")), ("good", ("2", "0")), ("bad", ("2", "1"))):
        page.locator(f".ws-bar .ws-button.rate.{button}").click()
        assert current(page) == expected
        check_layout(page)
    screenshot(page, f"workspace-{name}")
    assert axe_violations(page) == []

    # The other actions are one tap away, each a 44 px target; the instructions open above the work.
    page.locator(".ws-more").click()
    heights = page.evaluate("() => [...document.querySelectorAll('.ws-bar .ws-button')]"
                            ".filter((b) => b.offsetParent).map((b) => b.getBoundingClientRect().height)")
    assert len(heights) >= 10 and min(heights) >= 44
    page.locator('.ws-bar [data-action="help"]').click()
    assert page.locator("aside.ws-side .ws-side-head h2").is_visible()
    assert page.locator("aside.ws-side .ws-instructions-body h2").inner_text() == "How to rate"
    screenshot(page, f"workspace-{name}-more")
    assert page.evaluate("() => document.documentElement.scrollWidth <= document.documentElement.clientWidth")
    assert axe_violations(page) == []


def test_the_home_page_renders_markdown_safely_says_what_waits_and_fits_a_phone(small_context, live_server):
    busy = make_project(name="Busy", instructions=(
        "## How to rate\n\nRate **each** step, math like $x^2$ too.\n\n"
        "<script>window.__pwned = 1</script>\n\n"
        "Pictures: <img src=x onerror=\"window.__pwned = 2\"> [link](javascript:window.__pwned=3)"))
    for _ in range(2):
        make_solution(busy, steps=2)
    idle = make_project(name="Idle", overlap=1)
    taken = make_solution(idle, steps=2)
    queue.next_assignment(make_annotator("bea"), idle)  # idle's one slot is taken
    make_user("ann", "annotator")
    page = small_context(PHONE)
    log_in(page, live_server, "ann")

    card = page.locator(f'[data-project-id="{busy.pk}"]')
    assert card.locator(".instructions h2").inner_text() == "How to rate"
    assert card.locator(".instructions strong").inner_text() == "each"
    assert card.locator(".instructions .katex").count() == 1
    text = card.locator(".instructions").inner_text()
    assert "## How to rate" not in text
    assert "<script>window.__pwned = 1</script>" in text and "<img src=x onerror=" in text  # shown, inert
    assert card.locator("script, img").count() == 0
    assert card.locator(".instructions a").get_attribute("href") is None
    assert page.evaluate("() => typeof window.__pwned") == "undefined"
    assert "Work is waiting for you." in card.locator(".waiting").inner_text()
    idle_card = page.locator(f'[data-project-id="{idle.pk}"]')
    assert Solution.objects.get(pk=taken.pk).live_assignments == 1
    assert "No work for you now" in idle_card.locator(".waiting").inner_text()
    assert "Start rating" not in idle_card.inner_text()

    assert page.evaluate("() => document.documentElement.scrollWidth <= document.documentElement.clientWidth")
    # Touch targets: every link and button but a link inside a sentence of the description.
    small = page.evaluate("() => [...document.querySelectorAll('main a, main button, .topbar a, .topbar button')]"
                          ".filter((e) => !e.closest('.instructions'))"
                          ".filter((e) => e.offsetParent && e.getBoundingClientRect().height < 44)"
                          ".map((e) => e.textContent.trim())")
    assert small == []
    screenshot(page, "home-390")
    assert axe_violations(page) == []


@pytest.mark.parametrize("emulation", [PHONE, ZOOM_200], ids=["390", "zoom-200"])
def test_the_login_and_api_token_pages_do_not_scroll_sideways(small_context, live_server, emulation):
    make_user("ann", "annotator")
    page = small_context(emulation)
    page.goto(f"{live_server.url}/accounts/login/")
    fits = "() => document.documentElement.scrollWidth <= document.documentElement.clientWidth"
    assert page.evaluate(fits)
    log_in(page, live_server, "ann", next_path="/account/tokens/")
    page.fill("#id_token_name", "nightly export of every project's PRM800K file")
    page.locator(".new-token-form button").click()
    page.wait_for_selector("[data-testid=tokens]")
    assert page.evaluate(fits)
