"""renderMath in real Chromium: LaTeX rendered by KaTeX, imported text never parsed as HTML.

Loads the built bundle (frontend/dist, from `make frontend`) into a blank page whose
``data-math`` elements hold hostile and ordinary problem text, exactly as the server writes
it (as text), and inspects the DOM that the bundle leaves.
"""
import json

import pytest

from tests.conftest import ROOT

pytestmark = pytest.mark.browser

MANIFEST = ROOT / "frontend" / "dist" / ".vite" / "manifest.json"

SAMPLES = {
    "mixed": r"Let $x^2$ and $$\frac{a}{b}$$ then \(y_1\) and \[z\] cost \$5.",
    "asy": '[asy]draw((0,0)--(1,1)); label("$A$", (0,0));[/asy] after',
    "html": '<img src=x onerror="window.__pwned=1"><script>window.__pwned=2</script> $1<2$',
    "href": r"$\href{javascript:window.__pwned=3}{click}$ and $\url{javascript:alert(1)}$",
    "unclosed": "costs $5 and more",
    "broken": r"$\frac{1}{$ stays",
    "malformed": r"see $x^2^3$ here",
}


@pytest.fixture(scope="module")
def page(chromium):
    bundle = json.loads(MANIFEST.read_text())["src/main.js"]["file"]
    script = (ROOT / "frontend" / "dist" / bundle).read_text()
    page = chromium.new_page()
    page.set_content("<!doctype html><html><body></body></html>")
    page.evaluate(
        """samples => { for (const [id, text] of Object.entries(samples)) {
            const div = document.createElement('div');
            div.id = id; div.dataset.math = ''; div.textContent = text;
            document.body.appendChild(div);
        } }""",
        SAMPLES,
    )
    page.add_script_tag(content=script, type="module")
    page.wait_for_function("document.querySelectorAll('[data-math-rendered]').length === %d" % len(SAMPLES))
    yield page
    page.close()


def count(page, selector):
    return page.locator(selector).count()


def test_math_segments_are_rendered_by_katex(page):
    assert count(page, "#mixed .math-inline .katex") == 2  # $x^2$ and \(y_1\)
    assert count(page, "#mixed .math-display .katex-display") == 2  # $$..$$ and \[..\]
    assert count(page, "#mixed .katex .mfrac") == 1
    text = page.locator("#mixed").evaluate("el => [...el.childNodes].filter(n => n.nodeType === 3).map(n => n.data).join('|')")
    assert text == "Let | and | then | and | cost $5."


def test_asymptote_without_a_project_is_shown_as_folded_code(page):
    # With no project to ask for the server's drawing (src/diagram.js), the code is folded.
    code = page.locator("#asy figure.diagram details.diagram-code pre.asy code")
    assert code.text_content() == 'draw((0,0)--(1,1)); label("$A$", (0,0));'
    assert count(page, "#asy .katex") == 0  # math inside [asy] is source, not rendered
    assert "after" in page.locator("#asy").inner_text()


def test_imported_html_stays_text(page):
    assert count(page, "#html img") == 0 and count(page, "#html script") == 0
    assert page.locator("#html").inner_text().startswith('<img src=x onerror="window.__pwned=1">')
    assert count(page, "#html .katex") == 1  # $1<2$ is math, its "<" is not markup
    assert page.evaluate("window.__pwned") is None


def test_katex_runs_untrusted(page):
    assert count(page, "#href a") == 0
    assert page.evaluate("window.__pwned") is None


def test_unclosed_and_broken_math_degrade_to_text(page):
    assert page.locator("#unclosed").inner_text() == "costs $5 and more"
    assert count(page, "#unclosed .katex") == 0
    # An unclosed brace never closes the formula: the text stays as written, no exception.
    assert "\\frac{1}{" in page.locator("#broken").inner_text()
    assert page.locator("#broken").inner_text().endswith(" stays")


def test_latex_katex_cannot_read_is_shown_as_written_with_the_reason(page):
    # A double superscript: not LaTeX at all. No KaTeX error box, the source as the model wrote it.
    assert count(page, "#malformed .katex-error") == 0
    source = page.locator("#malformed .math-source")
    assert source.text_content() == "$x^2^3$"
    assert "Double superscript" in source.get_attribute("title")
