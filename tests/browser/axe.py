"""axe-core (npm, frontend/node_modules) run inside a page: the accessibility check of the browser tests.

The pages' Content-Security-Policy refuses injected scripts, so the page under check must be
opened in a context made with ``bypass_csp=True`` (the ``axe_context`` fixture in
tests/browser/conftest.py). Only serious and critical violations count: the bar issue #20 sets.
"""
from tests.conftest import ROOT

AXE = ROOT / "frontend" / "node_modules" / "axe-core" / "axe.min.js"
SERIOUS = ("serious", "critical")


def axe_violations(page, *, impacts=SERIOUS):
    """The axe-core violations of ``impacts`` on the page as it is now: [(rule id, impact, nodes' targets)]."""
    assert AXE.exists(), "axe-core is not installed: cd frontend && npm ci"
    if not page.evaluate("() => typeof window.axe === 'object'"):
        page.add_script_tag(content=AXE.read_text())
    result = page.evaluate("async () => await window.axe.run(document, {resultTypes: ['violations']})")
    return [
        (v["id"], v["impact"], [node["target"] for node in v["nodes"]][:5])
        for v in result["violations"]
        if v["impact"] in impacts
    ]
