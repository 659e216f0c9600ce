"""The first page each demo role sees, in real Chromium at a desktop and a phone size.

The demo's set-up as ``make demo`` does it (``load_demo``, then ``start_demo_jobs``, its jobs run
inline here), then each account logs in with its demo password: ann's project cards say how
much waits, the lead's MATH-500 dashboard has an alpha, a paused annotator and gold scores, the
researcher's pages show GSM8K's first generation and MATH-500's trained checkpoint. Screenshots
go to tests/screenshots/demo-*.png (docs/screenshots.md; one set is kept in docs/screenshots/).
"""
import io

import pytest
from django.core.management import call_command

from annotator import demo_jobs
from labeling.management.commands.load_demo import ACCOUNTS, GSM8K_PROJECT, MATH_PROJECT, PAUSED
from labeling.models import Project

from .conftest import screenshot

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.django_db(transaction=True)]

SIZES = {"desktop": (1280, 720), "phone": (390, 844)}


@pytest.fixture
def demo(data_dir, settings, tmp_path, tiny_base, monkeypatch, request):
    """The demo's projects, accounts and first jobs (a generation, a retrain, a snapshot), the jobs on
    a tiny random model: these pages show what the jobs wrote, whatever model wrote it (the bundled
    MiniLM trains and scores in tests/scoring/prm/test_checkpoint.py: seconds there, minutes here)."""
    settings.STEPMARK_CHECKPOINT_DIR = tmp_path / "checkpoints"
    settings.STEPMARK_EXPORT_DIR = tmp_path / "exports"
    # The demo is a debug process: load_demo gives the accounts their published passwords only there.
    settings.DEBUG = True
    # Its imports queue the drawing of MATH-500's 44 [asy] diagrams, as `make demo` queues it for
    # its worker; nothing here runs it (inline it took 14 s of this set-up, and none of these
    # pages shows a diagram: tests/browser/test_workspace_diagrams.py shows them).
    call_command("load_demo", data_dir=str(data_dir), quiet_progress=True, stdout=io.StringIO())
    settings.DEBUG = False
    Project.objects.update(base_model_path=str(tiny_base))
    # The generation from a tenth of the demo's pool (as test_demo.py's flows): the pages show it
    # the same way.
    monkeypatch.setattr(demo_jobs, "DEMO_POOL_LIMIT", 40)
    monkeypatch.setattr(demo_jobs, "DEMO_GENERATION_SIZE", 10)
    request.getfixturevalue("eager")  # from here, the first jobs run inline
    assert len(demo_jobs.start_demo_jobs(log=lambda line: None)) == 3
    return Project.objects.get(name=MATH_PROJECT), Project.objects.get(name=GSM8K_PROJECT)


def open_view(browser, size):
    """A page in a fresh profile at ``size``, and the JavaScript errors it raises."""
    width, height = SIZES[size]
    context = browser.new_context(viewport={"width": width, "height": height})
    context.set_default_timeout(15000)
    page = context.new_page()
    errors = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    return page, errors


def log_in(page, live_server, username):
    """The login form with the demo account's own password (after logging out whoever was in)."""
    page.context.clear_cookies()
    page.goto(f"{live_server.url}/accounts/login/?next=/")
    page.fill("#id_username", username)
    page.fill("#id_password", ACCOUNTS[username][0])
    page.press("#id_password", "Enter")
    page.wait_for_url(f"{live_server.url}/")


def follow(page, project, link, ready):
    """From the home page, the project card's ``link``, until ``ready`` is on the page."""
    page.click(f'[data-project-id="{project.pk}"] a.{link}')
    page.wait_for_selector(ready)


def keep(page, name):
    """The screenshot, once nothing makes the page scroll sideways (wide tables scroll in their box)."""
    assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth"), name
    screenshot(page, name, full_page=True)  # the whole page, not only the window


def test_each_demo_role_finds_its_first_page_filled(browser, live_server, demo):
    math, gsm8k = demo
    for size in SIZES:
        view, errors = open_view(browser, size)
        check_first_pages(view, live_server, math, gsm8k, size)
        view.context.close()
        assert not errors, f"JavaScript errors at {size} size: {errors}"


def check_first_pages(view, live_server, math, gsm8k, size):
    # ann: a card per project, each saying how many solutions wait.
    log_in(view, live_server, "ann")
    for project in (math, gsm8k):
        waiting = view.locator(f'[data-project-id="{project.pk}"] .waiting')
        assert waiting.get_attribute("data-waiting") == "yes", project.name
        assert "Work is waiting for you." in waiting.inner_text()
    keep(view, f"demo-ann-home-{size}")

    # lead: the MATH-500 dashboard with agreement, the paused annotator and gold scores.
    log_in(view, live_server, "lead")
    follow(view, math, "dashboard-link", '#dashboard[data-state="ready"]')
    text = view.locator("#dashboard").inner_text()
    assert "undefined" not in text.lower(), text[:500]
    assert PAUSED[0] in view.locator('[data-testid="paused"]').inner_text()
    assert view.locator('[data-testid="gold-chart"] g.bar').count() >= 1
    keep(view, f"demo-lead-dashboard-{size}")

    # research: GSM8K's first generation, then MATH-500's trained checkpoint.
    log_in(view, live_server, "research")
    follow(view, gsm8k, "research-link", '#research[data-state="ready"]')
    row = view.locator('[data-testid="generation-stats"] tr[data-generation="1"]')
    assert row.locator("td").first.inner_text() == "1"
    assert str(demo_jobs.DEMO_GENERATION_SIZE) in row.locator("td").all_inner_texts()
    keep(view, f"demo-research-generation-{size}")

    view.goto(f"{live_server.url}/")
    follow(view, math, "research-link", '#research[data-state="ready"]')
    # The base model's checkpoint, still the champion (★), and the retrained one with its held-out
    # figures, refused by the promotion gate: the demo's rated problems hold out fewer than the 50
    # it needs to judge a checkpoint at all.
    table = view.locator('[data-testid="checkpoint-table"]')
    assert table.locator("tbody tr").count() == 2
    cells = table.locator("tr.champion td").all_inner_texts()
    assert cells[0].endswith("★") and cells[1] == "champion"
    refused = table.locator('tbody tr[data-status="rejected"] td').all_inner_texts()
    assert refused[1] == "rejected"
    metrics = slice(5, table.locator("th").all_inner_texts().index("started"))  # after checkpoint, status, layout, generation, passes
    assert refused[metrics] and all(cell.replace(".", "", 1).isdigit() for cell in refused[metrics]), refused
    assert view.locator('[data-testid="snapshot-list"] a').count() == 1
    # Its evaluation beside the base model's on the same held-out problems, drawn from the retrain's report.
    view.wait_for_selector('[data-testid="evaluation"][data-state="ready"]')
    assert "was refused. Not enough held-out data to judge" in view.locator('[data-testid="decision"]').inner_text()
    assert view.locator('[data-testid="gate"]').get_attribute("data-decision") == "reject"
    for plot in ("plot-roc", "plot-calibration"):
        assert view.locator(f'svg[data-testid="{plot}"] g.series.champion path.curve').count() == 1, plot
    keep(view, f"demo-research-checkpoint-{size}")
