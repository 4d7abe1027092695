"""AGREED on a wide table: a few strong pair terms among 68 additive columns.

The columns are those of :func:`skdecomp.datasets.make_semi_synthetic`'s three
bundled tables (diabetes, wine, breast cancer: 34 columns), each table drawn
twice by independent smoothed bootstraps of 5,000 rows, so 68 columns with
the tables' real dependence inside each copy. The target is an additive term
of every column's standardised rank plus three pair terms of ranks (between
columns that have no other column of Spearman correlation 0.5 or more, so
the model has no stand-in for them), each carrying 3-6 % of the
output variance, and 10 % noise. A HistGradientBoostingRegressor of depth-3 trees is
fitted to 4,000 rows (R2 about 0.9 on the other 1,000). Per run: the pair shares, how many pair terms were merged, false
merges (column pairs in one group that are not a pair term), the number of
groups and the CPU time of the default ``AdaptiveGrouper``.

Run: ``python benchmarks/bench_wide_pairs.py [--seeds 3] [--kw "dict(...)"]``.
"""

# SPDX-License-Identifier: BSD-3-Clause

import argparse
import time

import numpy as np
import pandas as pd
import sklearn.datasets
from scipy.stats import rankdata
from sklearn.ensemble import HistGradientBoostingRegressor

from skdecomp import AdaptiveGrouper
from skdecomp.datasets import _SEMI_SYNTHETIC_TABLES


def wide_columns(rng, n=5000, copies=2):
    parts = []
    for copy in range(copies):
        for table, (loader, names) in _SEMI_SYNTHETIC_TABLES.items():
            X0 = getattr(sklearn.datasets, loader)(as_frame=True).data[names].astype(float)
            X = X0.iloc[rng.randint(0, len(X0), n)].reset_index(drop=True)
            X = X + rng.normal(size=X.shape) * 0.1 * X0.std().to_numpy()
            X.columns = [f"{c}_{copy}" for c in X.columns]
            parts.append(X)
    return pd.concat(parts, axis=1)


def problem(seed, n_pairs=3, n=5000, share=(0.03, 0.06), copies=2):
    rng = np.random.RandomState(seed)
    X = wide_columns(rng, n, copies)
    d = X.shape[1]
    corr = np.abs(X.corr(method="spearman").to_numpy())
    np.fill_diagonal(corr, 0)
    # columns with no other column of Spearman correlation 0.5 or more, so
    # the model has no stand-in for a column of a pair term
    free = np.flatnonzero(corr.max(axis=1) < 0.5)
    c = rng.permutation(free)[: 2 * n_pairs]
    pairs = [(int(c[2 * k]), int(c[2 * k + 1])) for k in range(n_pairs)]
    ref = [np.sort(X.iloc[:, j].to_numpy()) for j in range(d)]

    def ranks(Z):
        return np.column_stack([(np.searchsorted(ref[j], Z[:, j]) / n - 0.5) * np.sqrt(12)
                                for j in range(d)])

    R = ranks(X.to_numpy())
    coef = rng.uniform(0.5, 1.0, d) * rng.choice([-1, 1], d)
    additive = (R @ coef).var()
    # amplitudes that give each pair term its share of the output variance
    target = rng.uniform(*share, n_pairs)
    prods = [R[:, a] * R[:, b] for a, b in pairs]
    amp = np.sqrt(target / (1 - target.sum()) * additive
                  / np.array([p.var() for p in prods] or np.ones(0)))
    amp = amp * rng.choice([-1, 1], n_pairs)

    def f(Z):
        Rz = ranks(np.asarray(Z, dtype=float))
        out = Rz @ coef
        for w, (a, b) in zip(amp, pairs):
            out = out + w * Rz[:, a] * Rz[:, b]
        return out

    y = f(X.to_numpy())
    shares = [np.var(w * p) / y.var() for w, p in zip(amp, prods)]
    y = y + rng.normal(size=n) * 0.1 * y.std()
    return X, y, f, pairs, shares


def fitted_model(X, y, seed):
    """Boosted trees of depth 3 on the first 4,000 rows (held-out R2 about 0.9)."""
    return HistGradientBoostingRegressor(
        max_iter=1000, learning_rate=0.1, max_depth=3, early_stopping=False,
        random_state=seed).fit(X[:4000], y[:4000])


def score(labels, pairs):
    d = len(labels)
    truth = {frozenset(p) for p in pairs}
    found = sum(labels[a] == labels[b] for a, b in pairs)
    false = sum(labels[i] == labels[j] and frozenset((i, j)) not in truth
                for i in range(d) for j in range(i))
    return int(found), int(false)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--kw", default="dict()")
    parser.add_argument("--pairs", type=int, default=3, help="pair terms (0: additive)")
    parser.add_argument("--copies", type=int, default=2, help="draws of the 34 columns")
    parser.add_argument("--true", action="store_true", help="also group the true function")
    args = parser.parse_args()
    kw = eval(args.kw)  # noqa: S307 (a benchmark's own option)
    print(f"AdaptiveGrouper options: {kw}")
    print(f"{'seed':>4} {'model':7} {'R2':>5} {'pair shares (%)':18} {'found':>5} "
          f"{'false':>5} {'groups':>6} {'CPU s':>6}")
    ok = 0
    runs = 0
    for seed in range(args.seeds):
        X, y, f, pairs, shares = problem(seed, n_pairs=args.pairs, copies=args.copies)
        model = fitted_model(X, y, seed)
        r2 = model.score(X[4000:], y[4000:])
        models = [("fitted", model)]
        if args.true:
            models.append(("true", lambda Z: f(np.asarray(Z))))
        for name, m in models:
            start = time.process_time()
            g = AdaptiveGrouper(m, random_state=0, **kw).fit(X)
            cpu = time.process_time() - start
            found, false = score(g.labels_, pairs)
            runs += 1
            ok += found == len(pairs) and false == 0
            sh = " ".join(f"{100 * s:4.1f}" for s in shares)
            print(f"{seed:4d} {name:7} {r2:5.2f} {sh:18} {found:5d} {false:5d} "
                  f"{g.n_groups_:6d} {cpu:6.1f}", flush=True)
    print(f"\nruns with every pair merged and nothing else: {ok}/{runs}")


if __name__ == "__main__":
    main()
