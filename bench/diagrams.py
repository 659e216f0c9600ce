"""How long Asymptote takes to draw MATH-500's [asy] diagrams, and how many it cannot draw.

    .venv/bin/python -m bench.diagrams [--timeout 30] [--memory-mb 512] [--workers 1]

Draws every diagram of MATH-500's problem statements (42 of the 500 problems,
``data/math/math500.jsonl.gz``) exactly as the drawing job does (``labeling.diagrams.asy.draw``
with the same limits, then ``labeling.diagrams.svg.sanitise``), one after another, or with
``--workers N`` that many at once (as N worker processes would). Prints the wall time for all,
the median and longest single diagram, the SVG sizes, and each failure with Asymptote's last
line. No database is used.
"""
import argparse
import json
import statistics
import sys
import time
from concurrent.futures import ThreadPoolExecutor

from labeling.data import data_dir, open_text
from labeling.diagrams.asy import DrawFailed, asy_path, draw
from labeling.diagrams.blocks import asy_blocks
from labeling.diagrams.svg import sanitise


def diagrams():
    """``(unique_id, code)`` for every diagram of a MATH-500 problem statement."""
    with open_text(data_dir() / "math" / "math500.jsonl.gz") as f:
        records = [json.loads(line) for line in f if line.strip()]
    return [(r["unique_id"], code) for r in records for code in asy_blocks(r["problem"])]


def draw_one(code, timeout, memory_mb):
    start = time.monotonic()
    try:
        svg, error = sanitise(draw(code, timeout=timeout, memory_mb=memory_mb)), None
    except DrawFailed as exc:
        svg, error = None, str(exc)
    return time.monotonic() - start, svg, error


def main(argv=None):
    parser = argparse.ArgumentParser(prog="bench.diagrams", description=__doc__.splitlines()[0])
    parser.add_argument("--timeout", type=float, default=30.0, help="seconds per diagram (STEPMARK_DIAGRAM_TIMEOUT)")
    parser.add_argument("--memory-mb", type=int, default=512, help="address space per run (STEPMARK_DIAGRAM_MEMORY_MB)")
    parser.add_argument("--workers", type=int, default=1, help="diagrams drawn at once")
    args = parser.parse_args(argv)
    if asy_path() is None:
        print("Asymptote is not installed (make asymptote)", file=sys.stderr)
        return 1
    found = diagrams()
    start = time.monotonic()
    with ThreadPoolExecutor(args.workers) as pool:
        results = list(pool.map(lambda item: draw_one(item[1], args.timeout, args.memory_mb), found))
    wall = time.monotonic() - start
    seconds = [s for s, _, _ in results]
    sizes = [len(svg) for _, svg, _ in results if svg]
    failed = [(uid, error) for (uid, _), (_, _, error) in zip(found, results) if error]
    print(f"{len(found)} diagrams in {len({uid for uid, _ in found})} MATH-500 problems, {args.workers} at a time, "
          f"limits {args.timeout:g} s and {args.memory_mb} MB")
    print(f"all drawn in {wall:.1f} s wall; per diagram median {statistics.median(seconds):.2f} s, "
          f"longest {max(seconds):.2f} s")
    print(f"{len(sizes)} drawn, SVG median {statistics.median(sizes) / 1000:.1f} kB, largest {max(sizes) / 1000:.1f} kB; "
          f"{len(failed)} could not be drawn")
    for uid, error in failed:
        print(f"  {uid}: {error.strip().splitlines()[-1]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
