"""The dashboard's and the research page's charts, read in real Chromium at a desktop and a phone
width: axis titles and legends, ticks of at least 12 CSS px, a zero drawn apart from "no data",
the pause threshold as a line, one colour per meaning, axes that hold the data, the kappa
matrix as a table; the pages without sideways scrolling at 390 px and at 200% zoom, touch
targets of 44 px on a phone, no serious axe-core violations; the dashboard's 429 and 503; the
home page's counts with a thousands separator.

200% zoom is a 640x360 CSS-pixel viewport: what a 1280x720 window shows at 200% browser zoom
(zoom divides the CSS viewport; ``device_scale_factor`` only sharpens the pixels, so it is 2 here
as on such a screen).
"""
import datetime

import pytest

from labeling.models import Annotator
from labeling.quality import screening
from tests.factories import T0, make_gold, make_project, make_solution, make_user, rated_pass, score_gold

from .axe import axe_violations
from .conftest import log_in, screenshot

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

PHONE = {"width": 390, "height": 844}
ZOOM_200 = {"width": 640, "height": 360}
DAY = datetime.timedelta(days=1)


def annotator(name):
    return make_user(name, "annotator").annotator


@pytest.fixture
def quality():
    """ann and bob disagree on everything (α far below -0.2); on the gold item ann and bob score
    0.50 (ann stays paused, bob is resumed), cy 0.00, dee has no gold pass."""
    project = make_project(name="Charts", overlap=2, gold_threshold=0.7, gold_min_passes=1)
    make_user("lead", "lead")
    ann, bob, cy, dee = (annotator(n) for n in ("ann", "bob", "cy", "dee"))
    for day in range(2):
        for _ in range(4):
            solution = make_solution(project, steps=4)
            rated_pass(solution, ann, [1, -1, 1, -1], at=T0 + day * DAY)
            rated_pass(solution, bob, [-1, 1, -1, 1], at=T0 + day * DAY)
    rated_pass(make_solution(project, steps=3), dee, [1, 1, 0], at=T0 + 3 * DAY)  # a day apart: zeros between
    item = make_gold(project, [1, 1, 1, -1])
    rated_pass(item, ann, [1, 1, -1, 1], at=T0 + DAY)
    rated_pass(item, bob, [1, 1, -1, 1], at=T0 + DAY)
    rated_pass(item, cy, [-1, -1, -1, 1], at=T0 + DAY)
    score_gold()
    screening.resume(bob, project)
    assert screening.status_of(ann, project).state == screening.PAUSED
    return project


def open_dashboard(page, live_server, project):
    log_in(page, live_server, "lead", next_path=None)
    page.goto(f"{live_server.url}/projects/{project.pk}/dashboard/")
    page.wait_for_selector('#dashboard[data-state="ready"]')
    drawn(page)


def drawn(page):
    """Every chart drawn at its box's width (charts.js redraws when the box's width changes)."""
    page.wait_for_function("""() => [...document.querySelectorAll("svg.chart")].every(
        (s) => Math.abs(s.getBoundingClientRect().width - s.viewBox.baseVal.width) < 1)""")


def tick_sizes(page):
    """The smallest on-screen size of each chart's text: computed font size x the SVG's scale."""
    return page.evaluate("""() => Object.fromEntries([...document.querySelectorAll("svg.chart")].map((s) => {
        const scale = s.getBoundingClientRect().width / s.viewBox.baseVal.width;
        const sizes = [...s.querySelectorAll("text")].map((t) => parseFloat(getComputedStyle(t).fontSize) * scale);
        const heights = [...s.querySelectorAll("text.tick")].map((t) => t.getBoundingClientRect().height);
        return [s.dataset.testid, [Math.min(...sizes), Math.min(...heights), sizes.length]];
    }))""")


def fits(page):
    return page.evaluate("() => document.scrollingElement.scrollWidth <= document.scrollingElement.clientWidth")


def small_targets(page, root):
    """What a finger taps on ``root`` that is under 44 CSS px tall or wide (inline links in text aside)."""
    return page.evaluate("""(root) => [...document.querySelectorAll(
        `${root} button, ${root} input, ${root} th[data-key], ${root} .action-link, ${root} td a, ${root} li > a`)]
        .filter((e) => e.offsetParent !== null)
        .map((e) => [e.textContent.trim().slice(0, 30), e.getBoundingClientRect()])
        .filter(([, r]) => r.height < 44 || r.width < 44).map(([t, r]) => `${t}: ${r.width}x${r.height}`)""", root)


def shot(page, name):
    screenshot(page, name, full_page=True)


def test_every_chart_has_titles_a_legend_and_readable_ticks(browser, live_server, quality):
    for name, viewport in (("desktop", {"width": 1280, "height": 720}), ("phone", PHONE)):
        context = browser.new_context(viewport=viewport)
        page = context.new_page()
        open_dashboard(page, live_server, quality)
        for testid, (font, height, texts) in tick_sizes(page).items():
            assert texts > 3 and font >= 12 and height >= 12, (name, testid, font, height)
        for box in page.locator(".chart-box").all():
            assert box.locator("text.axis-title").count() >= 2, name
            assert all(t.strip() for t in box.locator("text.axis-title").all_text_contents())
            assert box.locator("ul.legend li").count() >= 1
        assert fits(page), name
        shot(page, f"dashboard-charts-{name}")
        context.close()


def test_zero_no_data_threshold_and_colours_mean_one_thing(page, live_server, quality):
    open_dashboard(page, live_server, quality)
    gold = page.locator('[data-testid="gold-chart"]')

    def bar(name):
        return gold.locator(f'g.bar[data-label="{name}"]')

    # cy's 0.00 is a solid stub with its value; dee's missing score is words, no bar.
    zero = bar("cy").locator("rect").bounding_box()
    assert zero["width"] >= 3 and zero["height"] > 10
    assert bar("cy").locator("text.value").text_content() == "0.00"
    assert bar("dee").locator("rect").count() == 0
    assert bar("dee").locator("text.value.no-data").text_content() == "no gold passes yet"
    # The same 0.50 in the same colour, whether its annotator is paused (ann) or active (bob).
    fills = [bar(n).locator("rect").evaluate("(r) => getComputedStyle(r).fill") for n in ("ann", "bob")]
    assert fills[0] == fills[1] and bar("ann").locator("rect.below").count() == 1
    threshold = gold.locator("line.threshold")
    assert threshold.count() == 1
    half = bar("ann").locator("rect").bounding_box()
    assert float(threshold.get_attribute("x1")) > float(bar("ann").locator("rect").get_attribute("x")) + half["width"]
    assert "pause threshold (0.70)" in page.locator('[data-testid="chart-gold"] .legend').inner_text()

    # α far below -0.20: the axis goes down far enough to hold every dot and the band.
    line = page.locator('[data-testid="agreement-over-time"]')
    alphas = [float(t.split(": ")[1].split(" ")[0]) for t in line.locator("circle.dot title").all_text_contents()]
    assert min(alphas) < -0.2
    grid = [float(y) for y in line.locator("line.grid").evaluate_all("(ls) => ls.map((l) => l.getAttribute('y1'))")]
    ticks = [float(t) for t in line.locator("text.tick").all_text_contents() if t[-1].isdigit() and "-" not in t[1:]]
    assert min(ticks) <= min(alphas)
    for cy in line.locator("circle.dot").evaluate_all("(cs) => cs.map((c) => +c.getAttribute('cy'))"):
        assert min(grid) <= cy <= max(grid)

    # The day between the work is a zero column, drawn as a stub.
    days = page.locator('[data-testid="throughput-chart"] g.column')
    assert days.count() == 4
    assert days.nth(2).locator("rect").get_attribute("data-value") == "0"
    assert days.nth(2).locator("rect").bounding_box()["height"] >= 3


def test_the_kappa_matrix_is_a_table_with_names_and_values(page, live_server, quality):
    open_dashboard(page, live_server, quality)
    table = page.locator('[data-testid="kappa-table"]')
    names = table.locator("thead th[scope=col]").all_inner_texts()
    assert set(names) >= {"ann", "bob", "cy"}
    assert table.locator("tbody th[scope=row]").all_inner_texts() == names
    row = table.locator("tbody tr").nth(names.index("ann"))
    cell = row.locator("td").nth(names.index("bob"))
    assert cell.inner_text().startswith("-") and "shared steps" in cell.text_content()
    assert cell.evaluate("(c) => getComputedStyle(c).backgroundColor") != "rgba(0, 0, 0, 0)"
    region = page.locator('[data-testid="kappa-matrix"] .table-scroll')
    assert region.get_attribute("tabindex") == "0" and region.get_attribute("role") == "region"
    # Human units, grouped numbers: no "0.0 h", no "null".
    text = page.locator("#dashboard").inner_text()
    assert "0.0 h" not in text and "null" not in text and "undefined" not in text


@pytest.mark.parametrize("viewport, scale", [(PHONE, 1), (ZOOM_200, 2)], ids=["390px", "zoom200"])
def test_dashboard_and_research_fit_a_phone_and_200_percent_zoom(browser, live_server, quality, viewport, scale):
    from scoring.models import Checkpoint

    Checkpoint.objects.create(project=quality, status=Checkpoint.CHAMPION, is_champion=True, passes=2,
                              metrics={"heldout": {"step_auroc": 0.8, "step_f1": 0.5}})
    # Generation 0's pick is rated (a hit rate), generation 1's not yet (no data, not 0%).
    found = make_solution(quality, generation=0, is_correct=False, verifier_score=0.9, rank=1)
    rated_pass(found, Annotator.objects.get(user__username="dee"), [1, -1], at=T0 + 3 * DAY)
    make_solution(quality, generation=1, is_correct=False, verifier_score=0.8, rank=1)
    make_user("res", "researcher")
    context = browser.new_context(viewport=viewport, device_scale_factor=scale)
    page = context.new_page()
    open_dashboard(page, live_server, quality)
    assert fits(page)
    assert small_targets(page, "#dashboard") == []
    page.context.clear_cookies()
    log_in(page, live_server, "res", next_path=None)
    page.goto(f"{live_server.url}/projects/{quality.pk}/research/")
    page.wait_for_selector('#research[data-state="ready"]')
    drawn(page)
    hits = page.locator('[data-testid="hit-rate-chart"] g.column')
    assert hits.count() == 2
    assert hits.nth(0).locator("rect.accent").count() == 1 and hits.nth(1).locator("rect.no-data").count() == 1
    assert fits(page)
    assert small_targets(page, "#research") == []
    if viewport is PHONE:
        shot(page, "research-phone")
    assert min(v[0] for v in tick_sizes(page).values()) >= 12
    context.close()


@pytest.mark.parametrize("viewport", [{"width": 1280, "height": 720}, PHONE], ids=["desktop", "phone"])
def test_axe_finds_nothing_serious(browser, live_server, quality, viewport):
    make_user("res", "researcher")
    context = browser.new_context(viewport=viewport, bypass_csp=True)  # as the axe_context fixture, at this size
    page = context.new_page()
    open_dashboard(page, live_server, quality)
    assert axe_violations(page) == []
    page.context.clear_cookies()
    log_in(page, live_server, "res", next_path=None)
    page.goto(f"{live_server.url}/projects/{quality.pk}/research/")
    page.wait_for_selector('#research[data-state="ready"]')
    assert axe_violations(page) == []
    context.close()


def test_dashboard_says_when_the_server_has_no_figures_yet(page, live_server, quality, settings, monkeypatch):
    from labeling.stats import cache

    settings.STEPMARK_DASHBOARD_COMPUTES_PER_MINUTE = 0  # the budget is spent before the first compute
    log_in(page, live_server, "lead", next_path=None)
    page.goto(f"{live_server.url}/projects/{quality.pk}/dashboard/")
    note = page.locator('[data-testid="dashboard-wait"][data-status="429"]')
    note.wait_for()
    assert "dashboard computes this minute" in note.inner_text() and "asks again in" in note.inner_text()
    assert page.locator("#dashboard").get_attribute("data-state") == "waiting"

    # Someone else's first compute holds the project: 503, said as such.
    monkeypatch.setattr(cache, "WAIT_SECONDS", 0)
    held = cache.compute_lock(quality)
    assert held.acquire(blocking=False)
    try:
        page.reload()
        note = page.locator('[data-testid="dashboard-wait"][data-status="503"]')
        note.wait_for()
        assert "being computed for the first time" in note.inner_text()
    finally:
        held.release()


def test_home_page_groups_thousands(page, live_server):
    from labeling.models import Problem

    project = make_project(name="Big")
    Problem.objects.bulk_create([Problem(project=project, problem="p", content_hash=f"h{i}") for i in range(5276)])
    make_user("lead", "lead")
    log_in(page, live_server, "lead")
    assert "5,276 problems" in page.locator(f'[data-project-id="{project.pk}"] .counts').first.inner_text()
