"""Run the benchmarks: ``python -m bench`` runs each, ``python -m bench NAME [args]`` one.

A benchmark is a module in this package with ``main(argv)``; it prints figures and is never
part of the pass/fail suite.
"""
import importlib
import pkgutil
import sys
from pathlib import Path


def benchmarks():
    return sorted(m.name for m in pkgutil.iter_modules([str(Path(__file__).parent)]) if not m.name.startswith("_"))


def main(argv):
    names = benchmarks()
    if argv and argv[0] in ("-l", "--list"):
        print("\n".join(names))
        return 0
    if argv:
        if argv[0] not in names:
            print(f"unknown benchmark {argv[0]!r}; known: {', '.join(names)}", file=sys.stderr)
            return 2
        return importlib.import_module(f"bench.{argv[0]}").main(argv[1:]) or 0
    status = 0
    for name in names:
        print(f"== {name}", flush=True)
        status |= importlib.import_module(f"bench.{name}").main([]) or 0
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
