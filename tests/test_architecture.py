"""The package boundaries hold: import-linter's contracts, and no import cycle anywhere.

The contracts live in pyproject.toml (``[tool.importlinter]``): the PRM core imports no
Django, the human side never imports torch, transformers or the PRM core. A cycle is found
on the module graph import-linter builds (grimp), counting imports inside functions too: a
function-level import that closes a loop is still a loop a reader has to untangle.
"""
import subprocess
import sys
from pathlib import Path

import grimp

from tests.conftest import ROOT

PACKAGES = ("annotator", "formats", "labeling", "scoring")


def test_import_linter_contracts_hold():
    lint = Path(sys.executable).with_name("lint-imports")
    done = subprocess.run([str(lint)], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "0 broken" in done.stdout


def cycles(graph, modules):
    """The strongly connected components of more than one module (Tarjan, iteratively)."""
    inside = set(modules)
    edges = {m: sorted(n for n in graph.find_modules_directly_imported_by(m) if n in inside) for m in modules}
    index, low, on_stack, stack, found = {}, {}, set(), [], []
    for root in sorted(modules):
        if root in index:
            continue
        work = [(root, iter(edges[root]))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is None:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        found.append(sorted(component))
            elif child not in index:
                index[child] = low[child] = len(index)
                stack.append(child)
                on_stack.add(child)
                work.append((child, iter(edges[child])))
            elif child in on_stack:
                low[node] = min(low[node], index[child])
    return found


def test_cycle_finder_finds_a_cycle():
    graph = grimp.ImportGraph()
    for name in ("a", "a.b", "a.c", "a.d"):
        graph.add_module(name)
    graph.add_import(importer="a.b", imported="a.c")
    graph.add_import(importer="a.c", imported="a.b")
    graph.add_import(importer="a.c", imported="a.d")
    assert cycles(graph, ["a", "a.b", "a.c", "a.d"]) == [["a.b", "a.c"]]


def test_no_import_cycle_in_the_project():
    graph = grimp.build_graph(*PACKAGES)
    modules = [m for m in graph.modules if m.split(".")[0] in PACKAGES]
    assert len(modules) > 50  # the whole project was read
    assert cycles(graph, modules) == []
