"""AGREED's recall of true pair terms on pairwise-additive problems, fitted and true.

Real columns of scikit-learn's bundled tables (those of
:func:`skdecomp.datasets.make_semi_synthetic`, 2,000 rows by a smoothed
bootstrap); a target that is exactly pairwise-additive, as an Explainable
Boosting Machine is: an additive term for every column plus four pair terms
of standardised ranks, three of them a connected chain over four columns
(a-b, b-c, c-d) and one a separate pair (e-f), the columns of a pair with
Spearman correlation below 0.5. Each pair term carries 1-4 % of the output
variance (``--strength 1``), or five times its amplitude (``--strength 5``).
A HistGradientBoostingRegressor is fitted to it (``fitted``), and AGREED
also sees the true function (``true``). Per run: the share of every pair
term, how many of the pair terms of at least 2 % of the variance were
found (both columns in one group), false merges (column pairs in one group
that are not in one connected set of pair terms), whether the partition is
exactly the pair structure, and the time.

Run: ``python benchmarks/bench_pair_recall.py [--seeds 3] [--kw "dict(...)"]``;
``--kw`` passes options to AdaptiveGrouper (e.g. ``"dict(group_penalty=0.01)"``).
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


def columns(table):
    loader, names = _SEMI_SYNTHETIC_TABLES[table]
    return getattr(sklearn.datasets, loader)(as_frame=True).data[names].astype(float)


def problem(table, seed, strength, n=2000):
    rng = np.random.RandomState(seed)
    X0 = columns(table)
    d = X0.shape[1]
    X = X0.iloc[rng.randint(0, len(X0), n)].reset_index(drop=True)
    X = X + rng.normal(size=X.shape) * 0.1 * X0.std().to_numpy()
    corr = np.abs(X.corr(method="spearman").to_numpy())
    # six columns, no strongly dependent pair among the linked ones
    for _ in range(1000):
        c = rng.permutation(d)[:6]
        pairs = [(c[0], c[1]), (c[1], c[2]), (c[2], c[3]), (c[4], c[5])]
        if all(corr[a, b] < 0.5 for a, b in pairs):
            break
    R = (np.column_stack([rankdata(X.iloc[:, j]) for j in range(d)]) / n - 0.5) * np.sqrt(12)
    coef = rng.uniform(0.5, 1.0, d) * rng.choice([-1, 1], d)
    amp = 0.35 * strength * rng.uniform(0.8, 1.2, 4) * rng.choice([-1, 1], 4)

    def f(Z):
        Z = np.asarray(Z, dtype=float)
        # ranks against the training rows, so f is a function of the row alone
        Rz = np.column_stack([
            (np.searchsorted(np.sort(X.iloc[:, j].to_numpy()), Z[:, j]) / n - 0.5)
            * np.sqrt(12) for j in range(d)])
        out = Rz @ coef
        for w, (a, b) in zip(amp, pairs):
            out = out + w * Rz[:, a] * Rz[:, b]
        return out

    y = f(X.to_numpy())
    var = y.var()
    shares = [np.var(w * R[:, a] * R[:, b]) / var for w, (a, b) in zip(amp, pairs)]
    y = y + rng.normal(size=n) * 0.1 * y.std()
    return X, y, f, pairs, shares


def score(labels, pairs, shares, d):
    parent = list(range(d))

    def find(i):
        while parent[i] != i:
            i = parent[i]
        return i

    for a, b in pairs:
        parent[find(a)] = find(b)
    truth = [find(i) for i in range(d)]
    strong = [p for p, s in zip(pairs, shares) if s >= 0.02]
    found = sum(labels[a] == labels[b] for a, b in strong)
    false = sum(labels[i] == labels[j] and truth[i] != truth[j]
                for i in range(d) for j in range(i))
    exact = all((labels[i] == labels[j]) == (truth[i] == truth[j])
                for i in range(d) for j in range(i))
    return len(strong), int(found), int(false), bool(exact)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--tables", nargs="+", default=["diabetes", "wine", "breast_cancer"])
    parser.add_argument("--strength", nargs="+", type=float, default=[1, 5])
    parser.add_argument("--kw", default="dict()")
    args = parser.parse_args()
    kw = eval(args.kw)  # noqa: S307 (a benchmark's own option)
    print(f"AdaptiveGrouper options: {kw}")
    print(f"{'table':14} {'x':>3} {'seed':>4} {'model':7} {'pair shares (%)':24} "
          f"{'strong':>6} {'found':>5} {'false':>5} {'exact':>5} {'groups':>6} {'s':>5}")
    totals = {}
    for table in args.tables:
        for strength in args.strength:
            for seed in range(args.seeds):
                X, y, f, pairs, shares = problem(table, seed, strength)
                model = HistGradientBoostingRegressor(
                    max_iter=300, learning_rate=0.05, random_state=seed).fit(X, y)
                for name, m in (("fitted", model), ("true", lambda Z: f(np.asarray(Z)))):
                    start = time.process_time()
                    g = AdaptiveGrouper(m, random_state=0, **kw).fit(X)
                    cpu = time.process_time() - start
                    n_strong, found, false, exact = score(g.labels_, pairs, shares,
                                                          X.shape[1])
                    t = totals.setdefault((strength, name), [0, 0, 0, 0, 0])
                    t[0] += 1
                    t[1] += found == n_strong
                    t[2] += false == 0
                    t[3] += exact
                    t[4] += false == 0 and found == n_strong
                    sh = " ".join(f"{100 * s:4.1f}" for s in shares)
                    print(f"{table:14} {strength:3g} {seed:4d} {name:7} {sh:24} "
                          f"{n_strong:6d} {found:5d} {false:5d} {str(exact):>5} "
                          f"{g.n_groups_:6d} {cpu:5.1f}", flush=True)
    print("\nsummary (runs: all pair terms >= 2 % found / no false merge / both / "
          "exact pair structure)")
    for (strength, name), (n, allf, nofalse, exact, both) in sorted(totals.items()):
        print(f"  strength {strength:g}, {name:7}: {allf}/{n} found, {nofalse}/{n} "
              f"no false merge, {both}/{n} both, {exact}/{n} exact")


if __name__ == "__main__":
    main()
