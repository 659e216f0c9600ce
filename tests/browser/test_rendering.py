"""Rendering fidelity in real Chromium: every problem and step line of the data the repository
carries (tests/browser/rendering_corpus.py: MATH-500, PRM800K, GSM8K, ProcessBench GSM8K)
drawn by the built renderer, and the workspace's GSM8K and MATH pages.

The corpus is drawn the way a server-rendered page draws text: a harness page holds one
``data-math`` element per line (the line escaped, its data set's options as data attributes,
as labeling/templates write them) and loads the built ``src/main.js``, whose
``renderMathIn`` hands each element to ``renderMath``. Playwright serves the page and
frontend/dist itself (no server, no database), in batches of ``BATCH`` lines, ``PAGES`` at once.
"""
import html
import json
import re

import pytest

from tests.conftest import ROOT
from tests.factories import make_project, make_solution, make_user

from .conftest import MANIFEST, log_in, open_workspace, screenshot
from .rendering_corpus import PLAIN_TEXT, every_line

pytestmark = pytest.mark.browser

VECTORS = json.loads((ROOT / "tests" / "vectors" / "rendering.json").read_text())
ORIGIN = "http://render.test"
DIST = ROOT / "frontend" / "dist"
BATCH = 5000
# Harness pages drawing at once, each in its own renderer process: one per core of the
# two-core machines the suite runs on (the drawing is most of this file's time).
PAGES = 2

# What the page reports of the lines it drew: how many it drew and how many formulas, every
# KaTeX error and every formula shown as written (not valid LaTeX), every [asy] figure, and
# every formula that reads as a sentence: three words in a row outside \text{...} and the
# like, which is what a price swallowed into math looks like ("$2 per egg a day for a
# total of $").
REPORT = r"""() => {
  const WORDY = /(?:^|[^\\a-zA-Z])[a-zA-Z]{2,}\s+[a-zA-Z]{2,}\s+[a-zA-Z]{2,}/;
  const TEXTUAL = /\\(?:text|mbox|mathrm|textbf|textit|operatorname|mathit|mathbf|hbox)\s*\{[^{}]*\}/g;
  const out = { lines: 0, rendered: 0, formulas: 0, errors: [], written: [], prose: [], diagrams: 0 };
  for (const el of document.querySelectorAll("[data-math]")) {
    out.lines += 1;
    if (el.dataset.mathRendered) out.rendered += 1;
    for (const e of el.querySelectorAll(".katex-error")) out.errors.push([el.id, e.textContent]);
    for (const s of el.querySelectorAll(".math-source")) out.written.push([el.id, s.textContent]);
    for (const a of el.querySelectorAll('annotation[encoding="application/x-tex"]')) {
      out.formulas += 1;
      if (WORDY.test(a.textContent.replace(TEXTUAL, " "))) out.prose.push([el.id, a.textContent]);
    }
    out.diagrams += el.querySelectorAll("figure.diagram").length;
  }
  return out;
}"""


def harness(lines, shown=True):
    """The harness page for ``[(id, text, options)]``; not ``shown``: drawn into the document but
    neither laid out nor painted (the corpus's checks read the DOM only, and layout and paint of
    80,000 lines were most of their time)."""
    main = json.loads(MANIFEST.read_text())["src/main.js"]["file"]
    flag = lambda on: "1" if on else "0"  # noqa: E731
    rows = "".join(
        f'<div id="{key}" data-math data-dollar-math="{flag(o["dollarMath"])}" '
        f'data-calculator-markup="{flag(o["calculatorMarkup"])}">{html.escape(text)}</div>'
        for key, text, o in lines
    )
    hide = "" if shown else "<style>body { display: none; }</style>"
    return f'<!doctype html><meta charset="utf-8">{hide}<body>{rows}<script type="module" src="/static/{main}"></script>'


def drawn(page, errors):
    """``page`` once loaded (its script run) and every line on it drawn."""
    page.wait_for_function("() => document.readyState === 'complete'"
                           " && document.querySelectorAll('[data-math]:not([data-math-rendered])').length === 0",
                           timeout=120000)
    assert not errors, f"JavaScript errors on the harness page: {errors}"
    return page


@pytest.fixture(scope="module")
def harness_pages(browser):
    """``PAGES`` harness pages, each in a context (so a renderer process) of its own, and their errors;
    a page's address names the batch of lines it draws (``/<n>``, kept in ``batches``)."""
    batches, pages, contexts = {}, [], []

    def serve(route):
        path = route.request.url[len(ORIGIN):].split("?")[0]
        if path.startswith("/static/") and (DIST / path[len("/static/"):]).is_file():
            route.fulfill(path=str(DIST / path[len("/static/"):]))
        elif path in batches:
            route.fulfill(body=batches[path], content_type="text/html; charset=utf-8")
        else:
            route.fulfill(status=404, body="")

    for _ in range(PAGES):
        context = browser.new_context(viewport={"width": 1280, "height": 720})
        context.route(f"{ORIGIN}/**", serve)
        page, errors = context.new_page(), []
        page.on("pageerror", lambda error, errors=errors: errors.append(str(error)))
        contexts.append(context)
        pages.append((page, errors))
    yield batches, pages
    for context in contexts:
        context.close()


@pytest.fixture(scope="module")
def draw(harness_pages):
    """``draw(lines)``: the harness page for ``lines`` loaded and drawn; returns the page."""
    batches, pages = harness_pages

    def draw(lines):
        batches["/0"] = harness(lines)
        page, errors = pages[0]
        page.goto(f"{ORIGIN}/0")
        return drawn(page, errors)

    return draw


@pytest.fixture(scope="module")
def reports(harness_pages):
    """``reports(lines)``: ``REPORT`` for each batch of ``BATCH`` lines, ``PAGES`` batches drawn at once."""
    batches, pages = harness_pages

    def reports(lines):
        todo = list(range(0, len(lines), BATCH))
        found, free, busy = {}, list(pages), []
        while todo or busy:
            while todo and free:  # start drawing: the page's own process draws while this one goes on
                start, (page, errors) = todo.pop(0), free.pop()
                batches[f"/{start}"] = harness(lines[start:start + BATCH], shown=False)
                page.goto(f"{ORIGIN}/{start}", wait_until="commit")
                busy.append((start, page, errors))
            start, page, errors = busy.pop(0)
            found[start] = drawn(page, errors).evaluate(REPORT)
            free.append((page, errors))
        return [found[start] for start in sorted(found)]

    return reports


@pytest.fixture(scope="module")
def corpus():
    return {where: (text, options) for where, text, options in every_line()}


def test_every_line_of_the_data_renders_without_a_katex_error_or_a_swallowed_price(reports, corpus):
    # Each distinct (text, options) is drawn once (a fifth of the lines repeat another: the same
    # step in several records): what the page reports of it holds for every place it occurs.
    places = {}
    for where, (text, options) in corpus.items():
        places.setdefault((text, json.dumps(options, sort_keys=True)), []).append(where)
    distinct = list(places)
    lines = [(f"l{i}", text, json.loads(options)) for i, (text, options) in enumerate(distinct)]
    totals = {"lines": 0, "rendered": 0, "formulas": 0, "diagrams": 0}
    errors, written, prose = [], [], []
    for report in reports(lines):
        for key in totals:
            totals[key] += report[key]
        errors += report["errors"]
        written += report["written"]
        prose += report["prose"]
    wheres = lambda key: places[distinct[int(key[1:])]]  # noqa: E731

    assert totals["lines"] == totals["rendered"] == len(distinct) and sum(map(len, places.values())) == len(corpus) > 99000
    assert errors == []
    # The formulas of the data that are not valid LaTeX (a double superscript, a misspelt
    # command, an unclosed brace) are shown as written, and they are exactly the known ones.
    assert sorted((where, source) for k, source in written for where in wheres(k)) == sorted(
        (m["where"], m["source"]) for m in VECTORS["malformed"])
    assert [(where, tex) for k, tex in prose for where in wheres(k)] == []
    # Every [asy] block became a diagram figure (its code, with no project to ask for a drawing).
    assert totals["diagrams"] == sum(text.count("[/asy]") for text, _ in distinct) > 40
    print(f"\n{len(corpus):,} lines ({len(distinct):,} distinct), {totals['formulas']:,} formulas, "
          f"{totals['diagrams']} diagrams, {len(written)} shown as written, 0 KaTeX errors")


def test_the_listed_lines_are_real_and_render_as_listed(draw, corpus):
    on = dict(PLAIN_TEXT, dollarMath=True)
    lines = []
    for i, v in enumerate(VECTORS["prices"]):
        assert corpus[v["where"]][0] == v["text"], v["where"]
        lines += [(f"p{i}on", v["text"], on), (f"p{i}off", v["text"], PLAIN_TEXT)]
    for i, v in enumerate(VECTORS["math"]):
        assert corpus[v["where"]] == (v["text"], v["options"]), v["where"]
        lines.append((f"m{i}", v["text"], v["options"]))
    for v in VECTORS["gsm8k_dollar_pairs"]:
        assert corpus[v["where"]][0] == v["text"], v["where"]
    page = draw(lines)

    for i, v in enumerate(VECTORS["prices"]):
        for suffix in ("on", "off"):
            element = page.locator(f"#p{i}{suffix}")
            assert element.locator(".katex").count() == 0, v["where"]
            assert element.text_content() == v["text_shown"], v["where"]
    for i, v in enumerate(VECTORS["math"]):
        tex = page.locator(f'#m{i} annotation[encoding="application/x-tex"]').all_text_contents()
        assert tex == v["formulas"], v["where"]


# The workspace ------------------------------------------------------------------------------


def gsm8k_record(corpus, n):
    """Question and the 6b_verification solution's lines of GSM8K example record ``n``."""
    rel = "gsm8k/example_model_solutions.jsonl.gz"
    steps = [text for where, (text, _) in corpus.items() if where.startswith(f"{rel}:{n}:6b_verification/")]
    return corpus[f"gsm8k/test.jsonl.gz:{n}:question"][0], steps


@pytest.mark.django_db(transaction=True)
def test_a_gsm8k_problem_shows_its_prices_as_text_and_hides_the_calculator_markup(page, live_server, corpus):
    # GSM8K test record 1 (Janet's ducks): "$2 per fresh duck egg" in the problem, and the
    # model's steps the issue quotes, with prices and calculator markup: "She sells 112 eggs
    # at $2 per egg a day for a total of 112 * 2 = $<<112*2=224>>224".
    question, steps = gsm8k_record(corpus, 1)
    assert any("<<" in s and "$" in s for s in steps)
    project = make_project(name="GSM8K candidate pool", dollar_math=False)
    make_solution(project, steps=steps, problem=question, answer="18")
    make_user("ann", "annotator")
    log_in(page, live_server, "ann", next_path=None)
    open_workspace(page, live_server, project)
    for _ in range(len(steps) - 1):
        page.keyboard.press("1")
    page.wait_for_selector(f'.ws-step[data-position="{len(steps) - 1}"]')

    problem = page.locator(".ws-problem")
    assert problem.text_content() == question and problem.locator(".katex").count() == 0
    shown = page.locator(".ws-step-text").all_text_contents()
    assert shown == [re.sub(r"<<[^<>\n]*>>", "", s) for s in steps]
    assert "$224" in shown[2] and not any("<<" in s for s in shown)
    assert page.locator(".ws-step .katex").count() == 0
    screenshot(page, "rendering-gsm8k-prices-calculator-hidden")

    # The project's setting shows the markup (the assignment resumes, its steps rated).
    project.show_calculator_markup = True
    project.save()
    open_workspace(page, live_server, project)
    page.wait_for_selector(f'.ws-step[data-position="{len(steps) - 1}"]')
    markup = [m for s in steps for m in re.findall(r"<<[^<>\n]*>>", s)]
    assert page.locator(".ws-step-text .calc").all_text_contents() == markup


@pytest.mark.django_db(transaction=True)
def test_processbench_prices_stay_text_beside_its_formulas_with_dollar_math_on(page, live_server, corpus):
    # ProcessBench GSM8K comes in as ``candidates``, which keep "$" math: only Pandoc's rule
    # tells "$213.92 + $42.78 = $\boxed{256.70}$" apart, prices as text and the box as math.
    rel = "processbench/gsm8k.json.gz:50"
    steps = [text for where, (text, _) in corpus.items() if where.startswith(f"{rel}:steps/")]
    project = make_project(name="ProcessBench GSM8K")
    assert project.dollar_math is True
    make_solution(project, steps=steps, problem=corpus[f"{rel}:problem"][0], answer="89.6")
    make_user("ann", "annotator")
    log_in(page, live_server, "ann", next_path=None)
    open_workspace(page, live_server, project)
    for _ in range(len(steps) - 1):
        page.keyboard.press("1")
    last = page.locator(f'.ws-step[data-position="{len(steps) - 1}"]')
    last.wait_for()

    texts = page.locator(".ws-step-text")
    assert page.locator(".ws-problem .katex").count() == 0
    assert [texts.nth(i).locator(".katex").count() for i in range(len(steps))] == [0] * 14 + [1, 1]
    assert texts.nth(14).locator("annotation").text_content() == "\\boxed{256.70}"
    assert texts.nth(14).text_content().startswith(steps[14].split("$\\boxed")[0])  # the prices, as written
    assert last.locator("annotation").text_content() == "\\boxed{\\$256.70}"
    screenshot(page, "rendering-processbench-prices-and-formulas")


@pytest.mark.django_db(transaction=True)
def test_the_lead_sees_a_gsm8k_pass_with_the_projects_settings(page, live_server, corpus):
    # The dashboard's drill-down draws the same text through the same renderer, with the
    # settings the page's data attributes carry (labeling/templates/labeling/dashboard_annotator.html).
    from django.urls import reverse

    from tests.factories import rated_pass

    question, steps = gsm8k_record(corpus, 1)
    # Markup shown: not the default, so the page can only show it if the setting reached it.
    project = make_project(name="GSM8K pool", dollar_math=False, show_calculator_markup=True)
    solution = make_solution(project, steps=steps, problem=question, answer="18")
    ann = make_user("ann", "annotator").annotator
    rated_pass(solution, ann, [1] * len(steps))
    make_user("lead", "lead")
    log_in(page, live_server, "lead", next_path=None)
    page.goto(live_server.url + reverse("dashboard-annotator", args=[project.pk, ann.pk]))
    page.wait_for_selector('#dashboard[data-state="ready"]')
    assert page.locator("article.pass td.step-text").all_text_contents() == steps
    markup = [m for s in steps for m in re.findall(r"<<[^<>\n]*>>", s)]
    assert page.locator("article.pass td.step-text .calc").all_text_contents() == markup
    assert page.locator("article.pass .katex").count() == 0


@pytest.mark.django_db(transaction=True)
def test_a_math_problem_shows_its_asy_diagram_as_the_servers_drawing(page, live_server, corpus):
    # MATH-500's 15th problem: its right triangle in [asy], drawn by Asymptote on the server
    # (labeling/diagrams/), beside the problem's math; the steps are its reference solution.
    from labeling.diagrams import store

    rel = "math/math500.jsonl.gz:15"
    problem = corpus[f"{rel}:problem"][0]
    steps = corpus[f"{rel}:solution"][0].split("\n\n")
    project = make_project(name="MATH-500")
    make_solution(project, steps=steps, problem=problem, answer="\\sqrt{51}")
    assert store.collect(project) == 1 and store.draw_pending(project) == (1, 0)
    make_user("ann", "annotator")
    log_in(page, live_server, "ann", next_path=None)
    open_workspace(page, live_server, project)
    page.keyboard.press("1")
    page.wait_for_selector('.ws-step[data-position="1"]')
    page.wait_for_function("""() => { const img = document.querySelector('.ws-problem figure.diagram img');
                                      return img && img.complete && img.naturalWidth > 0; }""")

    assert page.locator(".ws-problem annotation").all_text_contents() == ["\\sin D = 0.7", "DE"]
    assert page.locator(".ws-problem .diagram-code").count() == 0  # drawn, not folded code
    assert "[asy]" not in page.locator(".ws-problem").text_content()
    assert page.locator(".ws-step .katex").count() == 6  # three formulas in each step
    screenshot(page, "rendering-math-asy-diagram")
