"""The frontend's own tests (frontend/tests/*.test.js, ``node --test``) run with the Python suite.

They hold the page's side of the shared submission-rule vectors (tests/vectors/), so
``make test`` fails when the page and the server disagree. Node 18 or later runs them with
its built-in test runner; no npm package is needed.
"""
import shutil
import subprocess

from tests.conftest import ROOT

FRONTEND = ROOT / "frontend"


def test_the_node_suite_passes():
    node = shutil.which("node")
    assert node, "node is not installed: the frontend's tests need Node 18 or later"
    suites = sorted(p.name for p in (FRONTEND / "tests").glob("*.test.js"))
    assert "sequence.test.js" in suites
    done = subprocess.run([node, "--test", "tests/"], cwd=FRONTEND, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, f"node --test failed:\n{done.stdout}\n{done.stderr}"
    assert "# fail 0" in done.stdout and "# pass 0" not in done.stdout
