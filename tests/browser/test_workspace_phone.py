"""Issue #30 item 1, the phone (390 CSS px, touch): the instructions open where they are seen, the
keyboard legend gives its room back on a touch screen, the "more" tray leaves the current step in
view, no button label breaks inside a word, and a dark system colour scheme gets a dark page.

Measured in the page as tests/browser/test_workspace_small_screens.py does (bounding rectangles
against the viewport and the sticky bar). Screenshots of a long solution at 390 px and at desktop
width, light and dark, go to tests/screenshots.
"""
import pytest

from tests.factories import make_task, make_user

from .axe import axe_violations
from .conftest import current, log_in, screenshot
from .test_workspace_small_screens import PHONE, check_layout

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

DESKTOP = dict(viewport={"width": 1280, "height": 800})
STEPS = [f"Step {k + 1}: since $x_{{{k}}} = \\frac{{{k}}}{{2}} + 3$, doubling gives $2x_{{{k}}} - 6 = {k}$."
         for k in range(14)]
INSTRUCTIONS = "## How to rate\n\nRate **each** step: +1 if it is right and helps, 0 if unsure or useless, -1 if wrong."

# The instructions' heading against the viewport.
SIDE = """() => {
  const r = document.querySelector('aside.ws-side .ws-side-head').getBoundingClientRect();
  return {top: r.top, bottom: r.bottom, innerHeight: window.innerHeight};
}"""

# Words of the bar's visible buttons that the layout broke over two lines.
BROKEN_WORDS = """() => {
  const broken = [];
  for (const button of document.querySelectorAll('.ws-bar .ws-button')) {
    if (!button.offsetParent) continue;
    const walker = document.createTreeWalker(button, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      if (node.parentElement.closest('kbd')) continue;
      for (const match of node.data.matchAll(/\\S+/g)) {
        const range = document.createRange();
        range.setStart(node, match.index);
        range.setEnd(node, match.index + match[0].length);
        const lines = new Set([...range.getClientRects()].map((r) => Math.round(r.top)));
        if (lines.size > 1) broken.push(match[0]);
      }
    }
  }
  return broken;
}"""


@pytest.fixture
def phone(browser, request):
    """A page in a browser context with ``emulation`` (the phone by default), CSP bypassed for axe-core."""
    def make(emulation=PHONE, **extra):
        context = browser.new_context(bypass_csp=True, **emulation, **extra)
        context.set_default_timeout(10000)
        page = context.new_page()

        def close():
            # The last rating's save is on its way: the database is emptied after the test.
            if page.locator("#workspace").count():
                page.wait_for_selector('#workspace[data-save="saved"]')
            context.close()
        request.addfinalizer(close)
        return page
    return make


def open_long_solution(page, live_server):
    project, _ = make_task(STEPS, alternatives={3: ["Or, squaring: $x_3^2 = 20.25$."]}, allow_alternatives=True,
                           stop_at_first_error=False, allow_human_steps=True, instructions=INSTRUCTIONS)
    make_user("ann", "annotator")
    log_in(page, live_server, "ann", next_path=f"/projects/{project.pk}/work/")
    page.wait_for_selector('#workspace[data-state="working"]')
    return project


def rate_down(page, n):
    for _ in range(n):
        page.locator(".ws-bar .ws-button.rate.good").click()


def test_the_instructions_open_in_view_and_closing_them_brings_the_current_step_back(phone, live_server):
    page = phone()
    open_long_solution(page, live_server)
    rate_down(page, 12)  # well down the solution: the page has scrolled far below the instructions' place
    assert current(page) == ("11", "0")
    assert page.evaluate("() => window.scrollY") > 600

    page.locator(".ws-more").click()
    page.locator('.ws-bar [data-action="help"]').click()
    side = page.evaluate(SIDE)
    assert 0 <= side["top"] and side["bottom"] <= side["innerHeight"], side  # seen, not 600 px above
    assert page.locator("aside.ws-side .ws-instructions-body h2").inner_text() == "How to rate"
    screenshot(page, "workspace-390-instructions")

    page.locator("aside.ws-side .ws-side-head button").click()
    assert page.locator("aside.ws-side").is_hidden()
    check_layout(page)  # the current step is back in view, clear of the bar


def test_the_more_tray_leaves_the_current_step_in_view_and_no_label_breaks_inside_a_word(phone, live_server):
    page = phone()
    open_long_solution(page, live_server)
    rate_down(page, 6)
    check_layout(page)
    bar_closed = page.evaluate("() => document.querySelector('.ws-bar').getBoundingClientRect().height")

    page.locator(".ws-more").click()
    bar_open = page.evaluate("() => document.querySelector('.ws-bar').getBoundingClientRect().height")
    assert bar_open > bar_closed + 44  # the tray is open: more rows of buttons ...
    check_layout(page)  # ... and the current step is still above it, wholly in view
    assert page.evaluate(BROKEN_WORDS) == []
    assert page.locator('.ws-bar [data-action="help"]').is_visible()
    screenshot(page, "workspace-390-more-open")

    # Rating on with the tray open: each new current step comes into view above the taller bar.
    rate_down(page, 3)
    check_layout(page)


def test_the_keyboard_legend_is_left_out_on_a_touch_screen_only(phone, live_server):
    page = phone()
    open_long_solution(page, live_server)
    assert page.evaluate("() => matchMedia('(pointer: coarse)').matches")
    assert page.locator(".ws-legend").is_hidden()
    assert "Rate step 1" in page.inner_text(".ws-hint")  # the hint line still names the keys

    desktop = phone(DESKTOP)
    log_in(desktop, live_server, "ann", next_path=page.url.removeprefix(live_server.url))
    desktop.wait_for_selector('#workspace[data-state="working"]')
    assert desktop.locator(".ws-legend").is_visible()
    assert desktop.locator(".ws-legend li").count() >= 10


@pytest.mark.parametrize("name, emulation", [("390", PHONE), ("desktop", DESKTOP)])
def test_a_dark_colour_scheme_gets_a_dark_workspace_that_passes_axe(phone, live_server, name, emulation):
    page = phone(emulation, color_scheme="dark")
    open_long_solution(page, live_server)
    rate_down(page, 3)
    page.keyboard.press("3")  # a -1 on step 4: its card is tinted, the alternative comes in
    colours = page.evaluate("""() => {
      const bg = (s) => getComputedStyle(document.querySelector(s)).backgroundColor;
      const fg = (s) => getComputedStyle(document.querySelector(s)).color;
      return {page: bg('html'), step: bg('.ws-step'), bad: bg('.ws-step[data-rating="-1"]'), bar: bg('.ws-bar'),
              text: fg('.ws-step-text'), scheme: getComputedStyle(document.documentElement).colorScheme};
    }""")

    def lightness(css):
        r, g, b = (int(v) for v in css[css.index("(") + 1:css.index(")")].split(",")[:3])
        return (0.2126 * r + 0.7152 * g + 0.0722 * b) / 255

    assert all(lightness(colours[part]) < 0.2 for part in ("page", "step", "bad", "bar")), colours
    assert lightness(colours["text"]) > 0.8, colours
    assert "dark" in colours["scheme"]
    screenshot(page, f"workspace-{name}-dark")
    assert axe_violations(page) == []  # contrast included

    # The light scheme is what it was.
    light = phone(emulation, color_scheme="light")
    log_in(light, live_server, "ann", next_path=page.url.removeprefix(live_server.url))
    light.wait_for_selector('#workspace[data-state="working"]')
    assert light.evaluate("() => getComputedStyle(document.querySelector('.ws-step')).backgroundColor") \
        == "rgb(255, 255, 255)"
    screenshot(light, f"workspace-{name}-long")


def test_the_favicon_is_served_on_every_page(phone, live_server):
    page = phone(DESKTOP)
    missing = []
    page.on("response", lambda r: r.status == 404 and missing.append(r.url))
    page.goto(f"{live_server.url}/accounts/login/")
    icon = page.request.get(f"{live_server.url}/favicon.ico")
    assert icon.status == 200 and icon.headers["content-type"] == "image/x-icon"
    assert icon.body()[:4] == b"\x00\x00\x01\x00"  # an ICO file
    assert page.locator('link[rel="icon"]').get_attribute("href") == "/favicon.ico"
    assert missing == []


def test_the_leads_pages_stay_light_under_a_dark_scheme_until_their_charts_are_themed(phone, live_server):
    # The dashboard's charts and tables have fixed light colours: dark text variables on them would
    # be unreadable, so those pages opt out (data-scheme="light") while the workspace goes dark.
    project, _ = make_task(STEPS[:3])
    make_user("lee", "lead")
    page = phone(DESKTOP, color_scheme="dark")
    log_in(page, live_server, "lee", next_path=f"/projects/{project.pk}/dashboard/")
    assert page.evaluate("() => document.documentElement.dataset.scheme") == "light"
    assert page.evaluate("() => getComputedStyle(document.documentElement).backgroundColor") == "rgb(246, 247, 249)"
    assert page.evaluate("() => getComputedStyle(document.documentElement).colorScheme") == "light"
