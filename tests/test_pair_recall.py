"""AGREED finds the pair terms of exactly pairwise-additive models.

An Explainable Boosting Machine is a sum of one-column terms and a few
pair terms. Built here on real columns of bundled tables: an additive term
for every column, a chain of three pair terms over four columns (a-b, b-c,
c-d) and a separate pair (e-f), each carrying 1-4 % of the output variance,
or with five times the amplitude. The chain is the case a price per column
pair of a merge gets wrong: the third column of the chain links to a group
of two by one pair term, and used to be charged for two.
"""

import numpy as np
import pytest
import sklearn.datasets

from skdecomp import AdaptiveGrouper
from skdecomp.datasets import _SEMI_SYNTHETIC_TABLES


def _pairwise_problem(table, seed, strength, n=2000):
    rng = np.random.RandomState(seed)
    loader, names = _SEMI_SYNTHETIC_TABLES[table]
    X0 = getattr(sklearn.datasets, loader)(as_frame=True).data[names].to_numpy(float)
    d = X0.shape[1]
    X = X0[rng.randint(0, len(X0), n)] + rng.normal(size=(n, d)) * 0.1 * X0.std(axis=0)
    ranks = np.argsort(np.argsort(X, axis=0), axis=0)
    corr = np.abs(np.corrcoef(ranks.T))
    for _ in range(1000):
        c = rng.permutation(d)[:6]
        pairs = [(c[0], c[1]), (c[1], c[2]), (c[2], c[3]), (c[4], c[5])]
        if all(corr[a, b] < 0.5 for a, b in pairs):
            break
    sorted_cols = np.sort(X, axis=0)
    coef = rng.uniform(0.5, 1.0, d) * rng.choice([-1, 1], d)
    amp = 0.35 * strength * rng.uniform(0.8, 1.2, 4) * rng.choice([-1, 1], 4)

    def f(Z):
        Z = np.asarray(Z, dtype=float)
        R = np.column_stack([np.searchsorted(sorted_cols[:, j], Z[:, j]) for j in range(d)])
        R = (R / n - 0.5) * np.sqrt(12)
        return R @ coef + sum(w * R[:, a] * R[:, b] for w, (a, b) in zip(amp, pairs))

    y = f(X)
    R = (np.column_stack([np.searchsorted(sorted_cols[:, j], X[:, j]) for j in range(d)])
         / n - 0.5) * np.sqrt(12)
    shares = [np.var(w * R[:, a] * R[:, b]) / y.var() for w, (a, b) in zip(amp, pairs)]
    return X, f, pairs, shares


def _truth(pairs, d):
    label = list(range(d))
    for a, b in pairs:
        old, new = label[a], label[b]
        label = [new if v == old else v for v in label]
    return label


@pytest.mark.parametrize("table", ["diabetes", "wine", "breast_cancer"])
def test_every_pair_term_found_without_false_merges(table):
    for seed in range(3):
        X, f, pairs, shares = _pairwise_problem(table, seed, 1)
        labels = AdaptiveGrouper(f, random_state=0).fit(X).labels_
        truth = _truth(pairs, X.shape[1])
        d = X.shape[1]
        false = [(i, j) for i in range(d) for j in range(i)
                 if labels[i] == labels[j] and truth[i] != truth[j]]
        assert false == [], (seed, false)
        missed = [p for p, s in zip(pairs, shares) if s >= 0.02
                  and labels[p[0]] != labels[p[1]]]
        assert missed == [], (seed, missed, np.round(shares, 3))


@pytest.mark.parametrize("table", ["diabetes", "wine", "breast_cancer"])
def test_stronger_pair_terms_give_the_exact_pair_structure(table):
    exact = 0
    for seed in range(3):
        X, f, pairs, _ = _pairwise_problem(table, seed, 5)
        labels = AdaptiveGrouper(f, random_state=0).fit(X).labels_
        truth = _truth(pairs, X.shape[1])
        d = X.shape[1]
        exact += all((labels[i] == labels[j]) == (truth[i] == truth[j])
                     for i in range(d) for j in range(i))
    assert exact >= 2


def _wide_problem(seed, n_pairs, n=5000):
    """68 real columns (two independent draws of the three tables), a few pair terms."""
    rng = np.random.RandomState(seed)
    parts = []
    for _ in range(2):
        for loader, names in _SEMI_SYNTHETIC_TABLES.values():
            X0 = getattr(sklearn.datasets, loader)(as_frame=True).data[names].to_numpy(float)
            parts.append(X0[rng.randint(0, len(X0), n)]
                         + rng.normal(size=(n, X0.shape[1])) * 0.1 * X0.std(axis=0))
    X = np.hstack(parts)
    d = X.shape[1]
    R = (np.argsort(np.argsort(X, axis=0), axis=0) / n - 0.5) * np.sqrt(12)
    corr = np.abs(np.corrcoef(R.T))
    np.fill_diagonal(corr, 0)
    # pair columns that have no stand-in (no other column of rank correlation >= 0.5)
    free = rng.permutation(np.flatnonzero(corr.max(axis=1) < 0.5))[: 2 * n_pairs]
    pairs = [(int(free[2 * k]), int(free[2 * k + 1])) for k in range(n_pairs)]
    coef = rng.uniform(0.5, 1.0, d) * rng.choice([-1, 1], d)
    y = R @ coef
    scale = np.sqrt(y.var() * 0.05 / (1 - 0.05 * n_pairs))  # 5 % of the variance each
    for a, b in pairs:
        y = y + scale * rng.choice([-1, 1]) * R[:, a] * R[:, b] / np.std(R[:, a] * R[:, b])
    y = y + rng.normal(size=n) * 0.1 * y.std()
    return X, y, pairs


@pytest.mark.slow
@pytest.mark.parametrize("seed, n_pairs", [(0, 3), (1, 3), (2, 0)])
def test_wide_table_strong_pairs_merged_and_nothing_else(seed, n_pairs):
    # boosted trees on 68 columns: the price per column pair falls as 20 / d,
    # so the strong pairs stand out of the chance interactions of the fit
    from sklearn.ensemble import HistGradientBoostingRegressor

    X, y, pairs = _wide_problem(seed, n_pairs)
    model = HistGradientBoostingRegressor(
        max_iter=1000, learning_rate=0.1, max_depth=3, early_stopping=False,
        random_state=seed).fit(X[:4000], y[:4000])
    assert model.score(X[4000:], y[4000:]) > 0.85
    grouper = AdaptiveGrouper(model, random_state=0).fit(X)
    merged = sorted(sorted(int(c) for c in g) for g in grouper.groups_ if len(g) > 1)
    assert merged == sorted(sorted(p) for p in pairs)


def test_price_per_column_pair_falls_beyond_twenty_columns():
    from skdecomp._game import column_pair_price

    assert column_pair_price(0.02, 10) == 0.02
    assert column_pair_price(0.02, 20) == 0.02
    assert column_pair_price(0.02, 80) == pytest.approx(0.005)
    # the score charges the same price: an additive model scores minus the price
    d = 40
    X = np.random.RandomState(0).normal(size=(60, d))
    grouper = AdaptiveGrouper(lambda Z: np.asarray(Z).sum(axis=1), n_groups=d - 1,
                              random_state=0).fit(X)
    (big,) = [g for g in grouper.groups_ if len(g) > 1]
    assert len(big) == 2
    assert grouper.score(X) == pytest.approx(-0.02 * 20 / d, abs=1e-12)
