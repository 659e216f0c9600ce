"""Agreement statistics at dashboard scale: our vectorised code against the reference libraries.

    .venv/bin/python -m bench.agreement [--ratings 1000000] [--annotators 40] [--overlap 3] [--seed 0]

Makes synthetic step ratings shaped like real work, no database: solutions of 6 to 15 steps,
each rated by ``overlap`` annotators drawn at random from ``annotators``; a pass rates the
steps up to the first error it finds (60% of solutions have one; most passes find it, some
a step off, some miss it, two annotators never find any), +1 before it with a few 0s, and 1%
of the shown steps are left unrated (NaN). Items (solution, position) are therefore rated by
one to ``overlap`` annotators.

For each statistic the dashboard shows it times our vectorised arithmetic (from
``labeling.stats.agreement``, which keeps it for the kappa matrix and alpha's bootstrap) and the
library (``krippendorff.alpha``, scikit-learn's ``cohen_kappa_score`` per pair), the library's
time including building its input from the rating table, and says whether the results agree
(to 1e-9). The module's choice per statistic, and the figures, are in docs/performance.md.
The rating table itself (``rating_table`` from the four columns) is timed once: every path
starts from it. Peak memory is traced in a second, separate call (tracemalloc slows numpy
down, so the timed call runs untraced).
Alpha's bootstrap and per-annotator alpha compare ours with the library called once per
replicate or per annotator; the library bootstrap is timed on a few replicates and scaled to
the dashboard's 200 (marked "scaled").

Prints figures only; the machine may be shared, so the load average is printed too.
"""
import argparse
import os
import subprocess
import sys
import time
import tracemalloc
import warnings

import numpy as np

from labeling.stats import agreement as ag

DOMAIN = (-1, 0, 1)
DASHBOARD_REPLICATES = 200  # labeling.stats.dashboard.build_dashboard's default


def synthetic_columns(ratings, annotators, overlap, seed):
    """Four columns (annotator, solution, position, value as float with NaN), about ``ratings`` rows."""
    rng = np.random.default_rng(seed)
    n = max(1, ratings // (overlap * 5))  # more solutions than needed; cut below
    steps = rng.integers(6, 16, n)
    error_at = np.where(rng.random(n) < 0.6, (rng.random(n) * steps).astype(int), -1)
    # Each solution's passes: ``overlap`` distinct annotators at random.
    raters = np.argsort(rng.random((n, annotators)), axis=1)[:, :overlap]
    skill = 0.55 + 0.4 * rng.random(annotators)
    skill[:2] = 0.0  # two annotators who never find an error
    solution = np.repeat(np.arange(n), overlap)
    annotator = raters.ravel()
    truth, length = error_at[solution], steps[solution]
    luck = rng.random(len(solution))
    off = np.clip(truth + np.where(rng.random(len(solution)) < 0.5, 1, -1), 0, length - 1)
    seen = np.where(truth < 0, -1, np.where(luck < skill[annotator], truth,
                                            np.where(luck < (1 + skill[annotator]) / 2, off, -1)))
    seen[skill[annotator] == 0] = -1
    rated = np.where(seen >= 0, seen + 1, length)  # a pass stops at the error it found
    # Keep whole solutions up to the wanted number of ratings.
    per_solution = np.add.reduceat(rated, np.arange(0, len(rated), overlap))
    keep = np.searchsorted(np.cumsum(per_solution), ratings) + 1
    solution, annotator, seen, rated = (x[: keep * overlap] for x in (solution, annotator, seen, rated))
    rows = np.repeat(np.arange(len(rated)), rated)
    position = np.arange(len(rows)) - np.repeat(np.cumsum(rated) - rated, rated)
    value = np.where(position == seen[rows], -1.0, np.where(rng.random(len(rows)) < 0.08, 0.0, 1.0))
    value[rng.random(len(rows)) < 0.01] = np.nan
    return annotator[rows] + 1000, solution[rows], position, value


def timed(function, *args, **kwargs):
    start = time.perf_counter()
    result = function(*args, **kwargs)
    return result, time.perf_counter() - start


def peak_mib(function, *args, **kwargs):
    tracemalloc.start()
    try:
        function(*args, **kwargs)
        return tracemalloc.get_traced_memory()[1] / 2**20
    finally:
        tracemalloc.stop()


def import_seconds(module):
    probe = f"import time, numpy; t = time.perf_counter(); import {module}; print(time.perf_counter() - t)"
    return float(subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout)


def undefined_as_nan(function, *args, **kwargs):
    try:
        return function(*args, **kwargs)
    except ag.AgreementUndefined:
        return float("nan")


# Our arithmetic (what labeling.stats.agreement keeps, or would keep, per statistic) -----------


def ours_alpha(table):
    """Alpha from the summed per-item coincidences: the arithmetic the bootstrap runs per replicate."""
    return ag._alpha(ag._item_coincidences(ag.value_counts(table)).sum(0), table.domain, "ordinal")


def ours_per_annotator_alpha(table):
    """Each annotator's alpha, every item's coincidences summed per rater in one pass."""
    counts = ag.value_counts(table)
    contributions = np.zeros((len(counts), counts.shape[1] ** 2))
    contributions[counts.sum(1) >= 2] = ag._item_coincidences(counts)
    r = len(table.annotators)
    per_rater = np.column_stack([np.bincount(table.rater, weights=contributions[table.item, k], minlength=r)
                                 for k in range(contributions.shape[1])])
    return {a: ag._alpha(per_rater[code], table.domain, "ordinal") for code, a in enumerate(table.annotators.tolist())}


# Library paths, each from the rating table ---------------------------------------------------


def reliability_matrix(table):
    """annotators x items, the rating value or NaN: ``krippendorff.alpha``'s ``reliability_data``."""
    m = np.full((len(table.annotators), len(table.items)), np.nan)
    m[table.rater, table.item] = table.domain[table.value]
    return m


def library_alpha_on_matrix(table):
    import krippendorff

    return krippendorff.alpha(reliability_data=reliability_matrix(table), value_domain=table.domain,
                              level_of_measurement="ordinal")


def library_alpha_on_counts(table):
    import krippendorff

    return krippendorff.alpha(value_counts=ag.value_counts(table), value_domain=table.domain,
                              level_of_measurement="ordinal")


def pair_ratings(table):
    """``[(rater a, rater b, a's value codes, b's value codes)]`` on the items both rated."""
    a, b = ag._pairs_in_runs(table.item)  # every two ratings of one item
    r = len(table.annotators)
    key = table.rater[a] * r + table.rater[b]
    order = np.argsort(key, kind="stable")
    keys, starts = np.unique(key[order], return_index=True)
    x, y = np.split(table.value[a][order], starts[1:]), np.split(table.value[b][order], starts[1:])
    return [(k // r, k % r, xs, ys) for k, xs, ys in zip(keys.tolist(), x, y)]


def library_kappas_on_ratings(table, weights=None):
    """sklearn's kappa per pair, each fed the pair's two rating vectors."""
    from sklearn.metrics import cohen_kappa_score

    labels = np.arange(len(table.domain))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # undefined pairs warn and give NaN
        return {(a, b): cohen_kappa_score(x, y, labels=labels, weights=weights) for a, b, x, y in pair_ratings(table)}


def library_kappas_on_tables(table, weights=None):
    """sklearn's kappa per pair, each fed the pair's contingency table as nine weighted samples."""
    from sklearn.metrics import cohen_kappa_score

    v = len(table.domain)
    pairs, tables = ag._pair_tables(table, None)
    i, j = (c.ravel() for c in np.indices((v, v)))
    labels = np.arange(v)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return {(a, b): cohen_kappa_score(i, j, labels=labels, weights=weights, sample_weight=t.ravel())
                for (a, b), t in zip(pairs.tolist(), tables)}


def library_per_annotator_alpha(table):
    """``krippendorff.alpha`` once per annotator, on the value counts of the items they rated."""
    import krippendorff

    counts = ag.value_counts(table)
    order = np.argsort(table.rater, kind="stable")  # each rater's items stay in item order
    bounds = np.searchsorted(table.rater[order], np.arange(len(table.annotators) + 1))
    result = {}
    for code, annotator in enumerate(table.annotators.tolist()):
        mine = counts[table.item[order[bounds[code]:bounds[code + 1]]]]
        try:
            result[annotator] = krippendorff.alpha(value_counts=mine, value_domain=table.domain,
                                                   level_of_measurement="ordinal")
        except ValueError:  # nothing pairable
            result[annotator] = float("nan")
    return result


def library_bootstrap(statistic, rows, replicates, seed=0):
    """The library statistic once per replicate, on ``rows`` (one per item) drawn with replacement."""
    rng = np.random.default_rng(seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return [statistic(rows[rng.integers(0, len(rows), len(rows))]) for _ in range(replicates)]


def library_bootstrap_alpha(table, replicates):
    import krippendorff

    counts = ag.value_counts(table)
    return library_bootstrap(lambda c: krippendorff.alpha(value_counts=c, value_domain=table.domain,
                                                          level_of_measurement="ordinal"),
                             counts[counts.sum(1) >= 2], replicates)


# Report -------------------------------------------------------------------------------------


def agree(ours, theirs, tol=1e-9):
    ours, theirs = np.asarray(ours, float), np.asarray(theirs, float)
    both_nan = np.isnan(ours) & np.isnan(theirs)
    return bool((both_nan | (np.abs(ours - theirs) < tol)).all())


def row(name, ours_s, lib_s, same, *, ours_mib=None, lib_mib=None, note=""):
    mem = f"  peak MiB ours {ours_mib:7.1f}  library {lib_mib:7.1f}" if ours_mib is not None else ""
    ratio = lib_s / ours_s if ours_s > 0 else float("inf")
    print(f"{name:<38} ours {ours_s:8.3f} s  library {lib_s:8.3f} s  (x{ratio:6.1f}){mem}  agree: {same}{note}",
          flush=True)


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m bench.agreement", description=__doc__.split("\n")[0])
    parser.add_argument("--ratings", type=int, default=1_000_000)
    parser.add_argument("--annotators", type=int, default=40)
    parser.add_argument("--overlap", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--library-replicates", type=int, default=10,
                        help="replicates of the library bootstrap actually timed (then scaled)")
    args = parser.parse_args(argv)

    columns = synthetic_columns(args.ratings, args.annotators, args.overlap, args.seed)
    table, build_s = timed(ag.rating_table, *columns, domain=DOMAIN)
    per_item = np.bincount(np.bincount(table.item), minlength=args.overlap + 1)
    pairs = len(np.unique(table.rater[ag._pairs_in_runs(table.item)[0]] * len(table.annotators)
                          + table.rater[ag._pairs_in_runs(table.item)[1]]))
    print(f"{len(table.rater):,} ratings ({int(np.isnan(columns[3]).sum()):,} NaN left out), "
          f"{len(table.annotators)} annotators, {len(table.items):,} items rated by 1..{args.overlap}: "
          f"{per_item[1:].tolist()}, {pairs} annotator pairs sharing items; load average {os.getloadavg()[0]:.2f}")
    print(f"{'rating_table (shared by every path)':<38} {build_s:8.3f} s  peak MiB "
          f"{peak_mib(ag.rating_table, *columns, domain=DOMAIN):.1f}")
    for module in ("krippendorff", "sklearn.metrics"):
        print(f"{'import ' + module:<38} {import_seconds(module):8.3f} s (in a fresh process, numpy already loaded)")

    # Krippendorff's alpha, ordinal.
    ours, ours_s = timed(ours_alpha, table)
    ours_mib = peak_mib(ours_alpha, table)
    for name, path in (("reliability matrix", library_alpha_on_matrix), ("value counts", library_alpha_on_counts)):
        lib, lib_s = timed(path, table)
        row(f"alpha, {name}", ours_s, lib_s, agree(ours, lib), ours_mib=ours_mib, lib_mib=peak_mib(path, table),
            note=f"  (alpha {ours:.6f})")

    # Each annotator's alpha on the items they rated.
    ours, ours_s = timed(ours_per_annotator_alpha, table)
    lib, lib_s = timed(library_per_annotator_alpha, table)
    row("alpha per annotator", ours_s, lib_s, agree([ours[a] for a in lib], list(lib.values())),
        ours_mib=peak_mib(ours_per_annotator_alpha, table), lib_mib=peak_mib(library_per_annotator_alpha, table))

    # Cohen's kappa, every pair.
    for weights in (None, "linear"):
        ours, ours_s = timed(ag.cohen_kappa_matrix, table, weights=weights)
        flat = {(int(np.searchsorted(table.annotators, a)), int(np.searchsorted(table.annotators, b))):
                (np.nan if p.kappa is None else p.kappa) for a, others in ours.items() for b, p in others.items()}
        ours_mib = peak_mib(ag.cohen_kappa_matrix, table, weights=weights)
        for name, path in (("pair ratings", library_kappas_on_ratings), ("pair tables", library_kappas_on_tables)):
            lib, lib_s = timed(path, table, weights=weights)
            same = len(lib) * 2 == len(flat) and agree([flat[k] for k in lib], list(lib.values()))
            row(f"kappa matrix {weights or 'unweighted'}, {name}", ours_s, lib_s, same,
                ours_mib=ours_mib, lib_mib=peak_mib(path, table, weights=weights))

    # Alpha's bootstrap interval: the library called once per replicate, timed on a few and scaled.
    k, n = args.library_replicates, DASHBOARD_REPLICATES
    _, ours_s = timed(ag.bootstrap_alpha, table, replicates=n)
    _, lib_s = timed(library_bootstrap_alpha, table, k)
    row(f"bootstrap alpha, {n} replicates", ours_s, lib_s * n / k, "n/a (random draws)",
        note=f"  (library scaled from {k} replicates)")

    print(f"{'first-error agreement':<38} ours {timed(ag.first_error_agreement, table)[1]:8.3f} s  "
          "(no library computes it)")
    # What the dashboard shows per annotator since issue #30: kappa against the others' majority,
    # with its interval through the same bootstrap, for every annotator at once.
    _, ours_s = timed(ag.per_annotator, table, replicates=n)
    print(f"{'kappa vs majority, ' + str(n) + ' replicates':<38} ours {ours_s:8.3f} s  "
          f"(every annotator, with the pairwise kappa matrix; no library computes it)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
