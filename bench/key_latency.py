"""Key to paint in the annotator workspace as a solution fills up with ratings (issue #30 item 1).

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/stepmark DJANGO_DEBUG=1 \\
        .venv/bin/python -m bench.key_latency [--levels 10,50,150] [--pairs 20] [--frames both|vsync|unthrottled]
        [--screenshots DIR]

Builds one phase-1 solution (alternatives rated at every step, as PRM800K's phase 1 does) of 40
steps with 3 other completions at each (160 candidate steps, math in every one), serves it with
gunicorn (``annotator.wsgi``, DEBUG off, the built frontend from frontend/dist) and opens the
workspace in headless Chromium (Playwright, the flags of tests/browser). The keyboard rates with
1 until the page holds N ratings; then, ``--pairs`` times, 1 (N+1 ratings) and u (back to N),
one key at a time, each measured in the page:

- **paint**: from the keydown event's timestamp (when the key was delivered) to the first task
  after the next animation frame, i.e. after the frame that shows the key's effect was
  produced (requestAnimationFrame, then setTimeout 0);
- **work**: from the same timestamp to the end of the page's own key handler with the style and
  layout it leaves brought up to date (a last keydown listener reads the layout): what the main
  thread must do before that frame can be painted.

A "floor" line gives the same figures on a page that changes one line of text a key: on a shared
machine, what any key costs right now (the load average is printed too).

Headless Chromium draws at a fixed 60 Hz, so "paint" also holds the wait for the next frame (up
to 16.7 ms after a key arrives, whatever the page does). ``--frames unthrottled`` starts Chromium
with ``--disable-frame-rate-limit`` too, so that a frame starts as soon as the page has work
for one: that figure is the page's own key to paint, the one the goal is about (p95 < 16 ms at
150 ratings). ``both`` (the default) runs each in turn.

The benchmark owns its database: a PostgreSQL name not ending in ``keybench`` gets ``_keybench``
appended; it is created if missing and migrated, and the benchmark's project made again for each run.
What it measured: docs/performance.md.
"""
import argparse
import os
import statistics
import sys
import time
from pathlib import Path

from bench._database import bench_database_url, create_database, migrate, use_database
from bench._server import gunicorn

PROJECT = "bench key latency"
USER = "keybench"
STEPS = 40
ALTERNATIVES = 3
GOAL = "goal: paint p95 < 16 ms at 150 ratings (unthrottled frames)"

# Every keydown is timed from its timestamp: "paint" after the next frame, "work" once the page's
# handler (on document, before window's bubbling listener) ran and layout is up to date.
PROBE = """() => {
  window.__keyTimes = [];
  window.addEventListener("keydown", (event) => {
    const start = event.timeStamp;
    const sample = {key: event.key};
    window.__keyTimes.push(sample);
    requestAnimationFrame(() => setTimeout(() => { sample.paint = performance.now() - start; }, 0));
  }, true);
  window.addEventListener("keydown", (event) => {
    document.documentElement.getBoundingClientRect();
    window.__keyTimes.at(-1).work = performance.now() - event.timeStamp;
  });
}"""


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m bench.key_latency", description=__doc__.split("\n\n")[0])
    parser.add_argument("--levels", default="10,50,150", help="ratings held when measuring (default 10,50,150)")
    parser.add_argument("--pairs", type=int, default=20, help="1-then-u pairs measured at each level (default 20)")
    parser.add_argument("--frames", choices=("both", "vsync", "unthrottled"), default="both",
                        help="Chromium's frames at 60 Hz (vsync), started as soon as needed (unthrottled), or both")
    parser.add_argument("--screenshots", type=Path, metavar="DIR",
                        help="save the workspace at each level, at 1280 px and at 390 px (a phone), in DIR")
    args = parser.parse_args(argv)
    if args.screenshots:
        args.screenshots.mkdir(parents=True, exist_ok=True)
    levels = sorted(int(n) for n in args.levels.split(","))
    if levels[-1] >= STEPS * (1 + ALTERNATIVES):
        raise SystemExit(f"the solution has {STEPS * (1 + ALTERNATIVES)} steps: levels must stay below")

    use_database(bench_database_url("postgres://postgres@127.0.0.1:5432/stepmark", "keybench",
                                    "the key latency benchmark needs PostgreSQL: set DATABASE_URL"))
    database_url = os.environ["DATABASE_URL"]
    create_database(database_url)
    migrate()
    modes = ["vsync", "unthrottled"] if args.frames == "both" else [args.frames]

    from playwright.sync_api import sync_playwright

    from tests.chromium import ARGS as CHROMIUM_ARGS
    from tests.chromium import path as chromium_path

    # Playwright's sync API keeps an event loop in this thread, and each level's solution is
    # prepared with the ORM inside it: Django refuses that unless told it is deliberate.
    os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"

    print(f"solution: {STEPS} steps x {1 + ALTERNATIVES} completions, phase 1; {args.pairs} pairs (1, u) a level;"
          f" load {os.getloadavg()[0]:.2f}", flush=True)
    with gunicorn(database_url, workers=2, threads=4, ready_path="/accounts/login/") as (port, _), \
            sync_playwright() as p:
        for mode in modes:
            project_id = _prepare()  # afresh: nobody is handed the same solution twice
            flags = CHROMIUM_ARGS + (["--disable-frame-rate-limit"] if mode == "unthrottled" else [])
            browser = p.chromium.launch(executable_path=chromium_path(), args=flags)
            try:
                results = _measure(browser, f"http://127.0.0.1:{port}", project_id, levels, args.pairs,
                                   args.screenshots and args.screenshots / mode)
            finally:
                browser.close()
            print(f"frames: {mode}", flush=True)
            floor = _floor(browser_args=flags, playwright=p, pairs=args.pairs)
            print(f"  floor       : paint {_figures([s['paint'] for s in floor])}"
                  f" | work {_figures([s['work'] for s in floor])}  (a page that changes one line a key)")
            for level, samples in results:
                print(f"  {level:4d} ratings: paint {_figures([s['paint'] for s in samples])}"
                      f" | work {_figures([s['work'] for s in samples])}  (n={len(samples)})", flush=True)
    print(GOAL)
    return 0


def _figures(values):
    values = sorted(values)
    p95 = values[min(len(values) - 1, round(0.95 * (len(values) - 1)))]
    return f"p50 {statistics.median(values):6.1f} ms  p95 {p95:6.1f} ms"


def _prepare():
    """The project, its one long phase-1 solution and the annotator (the factories of tests/)."""
    from django.contrib.auth import get_user_model

    from labeling.models import Project
    from tests.factories import make_project, make_solution, make_user

    Project.objects.filter(name=PROJECT).delete()
    get_user_model().objects.filter(username=USER).delete()
    project = make_project(name=PROJECT, allow_alternatives=True, stop_at_first_error=False, overlap=1)
    make_user(USER, "annotator", projects=[project])
    texts = [f"Since $x_{{{k}}} = \\frac{{{k}}}{{2}} + 3$, doubling gives $2x_{{{k}}} - 6 = {k}$, "
             f"so $\\sum_{{i=1}}^{{{k}}} i = \\frac{{{k}({k}+1)}}{{2}}$." for k in range(STEPS)]
    others = {k: [f"Alternatively, $x_{{{k}}}^2 = \\left(\\frac{{{k}}}{{2}} + 3\\right)^2$ by squaring (way {a})."
                  for a in range(1, ALTERNATIVES + 1)] for k in range(STEPS)}
    make_solution(project, texts, others, problem="Find $\\sum_{k=0}^{39} x_k$ where $x_k = \\frac{k}{2} + 3$.",
                  answer="900")
    return project.pk


def _measure(browser, base, project_id, levels, pairs, shots=None):
    from tests.factories import PASSWORD

    context = browser.new_context(viewport={"width": 1280, "height": 900})
    context.set_default_timeout(30000)
    page = context.new_page()
    page.goto(f"{base}/accounts/login/?next=/projects/{project_id}/work/")
    page.fill("#id_username", USER)
    page.fill("#id_password", PASSWORD)
    page.press("#id_password", "Enter")
    page.wait_for_selector('#workspace[data-state="working"]')
    page.evaluate(PROBE)
    results = []
    rated = 0
    for level in levels:
        while rated < level:
            _key(page, "1")
            rated += 1
        _wait_rated(page, rated)
        start = len(page.evaluate("() => window.__keyTimes"))
        for _ in range(pairs):
            _key(page, "1")
            _key(page, "u")
        _wait_rated(page, rated)
        results.append((level, page.evaluate("() => window.__keyTimes")[start:]))
        page.wait_for_selector('#workspace[data-save="saved"]')
        if shots:
            _screenshots(browser, context, page, shots, level)
    context.close()
    return results


def _screenshots(browser, context, page, shots, level):
    """The workspace as it stands at ``level`` ratings: this page, and the same pass reopened (its
    ratings come back from the server's draft) on a 390 px phone."""
    shots.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=shots / f"workspace-{level}-desktop.png")
    phone = browser.new_context(viewport={"width": 390, "height": 844}, is_mobile=True, has_touch=True,
                                device_scale_factor=2, storage_state=context.storage_state())
    try:
        other = phone.new_page()
        other.goto(page.url)
        _wait_rated(other, level)
        other.screenshot(path=shots / f"workspace-{level}-390.png")
    finally:
        phone.close()


def _floor(browser_args, playwright, pairs):
    """The same keys on a page that only changes one line of text a key: what a key to paint costs
    this machine now whatever the page (the machine may be shared: read the figures against it)."""
    browser = playwright.chromium.launch(executable_path=_chromium(), args=browser_args)
    try:
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        page.set_content("<p id=line>0</p>")
        page.evaluate(PROBE)
        page.evaluate("() => document.addEventListener('keydown', (e) => {"
                      " document.getElementById('line').textContent = e.key + performance.now(); })")
        for _ in range(pairs):
            _key(page, "1")
            _key(page, "u")
        return page.evaluate("() => window.__keyTimes")
    finally:
        browser.close()


def _chromium():
    from tests.chromium import path as chromium_path

    return chromium_path()


def _key(page, key):
    """Press ``key`` and wait until the frame after it is measured (one key at a time)."""
    count = page.evaluate("() => window.__keyTimes.length")
    page.keyboard.press(key)
    # Polled on timers: polling on animation frames would ask for frames of its own.
    page.evaluate("""(count) => new Promise((resolve) => {
      const check = () => window.__keyTimes.length > count && 'paint' in window.__keyTimes.at(-1)
        ? resolve() : setTimeout(check, 5);
      check();
    })""", count)
    time.sleep(0.02)  # a pause between keys, as between a person's


def _wait_rated(page, n):
    page.wait_for_function(f"() => document.querySelectorAll('.ws-step.rated').length === {n}")


if __name__ == "__main__":
    sys.exit(main())
