"""Agreement between annotators on step ratings: pure functions, no Django.

Ratings arrive as four parallel columns, one row per rating: annotator, solution, position,
value (PRM800K's ordinal -1 < 0 < +1; a missing rating is simply an absent row, or NaN in
``value``). An *item* is one step slot, ``(solution, position)``; not every annotator rates
every item. ``rating_table`` indexes the columns once; every statistic takes that table.

Statistics (what the lead dashboard shows, labeling/stats/dashboard.py): Krippendorff's alpha
(ordinal by default; nominal and interval as options) with a percentile bootstrap interval,
Cohen's kappa for every pair of annotators (unweighted, linear or quadratic weights),
agreement on the position of the first error, and each annotator against the others: Cohen's
kappa of their ratings against the majority of the *other* annotators' ratings of the same
items, with its bootstrap interval (``per_annotator``).

Who computes what was decided by ``python -m bench.agreement`` at a million ratings; its
figures are in docs/performance.md, "Agreement statistics":

- Krippendorff's alpha, overall and per annotator: the ``krippendorff`` package, on the value
  counts of the items (as fast as our own arithmetic was, near enough).
- Cohen's kappa stays ours, for speed: the dashboard needs it for every pair of annotators at
  once, which here is one ``np.bincount`` for all their contingency tables, and scikit-learn's
  ``cohen_kappa_score`` is one call per pair, many times slower (seconds at 40 annotators,
  past the dashboard's cold budget).
- The bootstrap interval of alpha stays ours, for speed: no library resamples, and calling one
  per replicate takes seconds per interval where ours takes milliseconds. It keeps the
  coincidence arithmetic, summed over distinct item patterns.
- First-error agreement is ours: no library computes it.

The tests check every statistic against these packages to 1e-9.

A statistic that has no value on the data (no item rated twice, one value only) raises
``AgreementUndefined`` with the reason, which a page can show as it is.
"""
from typing import NamedTuple

import krippendorff
import numpy as np

LEVELS = ("nominal", "ordinal", "interval")
WEIGHTS = (None, "linear", "quadratic")


class AgreementUndefined(ValueError):
    """The statistic has no value on these ratings; the message says why."""


class RatingTable(NamedTuple):
    """Ratings indexed for the statistics, sorted by item, then annotator.

    ``rater``, ``item`` and ``value`` hold one code per rating: indices into ``annotators``
    (the annotator ids), ``items`` (an (n, 2) array of solution, position) and ``domain``
    (the sorted rating values).
    """

    rater: np.ndarray
    item: np.ndarray
    value: np.ndarray
    annotators: np.ndarray
    items: np.ndarray
    domain: np.ndarray


class PairKappa(NamedTuple):
    kappa: float | None  # None where undefined (both annotators used one and the same value)
    shared: int


class FirstErrorAgreement(NamedTuple):
    share: float
    agreeing_pairs: int
    pairs: int
    solutions: int


class Interval(NamedTuple):
    """A percentile bootstrap interval; ``undefined`` replicates had no value and are left out."""

    estimate: float
    low: float
    high: float
    confidence: float
    replicates: int
    undefined: int


class AnnotatorAgreement(NamedTuple):
    # Cohen's kappa of the annotator against the others' majority (``majority_kappa``), with its
    # interval; None where undefined, and ``reason`` says why.
    majority: Interval | None
    majority_items: int  # items the kappa is on: rated by others too, with a single most frequent value
    reason: str | None
    items: int  # items this annotator rated that someone else rated too
    mean_kappa: float | None  # mean Cohen's kappa with the partners that have a defined kappa
    partners: int


def rating_table(annotator, solution, position, value, *, domain=None):
    """Index four parallel columns of ratings into a ``RatingTable``.

    Rows whose value is NaN (or None) are missing ratings and are dropped. ``domain`` fixes
    the possible values (default: the values present). Raises ValueError when a value lies
    outside ``domain`` or one annotator rated one item twice.
    """
    value = np.asarray(value, dtype=float)
    present = ~np.isnan(value)
    columns = [np.asarray(c)[present] for c in (annotator, solution, position)]
    value = value[present]
    if not (len(columns[0]) == len(columns[1]) == len(columns[2]) == len(value)):
        raise ValueError("annotator, solution, position and value must have the same length")
    domain = np.unique(value) if domain is None else np.unique(np.asarray(domain, dtype=float))
    codes = np.searchsorted(domain, value)
    outside = (codes >= len(domain)) | (domain[np.minimum(codes, len(domain) - 1)] != value)
    if outside.any():
        raise ValueError(f"rating value {value[outside][0]:g} is outside the domain {domain.tolist()}")
    annotators, rater = np.unique(columns[0], return_inverse=True)
    items, item = _index_items(columns[1].astype(np.int64), columns[2].astype(np.int64))
    key = item * max(len(annotators), 1) + rater
    order = np.argsort(key, kind="stable")
    twice = np.flatnonzero(np.diff(key[order]) == 0)
    if len(twice):
        at = order[twice[0]]
        raise ValueError(
            f"annotator {annotators[rater[at]]} rated item {tuple(items[item[at]].tolist())} twice"
        )
    return RatingTable(rater[order], item[order], codes[order], annotators, items, domain)


def _index_items(solution, position):
    # One int64 key per (solution, position) sorts like the pair and is much faster to unique.
    small = not len(solution) or (
        solution.min() >= 0 and position.min() >= 0 and solution.max() < 2**31 and position.max() < 2**32
    )
    if not small:
        items, item = np.unique(np.stack([solution, position], 1), axis=0, return_inverse=True)
        return items, item.ravel()
    keys, item = np.unique((solution << 32) | position, return_inverse=True)
    return np.stack([keys >> 32, keys & (2**32 - 1)], 1), item


def value_counts(table):
    """(items, values) array: how many annotators gave each value to each item."""
    v = len(table.domain)
    return np.bincount(table.item * v + table.value, minlength=len(table.items) * v).reshape(-1, v)


# Krippendorff's alpha -----------------------------------------------------------------------


def krippendorff_alpha(table, *, level="ordinal"):
    """Krippendorff's alpha over all annotators, missing ratings allowed (``krippendorff.alpha``).

    Items rated fewer than twice are not pairable and drop out. ``level`` picks the distance:
    ``"ordinal"`` (default; suits -1 < 0 < +1), ``"nominal"`` or ``"interval"``.
    """
    _check_level(level)
    return _defined(_package_alpha(value_counts(table), table.domain, level), "Krippendorff's alpha", _alpha_reason)


def _package_alpha(counts, domain, level):
    """``krippendorff.alpha`` on (items, values) counts; NaN where alpha has no value."""
    if len(domain) < 2 or not (counts.sum(1) >= 2).any():
        return np.nan  # the package raises here; the caller gives the reason
    with np.errstate(invalid="ignore", divide="ignore"):  # one value only: 0 / 0
        return float(krippendorff.alpha(value_counts=counts, value_domain=domain, level_of_measurement=level))


def _item_coincidences(counts):
    """(pairable items, values**2): each pairable item's share of the coincidence matrix (bootstrap)."""
    m = counts.sum(1)
    c = counts[m >= 2].astype(float)
    v = c.shape[1]
    o = c[:, :, None] * c[:, None, :]
    o[:, np.arange(v), np.arange(v)] -= c
    o /= (m[m >= 2] - 1)[:, None, None]
    return o.reshape(-1, v * v)


def _alpha(coincidences, domain, level):
    """Alpha from a summed coincidence matrix: what ``bootstrap_alpha`` evaluates per replicate."""
    v = len(domain)
    o = coincidences.reshape(v, v)
    n_c = o.sum(0)
    n = n_c.sum()
    if n < 2:
        return np.nan
    e = (np.outer(n_c, n_c) - np.diag(n_c)) / (n - 1)
    d = _distances(domain, n_c, level)
    expected = (e * d).sum()
    return np.nan if expected <= 0 else 1.0 - (o * d).sum() / expected


def _distances(domain, n_c, level):
    i, j = np.indices((len(domain), len(domain)))
    if level == "nominal":
        return (i != j).astype(float)
    if level == "interval":
        return (domain[i] - domain[j]) ** 2
    # Ordinal: the values between two ranks (half of each end) as the distance, squared.
    cumulative = np.concatenate([[0.0], np.cumsum(n_c)])
    lo, hi = np.minimum(i, j), np.maximum(i, j)
    return (cumulative[hi + 1] - cumulative[lo] - (n_c[i] + n_c[j]) / 2) ** 2


def _alpha_reason(_):
    return "no item was rated by two annotators, or every pairable rating has the same value"


def _check_level(level):
    if level not in LEVELS:
        raise ValueError(f"level must be one of {', '.join(LEVELS)}; got {level!r}")


# Cohen's kappa -------------------------------------------------------------------------------


def cohen_kappa_matrix(table, *, weights=None, min_shared=1):
    """Cohen's kappa for every pair of annotators that share at least ``min_shared`` items.

    Returns ``{annotator: {other: PairKappa(kappa, shared)}}`` holding both directions (kappa
    is symmetric); pairs below ``min_shared`` are absent. ``weights``: None (unweighted),
    ``"linear"`` or ``"quadratic"`` disagreement weights on the rank distance of the values.
    """
    pair_raters, tables = _pair_tables(table, weights)
    shared = tables.sum((1, 2))
    keep = shared >= min_shared
    kappas = _kappas(tables[keep], len(table.domain), weights)
    matrix = {}
    for (a, b), kappa, n in zip(pair_raters[keep].tolist(), kappas.tolist(), shared[keep].tolist()):
        pair = PairKappa(None if kappa != kappa else kappa, n)
        ida, idb = table.annotators[a].item(), table.annotators[b].item()
        matrix.setdefault(ida, {})[idb] = pair
        matrix.setdefault(idb, {})[ida] = pair
    return matrix


def _pair_tables(table, weights):
    """(pairs, 2) rater codes and (pairs, values, values) contingency tables of co-rated items."""
    if weights not in WEIGHTS:
        raise ValueError(f"weights must be None, 'linear' or 'quadratic'; got {weights!r}")
    a, b = _pairs_in_runs(table.item)
    r, v = len(table.annotators), len(table.domain)
    pair_keys, pair = _dense_unique(table.rater[a] * r + table.rater[b], r * r)
    cells = pair * v * v + table.value[a] * v + table.value[b]
    tables = np.bincount(cells, minlength=len(pair_keys) * v * v).reshape(-1, v, v)
    return np.stack([pair_keys // r, pair_keys % r], 1), tables


def _dense_unique(keys, size):
    """``np.unique(keys, return_inverse=True)`` for keys in [0, size): a lookup when size allows."""
    if size > 1 << 24:
        return np.unique(keys, return_inverse=True)
    present = np.bincount(keys, minlength=size) > 0
    distinct = np.flatnonzero(present)
    lookup = np.cumsum(present) - 1
    return distinct, lookup[keys]


def _kappas(tables, v, weights):
    """Kappa per contingency table, NaN where chance disagreement is zero."""
    i, j = np.indices((v, v))
    w = {None: (i != j).astype(float), "linear": np.abs(i - j).astype(float), "quadratic": (i - j) ** 2.0}[weights]
    tables = tables.astype(float)
    n = tables.sum((1, 2))
    observed = (tables * w).sum((1, 2))
    expected = np.einsum("pi,pj,ij->p", tables.sum(2), tables.sum(1), w) / np.where(n > 0, n, 1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(expected > 0, 1.0 - observed / np.where(expected > 0, expected, 1), np.nan)


def _pairs_in_runs(groups):
    """Index pairs (i < j) of every two rows inside each run of equal values of ``groups``.

    Runs are handled size by size, so the only loop is over distinct run lengths.
    """
    starts = np.flatnonzero(np.r_[True, groups[1:] != groups[:-1]]) if len(groups) else np.zeros(0, int)
    sizes = np.diff(np.r_[starts, len(groups)])
    firsts, seconds = [np.zeros(0, np.int64)], [np.zeros(0, np.int64)]
    for size in np.unique(sizes[sizes >= 2]).tolist():
        iu, ju = np.triu_indices(size, 1)
        base = starts[sizes == size][:, None]
        firsts.append((base + iu).ravel())
        seconds.append((base + ju).ravel())
    return np.concatenate(firsts), np.concatenate(seconds)


# First error ---------------------------------------------------------------------------------


def first_error_agreement(table, *, error_value=-1):
    """Share of annotator pairs on a solution that put the first error at the same position.

    Over solutions rated by at least two annotators; a pair agrees when both put their first
    ``error_value`` at the same position or neither found one.
    """
    r = len(table.annotators)
    solution, position = table.items[table.item, 0], table.items[table.item, 1]
    passes, pass_of = np.unique(solution * r + table.rater, return_inverse=True)
    first = np.full(len(passes), -1, dtype=np.int64)  # -1: no error found
    error_code = np.searchsorted(table.domain, error_value)
    if error_code < len(table.domain) and table.domain[error_code] == error_value:
        errors = table.value == error_code
        # Sorting by position descending lets the smallest error position be written last.
        order = np.argsort(-position[errors], kind="stable")
        first[pass_of[errors][order]] = position[errors][order]
    a, b = _pairs_in_runs(passes // r)
    if len(a) == 0:
        raise AgreementUndefined("no solution was rated by two annotators")
    agree = int((first[a] == first[b]).sum())
    return FirstErrorAgreement(agree / len(a), agree, len(a), len(np.unique((passes // r)[a])))


# Bootstrap -----------------------------------------------------------------------------------


def bootstrap_alpha(table, *, level="ordinal", replicates=1000, confidence=0.95, seed=0):
    """Percentile interval for Krippendorff's alpha, resampling the pairable items.

    Alpha depends on an item only through its value counts, so resampling n items with
    replacement is drawing, for each distinct count row (in ``np.unique(rows, axis=0)``
    order), how many of the n draws land on it: ``np.random.default_rng(seed).multinomial(n,
    share of each row, size=replicates)``. That is the same distribution as drawing item
    indices, costs nothing per item, and can be reproduced from the seed.
    """
    _check_level(level)
    counts = value_counts(table)
    statistic = lambda s: _alpha(s, table.domain, level)  # noqa: E731
    return _bootstrap(counts[counts.sum(1) >= 2], _item_coincidences, statistic, "Krippendorff's alpha",
                      replicates, confidence, seed)


def _distinct_rows(rows):
    """``np.unique(rows, axis=0, return_counts=True)`` for small non-negative ints, much faster."""
    base = int(rows.max()) + 1
    if base ** rows.shape[1] >= 1 << 62:
        return np.unique(rows, axis=0, return_counts=True)
    # Most significant column first, so keys sort as the rows do.
    keys = rows.astype(np.int64) @ (base ** np.arange(rows.shape[1] - 1, -1, -1, dtype=np.int64))
    distinct, first, frequency = np.unique(keys, return_index=True, return_counts=True)
    return rows[first], frequency


def _bootstrap(rows, contributions, statistic, name, replicates, confidence, seed, many=None):
    """Interval for a statistic of the sum of per-item contributions, each a function of a row.

    ``many``, when given, is ``statistic`` over a (replicates, k) array of sums at once.
    """
    if not 0 < confidence < 1:
        raise ValueError("confidence must lie between 0 and 1")
    if len(rows) == 0:
        raise AgreementUndefined(f"{name} is undefined: no item to resample")
    patterns, frequency = _distinct_rows(rows)
    per_pattern = contributions(patterns)
    estimate = _defined(statistic(frequency @ per_pattern), name, lambda _: "no defined value on these ratings")
    n = len(rows)
    draws = np.random.default_rng(seed).multinomial(n, frequency / n, size=replicates)
    sums = draws @ per_pattern
    values = many(sums) if many else np.array([statistic(s) for s in sums])
    defined = values[~np.isnan(values)]
    if len(defined) == 0:
        raise AgreementUndefined(f"{name}: no bootstrap replicate had a value")
    low, high = np.percentile(defined, [50 * (1 - confidence), 50 * (1 + confidence)])
    return Interval(estimate, float(low), float(high), confidence, replicates, replicates - len(defined))


# Each annotator against the others ------------------------------------------------------------


def majority_pairs(table, counts=None):
    """``(rater, value, majority)`` code arrays: each rating beside the majority of the others.

    The *others* of a rating are the other annotators' ratings of the same item; their majority
    is their single most frequent value. Ratings whose item nobody else rated, or whose others
    tie for the most frequent value (one +1 and one -1), have no majority and are left out. The
    annotator's own rating never counts towards it: that is what makes this a leave-one-out
    figure (alpha over an annotator's items with their own ratings in was the same for everyone
    where everyone rated every item, issue #30).
    """
    counts = value_counts(table) if counts is None else counts
    v = len(table.domain)
    others = counts[table.item] - np.eye(v, dtype=counts.dtype)[table.value]
    top = others.max(1) if len(others) else np.zeros(0, counts.dtype)
    clear = (top > 0) & ((others == top[:, None]).sum(1) == 1)
    return table.rater[clear], table.value[clear], others[clear].argmax(1)


def majority_kappa(values, majority, v, *, weights=None, replicates=200, confidence=0.95, seed=0):
    """Cohen's kappa of ``values`` against ``majority`` (value codes in [0, v)), with its interval.

    Items are resampled as ``bootstrap_alpha`` resamples them (the same ``_bootstrap``); with
    ``replicates=0`` the interval is the estimate alone. Raises ``AgreementUndefined``.
    """
    return pair_kappa(values, majority, v, weights=weights, replicates=replicates, confidence=confidence,
                      seed=seed, name="kappa against the others' majority",
                      empty="none of their items has a majority among the others",
                      one_value="they, or the others' majority, gave one value only")


def pair_kappa(a, b, v, *, weights=None, replicates=200, confidence=0.95, seed=0, name="kappa",
               empty="no item was labelled by both", one_value="one of the two gave one value only"):
    """Cohen's kappa of two raters' value codes ``a`` and ``b`` on the same items, with its bootstrap
    interval (``majority_kappa``'s rule); ``name``, ``empty`` and ``one_value`` word an
    ``AgreementUndefined``."""
    rows = np.stack([a, b], 1).astype(np.int64)
    many = lambda sums: _kappas(sums.reshape(-1, v, v), v, weights)  # noqa: E731
    if len(rows) == 0:
        raise AgreementUndefined(f"{name} is undefined: {empty}")
    table = np.bincount(rows[:, 0] * v + rows[:, 1], minlength=v * v)
    estimate = _defined(many(table[None])[0], name, lambda _: one_value)
    if not replicates:
        return Interval(estimate, estimate, estimate, confidence, 0, 0)
    cells = lambda patterns: np.eye(v * v)[patterns[:, 0] * v + patterns[:, 1]]  # noqa: E731
    return _bootstrap(rows, cells, lambda s: many(s[None])[0], name, replicates, confidence, seed, many=many)


def per_annotator(table, *, weights=None, min_shared=1, replicates=200, confidence=0.95, seed=0):
    """``{annotator: AnnotatorAgreement}``: kappa against the others' majority, and mean pairwise kappa.

    The majority kappa compares each of the annotator's ratings with the majority of the other
    annotators' ratings of that item (``majority_pairs``); ``replicates`` bootstrap draws over
    their items give its interval (``majority_kappa``). ``weights`` apply to both kappas.
    """
    v, r = len(table.domain), len(table.annotators)
    counts = value_counts(table)
    rater, value, majority = majority_pairs(table, counts)
    order = np.argsort(rater, kind="stable")
    bounds = np.searchsorted(rater[order], np.arange(r + 1))
    # Items each annotator rated that someone else rated too: one count per rating, no sort.
    shared = np.bincount(table.rater[counts.sum(1)[table.item] >= 2], minlength=r)
    kappas = cohen_kappa_matrix(table, weights=weights, min_shared=min_shared)
    result = {}
    for code, annotator in enumerate(table.annotators.tolist()):
        rows = order[bounds[code]:bounds[code + 1]]
        try:
            interval, reason = majority_kappa(value[rows], majority[rows], v, weights=weights, replicates=replicates,
                                              confidence=confidence, seed=seed), None
        except AgreementUndefined as exc:
            interval, reason = None, str(exc)
        defined = [p.kappa for p in kappas.get(annotator, {}).values() if p.kappa is not None]
        result[annotator] = AnnotatorAgreement(
            interval, len(rows), reason, int(shared[code]),
            float(np.mean(defined)) if defined else None, len(defined),
        )
    return result


def _defined(x, name, reason):
    if x is None or np.isnan(x):
        raise AgreementUndefined(f"{name} is undefined: {reason(x)}")
    return float(x)
