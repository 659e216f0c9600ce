"""Run the benchmarks: ``python -m bench`` runs each, ``python -m bench NAME [args]`` one.

A benchmark is a module in this package with a ``main`` function (``main(argv)`` or
``main()`` reading ``sys.argv``); it prints figures and is never part of the pass/fail suite.
``python -m bench --list`` names them.
"""
import importlib
import inspect
import pkgutil
import sys
from pathlib import Path


def benchmarks():
    names = [m.name for m in pkgutil.iter_modules([str(Path(__file__).parent)]) if not m.name.startswith("_")]
    return sorted(names)


def run(name, argv):
    main = getattr(importlib.import_module(f"bench.{name}"), "main", None)
    if main is None:
        return 0
    if inspect.signature(main).parameters:
        return main(argv) or 0
    saved, sys.argv = sys.argv, [f"bench.{name}", *argv]
    try:
        return main() or 0
    finally:
        sys.argv = saved


def main(argv):
    names = benchmarks()
    if argv and argv[0] in ("-l", "--list"):
        print("\n".join(names))
        return 0
    if argv:
        if argv[0] not in names:
            print(f"unknown benchmark {argv[0]!r}; known: {', '.join(names)}", file=sys.stderr)
            return 2
        return run(argv[0], argv[1:])
    status = 0
    for name in names:
        print(f"== {name}", flush=True)
        status |= run(name, []) or 0
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
