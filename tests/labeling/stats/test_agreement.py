"""Agreement statistics against hand-computed figures, published examples and reference packages.

References: ``krippendorff`` (alpha) and scikit-learn's ``cohen_kappa_score``; each is compared
to 1e-9 on random rating matrices with missing values and on matrices built from real PRM800K
ratings. Where the module calls the package itself (alpha), the reference gets the ratings in
its own shape (a reliability matrix, raters x items), so the tests check our indexing and value
counts; the arithmetic the module keeps for the bootstrap is checked through the bootstrap's
estimate.
"""
import json
import warnings
from itertools import combinations

import krippendorff
import numpy as np
import pytest
from sklearn.metrics import cohen_kappa_score

from labeling.data import open_text
from labeling.stats import agreement as ag

TOL = 1e-9


def random_matrix(rng, raters, items, *, missing=0.3, domain=(-1, 0, 1), agree=0.6):
    """raters x items, NaN for missing: raters copy a shared 'truth' with probability ``agree``."""
    domain = np.asarray(domain, dtype=float)
    truth = rng.choice(domain, items)
    m = np.where(rng.random((raters, items)) < agree, truth, rng.choice(domain, (raters, items)))
    m[rng.random((raters, items)) < missing] = np.nan
    return m


def table_from_matrix(matrix, *, domain=None):
    """A table from a raters x items matrix with NaN for missing (the reference packages' shape).

    Item j becomes (solution j, position 0) and rater i becomes annotator i.
    """
    matrix = np.asarray(matrix, dtype=float)
    raters, items = np.indices(matrix.shape)
    return ag.rating_table(raters.ravel(), items.ravel(), np.zeros(matrix.size, int), matrix.ravel(), domain=domain)


def reference_alpha(matrix, level):
    try:
        return krippendorff.alpha(reliability_data=matrix, level_of_measurement=level)
    except ValueError:  # fewer than two values, or no pairable unit
        return np.nan


def our_alpha(table, level):
    try:
        return ag.krippendorff_alpha(table, level=level)
    except ag.AgreementUndefined:
        return np.nan


def reference_kappa(x, y, weights):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # sklearn warns where kappa is undefined (NaN)
        return cohen_kappa_score(x, y, weights=weights)


def assert_same(ours, reference):
    if np.isnan(reference):
        assert ours is None or np.isnan(ours)
    else:
        assert abs(ours - reference) < TOL, (ours, reference)


# Krippendorff's alpha ------------------------------------------------------------------------


@pytest.mark.parametrize("level", ag.LEVELS)
def test_alpha_matches_krippendorff_package_on_random_matrices_with_missing_values(level):
    rng = np.random.default_rng(7)
    checked = 0
    for trial in range(150):
        domain = (-1, 0, 1) if trial % 3 else (1, 2, 3, 4, 5)
        m = random_matrix(rng, rng.integers(2, 9), rng.integers(2, 60), missing=rng.uniform(0, 0.7),
                          domain=domain, agree=rng.uniform(0, 1))
        reference = reference_alpha(m, level)
        table = table_from_matrix(m)
        assert_same(our_alpha(table, level), reference)
        if not np.isnan(reference):  # the bootstrap's own coincidence arithmetic, every level
            assert_same(ag.bootstrap_alpha(table, level=level, replicates=20).estimate, reference)
        checked += not np.isnan(reference)
    assert checked > 120  # most matrices had a defined alpha


def test_alpha_on_the_reference_packages_documented_examples():
    # Krippendorff's three-coder example (as in the krippendorff package's documentation).
    m = [[np.nan, np.nan, np.nan, np.nan, np.nan, 3, 4, 1, 2, 1, 1, 3, 3, np.nan, 3],
         [1, np.nan, 2, 1, 3, 3, 4, 3, np.nan, np.nan, np.nan, np.nan, np.nan, np.nan, np.nan],
         [np.nan, np.nan, 2, 1, 3, 4, 4, np.nan, 2, 1, 1, 3, 3, np.nan, 4]]
    table = table_from_matrix(m)
    assert ag.krippendorff_alpha(table, level="nominal") == pytest.approx(0.691358, abs=1e-6)
    assert ag.krippendorff_alpha(table, level="interval") == pytest.approx(0.810845, abs=1e-6)
    m = [[1, 2, 3, 3, 2, 1, 4, 1, 2, np.nan, np.nan, np.nan],
         [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, np.nan, 3],
         [np.nan, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, np.nan],
         [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, np.nan]]
    assert ag.krippendorff_alpha(table_from_matrix(m)) == pytest.approx(0.815, abs=5e-4)


def test_alpha_computed_by_hand():
    # Two raters, five items (A..E), plus item F that only rater 0 rated (not pairable).
    #   A (1,1)  B (1,1)  C (-1,-1)  D (1,-1)  E (0,1)
    # Coincidences: o[1,1]=4, o[-1,-1]=2, o[1,-1]=o[-1,1]=1, o[0,1]=o[1,0]=1.
    # n_-1=3, n_0=1, n_1=6, n=10; expected e[c,k]=n_c n_k/9: e[1,-1]=2, e[0,1]=2/3, e[0,-1]=1/3.
    # nominal:  1 - 4 / (2 * (2 + 2/3 + 1/3))                    = 1/3
    # interval: d(1,-1)=4, d(0,1)=d(0,-1)=1: 1 - (2*4 + 2*1) / (2 * (8 + 2/3 + 1/3)) = 4/9
    # ordinal:  d(-1,0)=(3+1-2)^2=4, d(0,1)=(1+6-3.5)^2=12.25, d(-1,1)=(10-4.5)^2=30.25:
    #           1 - (2*30.25 + 2*12.25) / (2 * (2*30.25 + 2/3*12.25 + 1/3*4)) = 1 - 85/140 = 11/28
    m = [[1, 1, -1, 1, 0, 1],
         [1, 1, -1, -1, 1, np.nan]]
    table = table_from_matrix(m)
    assert ag.krippendorff_alpha(table, level="nominal") == pytest.approx(1 / 3, abs=TOL)
    assert ag.krippendorff_alpha(table, level="interval") == pytest.approx(4 / 9, abs=TOL)
    assert ag.krippendorff_alpha(table) == pytest.approx(11 / 28, abs=TOL)
    assert ag.krippendorff_alpha(table) == pytest.approx(reference_alpha(np.array(m, float), "ordinal"), abs=TOL)


def test_perfect_agreement_is_one_and_systematic_disagreement_is_negative():
    rng = np.random.default_rng(1)
    truth = rng.choice([-1.0, 0.0, 1.0], 40)
    perfect = np.tile(truth, (4, 1))
    perfect[rng.random(perfect.shape) < 0.3] = np.nan
    table = table_from_matrix(perfect)
    for level in ag.LEVELS:
        assert ag.krippendorff_alpha(table, level=level) == pytest.approx(1.0, abs=TOL)
    for row in ag.cohen_kappa_matrix(table).values():
        assert all(p.kappa == pytest.approx(1.0, abs=TOL) for p in row.values())

    # One rater says +1 wherever the other says -1, and the reverse, on 10 + 10 items:
    # o[1,-1] = o[-1,1] = 20, n_1 = n_-1 = 20, e[1,-1] = 400/39: alpha = 1 - 40 / (800/39) = -0.95.
    x = np.array([1.0, -1.0] * 10)
    opposite = table_from_matrix([x, -x])
    assert ag.krippendorff_alpha(opposite) == pytest.approx(-0.95, abs=TOL)
    assert ag.cohen_kappa_matrix(opposite)[0][1].kappa == pytest.approx(-1.0, abs=TOL)


def test_undefined_alpha_says_why():
    with pytest.raises(ag.AgreementUndefined, match="no item was rated by two annotators"):
        ag.krippendorff_alpha(table_from_matrix([[1, np.nan], [np.nan, -1]]))
    with pytest.raises(ag.AgreementUndefined):
        ag.krippendorff_alpha(table_from_matrix([[1, 1], [1, 1]]))  # one value only
    with pytest.raises(ValueError, match="level"):
        ag.krippendorff_alpha(table_from_matrix([[1, 0], [1, 0]]), level="ratio")


def test_rating_table_indexes_items_and_refuses_bad_input():
    table = ag.rating_table([7, 9, 7, 9, 7], [30, 30, 12, 12, 12], [2, 2, 0, 0, 1], [1, 0, -1, None, 1])
    assert table.annotators.tolist() == [7, 9]
    assert table.items.tolist() == [[12, 0], [12, 1], [30, 2]]  # (solution, position), sorted
    assert table.domain.tolist() == [-1, 0, 1]
    # Sorted by item then annotator; the None rating is missing and gone.
    decoded = [(table.annotators[r], *table.items[i], table.domain[v])
               for r, i, v in zip(table.rater, table.item, table.value)]
    assert decoded == [(7, 12, 0, -1), (7, 12, 1, 1), (7, 30, 2, 1), (9, 30, 2, 0)]
    # Ids too large for the packed item key take the slower path, with the same result.
    big = ag.rating_table([1, 2, 1], [2**40, 2**40, 5], [3, 3, 0], [1, 1, 0])
    assert big.items.tolist() == [[5, 0], [2**40, 3]] and big.item.tolist() == [0, 1, 1]
    with pytest.raises(ValueError, match=r"annotator 7 rated item \(12, 0\) twice"):
        ag.rating_table([7, 7], [12, 12], [0, 0], [1, 0])
    with pytest.raises(ValueError, match="outside the domain"):
        ag.rating_table([7], [12], [0], [2], domain=(-1, 0, 1))


# Cohen's kappa -------------------------------------------------------------------------------


@pytest.mark.parametrize("weights", ag.WEIGHTS)
def test_kappa_matrix_matches_sklearn_for_every_pair(weights):
    rng = np.random.default_rng(3)
    pairs = 0
    for _ in range(25):
        m = random_matrix(rng, rng.integers(2, 7), rng.integers(5, 50), missing=rng.uniform(0, 0.6),
                          agree=rng.uniform(0, 1))
        min_shared = int(rng.integers(1, 8))
        matrix = ag.cohen_kappa_matrix(table_from_matrix(m), weights=weights, min_shared=min_shared)
        for a, b in combinations(range(len(m)), 2):
            both = ~np.isnan(m[a]) & ~np.isnan(m[b])
            if both.sum() < min_shared:
                assert b not in matrix.get(a, {})
                continue
            pair = matrix[a][b]
            assert pair is matrix[b][a] and pair.shared == both.sum()
            assert_same(pair.kappa, reference_kappa(m[a][both], m[b][both], weights))
            pairs += 1
    assert pairs > 100


def test_kappa_undefined_pair_is_none():
    matrix = ag.cohen_kappa_matrix(table_from_matrix([[1, 1, 1], [1, 1, 1], [1, 0, -1]]))
    assert matrix[0][1] == ag.PairKappa(None, 3)  # both used +1 only
    assert matrix[0][2].kappa == 0.0


# First error ---------------------------------------------------------------------------------


def test_first_error_agreement_by_hand():
    rows = [  # annotator, solution, position, value
        # Solution 1: A and B put the first -1 at position 2 (A has a second -1 later), C finds none.
        ("A", 1, 0, 1), ("A", 1, 1, 0), ("A", 1, 2, -1), ("A", 1, 4, -1),
        ("B", 1, 0, 1), ("B", 1, 2, -1),
        ("C", 1, 0, 1), ("C", 1, 1, 1), ("C", 1, 2, 1), ("C", 1, 3, 1),
        # Solution 2: A and B find no error (agree); D puts it at 4 where the others stopped earlier.
        ("A", 2, 0, 1), ("B", 2, 0, 0), ("B", 2, 1, 1), ("D", 2, 4, -1),
        # Solution 3: one annotator only, not counted.
        ("A", 3, 0, -1),
    ]
    result = ag.first_error_agreement(ag.rating_table(*zip(*rows)))
    # pairs: sol 1 AB yes, AC no, BC no; sol 2 AB yes, AD no, BD no
    assert result == ag.FirstErrorAgreement(2 / 6, 2, 6, 2)
    with pytest.raises(ag.AgreementUndefined, match="no solution was rated by two annotators"):
        ag.first_error_agreement(ag.rating_table(["A", "B"], [1, 2], [0, 0], [1, 1]))


def test_first_error_agreement_matches_a_plain_loop():
    rng = np.random.default_rng(11)
    rows = []
    for solution in range(60):
        for annotator in rng.choice(8, rng.integers(1, 5), replace=False):
            for position in range(rng.integers(1, 8)):
                rows.append((annotator, solution, position, rng.choice([-1, 0, 1], p=[0.15, 0.15, 0.7])))
    firsts = {}
    for annotator, solution, position, value in rows:
        firsts.setdefault(solution, {}).setdefault(annotator, None)
        if value == -1 and (firsts[solution][annotator] is None or position < firsts[solution][annotator]):
            firsts[solution][annotator] = position
    agree = pairs = 0
    for by_annotator in firsts.values():
        for x, y in combinations(by_annotator.values(), 2):
            pairs += 1
            agree += x == y
    result = ag.first_error_agreement(ag.rating_table(*zip(*rows)))
    assert (result.agreeing_pairs, result.pairs) == (agree, pairs)
    assert result.share == pytest.approx(agree / pairs, abs=TOL)


# Bootstrap -----------------------------------------------------------------------------------


def resampled_items(rows, seed, replicates):
    """Per replicate, item indices reproducing agreement's draws (see bootstrap_alpha)."""
    patterns, inverse, frequency = np.unique(rows, axis=0, return_inverse=True, return_counts=True)
    inverse = inverse.ravel()
    draws = np.random.default_rng(seed).multinomial(len(rows), frequency / len(rows), size=replicates)
    # Items with the same row are interchangeable: take the first one of each pattern.
    first_of = np.array([np.flatnonzero(inverse == p)[0] for p in range(len(patterns))])
    return [np.repeat(first_of, d) for d in draws]


def percentile_interval(values, confidence):
    values = np.asarray(values)
    values = values[~np.isnan(values)]
    return np.percentile(values, [50 * (1 - confidence), 50 * (1 + confidence)])


def test_bootstrap_alpha_matches_the_reference_on_resampled_items():
    rng = np.random.default_rng(2)
    m = random_matrix(rng, 5, 80, missing=0.4, agree=0.6)
    table = table_from_matrix(m)
    interval = ag.bootstrap_alpha(table, replicates=300, confidence=0.9, seed=42)

    counts = ag.value_counts(table)
    pairable = np.flatnonzero(counts.sum(1) >= 2)  # items in (solution, position) order = columns
    reference = [reference_alpha(m[:, pairable[items]], "ordinal")
                 for items in resampled_items(counts[pairable], 42, 300)]
    low, high = percentile_interval(reference, 0.9)
    assert interval.estimate == pytest.approx(reference_alpha(m, "ordinal"), abs=TOL)
    assert (interval.low, interval.high) == pytest.approx((low, high), abs=TOL)
    assert interval.low < interval.estimate < interval.high
    assert interval == ag.bootstrap_alpha(table, replicates=300, confidence=0.9, seed=42)  # seeded
    assert interval != ag.bootstrap_alpha(table, replicates=300, confidence=0.9, seed=43)
    wider = ag.bootstrap_alpha(table, replicates=300, confidence=0.99, seed=42)
    assert wider.low <= interval.low and wider.high >= interval.high


# Each annotator against the others ------------------------------------------------------------


def reference_majority(m, a):
    """Per item, annotator ``a``'s rating and the others' single most frequent value (NaN: none)."""
    mine, majority = [], []
    for j in range(m.shape[1]):
        others = [x for b in range(m.shape[0]) if b != a and not np.isnan(x := m[b, j])]
        values, counts = np.unique(others, return_counts=True)
        if np.isnan(m[a, j]) or not len(values) or (counts == counts.max()).sum() > 1:
            continue
        mine.append(m[a, j])
        majority.append(values[counts.argmax()])
    return np.array(mine), np.array(majority)


def test_per_annotator_majority_kappa_and_mean_kappa_match_the_references():
    rng = np.random.default_rng(8)
    m = random_matrix(rng, 6, 70, missing=0.5, agree=0.7)
    m[5] = np.where(np.isnan(m[5]), np.nan, -m[0])  # annotator 5 contradicts annotator 0
    m[4, 0], m[4, 1:] = 1, np.nan  # annotator 4 rated one item only
    result = ag.per_annotator(table_from_matrix(m), min_shared=3, replicates=0)
    for a in range(6):
        mine = ~np.isnan(m[a])
        x, y = reference_majority(m, a)
        kappas = []
        for b in range(6):
            both = mine & ~np.isnan(m[b])
            if b != a and both.sum() >= 3:
                kappas.append(reference_kappa(m[a][both], m[b][both], None))
        kappas = [k for k in kappas if not np.isnan(k)]
        got = result[a]
        assert got.majority_items == len(x)
        expected = reference_kappa(x, y, None) if len(x) else np.nan
        assert_same(None if got.majority is None else got.majority.estimate, expected)
        assert (got.majority is None) == (got.reason is not None)
        assert got.partners == len(kappas)
        assert_same(got.mean_kappa, np.mean(kappas) if kappas else np.nan)
    assert result[4].partners == 0 and result[4].mean_kappa is None
    assert result[5].majority.estimate < result[1].majority.estimate


def test_leave_one_out_kappa_tells_apart_annotators_who_rated_the_same_items():
    """Issue #30: alpha over an annotator's items *with their own ratings* was 0.29 for bea, cal
    and dan alike, since all three rated every item. Against the others' majority, the careful
    two agree with the others and the careless one does not."""
    rng = np.random.default_rng(30)
    truth = rng.choice([-1, 0, 1], 120, p=[0.3, 0.2, 0.5]).astype(float)
    noisy = lambda share: np.where(rng.random(120) < share, rng.choice([-1.0, 0.0, 1.0], 120), truth)  # noqa: E731
    m = np.stack([noisy(0.05), noisy(0.15), noisy(0.95)])  # bea, cal, dan
    table = table_from_matrix(m)
    old = [ag.krippendorff_alpha(table)] * 3  # every item rated by all: the old figure, one value
    result = ag.per_annotator(table, replicates=200)
    bea, cal, dan = (result[a].majority for a in range(3))
    assert min(bea.estimate, cal.estimate) > 0.5 > 0.2 > dan.estimate
    assert len({round(v, 4) for v in (bea.estimate, cal.estimate, dan.estimate)}) == 3 != len(set(old))
    assert dan.high < min(bea.low, cal.low)  # the careless one clearly apart
    for interval in (bea, cal, dan):
        assert interval.low <= interval.estimate <= interval.high and interval.replicates == 200


def test_majority_kappa_interval_matches_the_reference_on_resampled_items():
    rng = np.random.default_rng(5)
    m = random_matrix(rng, 4, 90, missing=0.2, agree=0.6)
    x, y = reference_majority(m, 0)
    codes = lambda v: np.searchsorted([-1, 0, 1], v)  # noqa: E731
    interval = ag.majority_kappa(codes(x), codes(y), 3, replicates=300, confidence=0.9, seed=42)
    rows = np.stack([codes(x), codes(y)], 1)
    reference = [reference_kappa(x[items], y[items], None) for items in resampled_items(rows, 42, 300)]
    low, high = percentile_interval(reference, 0.9)
    assert interval.estimate == pytest.approx(reference_kappa(x, y, None), abs=TOL)
    assert (interval.low, interval.high) == pytest.approx((low, high), abs=TOL)
    assert interval == ag.per_annotator(table_from_matrix(m), replicates=300, confidence=0.9, seed=42)[0].majority


def test_majority_kappa_says_why_it_is_undefined():
    m = np.array([[1, 1, np.nan], [1, 1, np.nan], [np.nan, np.nan, -1]], dtype=float)
    result = ag.per_annotator(table_from_matrix(m))
    assert result[2].majority is None and "no" in result[2].reason  # nobody else rated its item
    assert result[0].majority is None and "one value" in result[0].reason  # +1 against +1 only
    with pytest.raises(ag.AgreementUndefined):
        ag.majority_kappa(np.zeros(0, int), np.zeros(0, int), 3)


# Real ratings --------------------------------------------------------------------------------


def phase1_rating_matrices(data_dir):
    """Two matrices of real PRM800K phase-1 test ratings (NaN = missing).

    ``trajectories``: a row per record, a column per position, the rating of the first
    candidate step there (ragged lengths leave the tails missing). ``alternatives``: a row per
    completion slot, a column per (record, position) with two or more candidate steps, the
    ratings the labeler gave the candidates (real mixed ratings where an error was found).
    """
    with open_text(data_dir / "prm800k" / "phase1_test.reconstructed.jsonl.gz") as f:
        records = [json.loads(line) for line in f if line.strip()]
    trajectories, alternatives = [], []
    for record in records:
        row = []
        for step in record["label"]["steps"]:
            completions = step["completions"] or []
            first = completions[0] if completions else step["human_completion"]
            row.append(np.nan if first is None or first["rating"] is None else first["rating"])
            if len(completions) >= 2:
                alternatives.append([np.nan if c["rating"] is None else c["rating"] for c in completions])
        trajectories.append(row)

    def pad(rows):
        out = np.full((len(rows), max(map(len, rows))), np.nan)
        for i, row in enumerate(rows):
            out[i, : len(row)] = row
        return out

    return pad(trajectories), pad(alternatives).T


def test_real_phase1_ratings_match_the_reference_packages(data_dir):
    """What this proves: on real rating distributions (heavily +1, few 0 and -1, nulls) and a
    real missing pattern (trajectories of different lengths, a varying number of candidates),
    our indexing, coincidence and kappa arithmetic equals the reference packages. The rows are not
    independent annotators (PRM800K phase 1 has almost no overlap), so the figures say nothing
    about how well real annotators agreed."""
    trajectories, alternatives = phase1_rating_matrices(data_dir)
    assert trajectories.shape[0] == 101 and alternatives.shape[1] > 400
    assert np.isin(trajectories[~np.isnan(trajectories)], [-1, 0, 1]).all()
    for m in (trajectories, alternatives):
        table = table_from_matrix(m)
        for level in ag.LEVELS:
            assert abs(ag.krippendorff_alpha(table, level=level) - reference_alpha(m, level)) < TOL
            estimate = ag.bootstrap_alpha(table, level=level, replicates=20).estimate  # our coincidences
            assert abs(estimate - reference_alpha(m, level)) < TOL

    sample = trajectories[:30]
    kappas = ag.cohen_kappa_matrix(table_from_matrix(sample), weights="linear", min_shared=5)
    compared = 0
    for a, b in combinations(range(len(sample)), 2):
        both = ~np.isnan(sample[a]) & ~np.isnan(sample[b])
        if both.sum() >= 5:
            assert_same(kappas[a][b].kappa, reference_kappa(sample[a][both], sample[b][both], "linear"))
            compared += kappas[a][b].kappa is not None
    assert compared > 50

