"""Cost of AGREED's default merge order against the paper's, on the tree path.

A RandomForestRegressor (60 trees, max_depth=8) fitted on 1,000 rows of d
standard normal columns, with a target of four pair terms and an additive
part over the first 16 columns; AdaptiveGrouper with ``n_groups=d - 8``
(eight merges, the same partitions' worth of work for both orders) and
with its held-out default, for d = 64, 256 and 1,024. Printed: CPU seconds
of ``fit`` for the default order (``strategy="pairs"``: the pair of largest
loss decrease per pair of columns it joins, searched by scoring only the
pairs whose bound ``(Psi_i + Psi_j) / (|G_i| |G_j|)`` can reach the best
score, at most 1.5 (K - 1) more than the paper's per merge) and for the paper's order (``strategy="paper"``), their ratio (the
target: at most 2.5 at 256 columns), and whether both found the four pairs.

Measured (2 cores, the other busy with another job):

    d   stopping  pairs (s)  paper (s)  ratio pairs found paper found
   64   8 merges        2.9        1.7   1.68           3           1
   64   held-out        2.6        1.6   1.62           1           1
  256   8 merges       10.5        6.6   1.60           4           1
  256   held-out       15.6        5.8   2.70           4           1
 1024   8 merges       39.1       25.2   1.55           2           0
 1024   held-out       24.1       16.9   1.43           0           0

At the same eight merges the default costs 1.55-1.68 times the paper's
order. With held-out stopping at 256 columns the default keeps more merges
(it finds all four pairs, the paper's order one), and each kept merge also
lengthens the path drawn past the stop, so it costs 2.7 times as much.

Kernels are compiled on a small fit before timing. Run:
``python benchmarks/bench_agreed_cost.py [--widths 64 256 1024]``.
"""

# SPDX-License-Identifier: BSD-3-Clause

import argparse
import time

import numpy as np
from sklearn.ensemble import RandomForestRegressor

from skdecomp import AdaptiveGrouper


def problem(d, n=1000, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    y = (X[:, 0] * X[:, 1] + X[:, 2] * X[:, 3] + X[:, 4] * X[:, 5] + X[:, 6] * X[:, 7]
         + X[:, :16].sum(axis=1) + 0.1 * rng.normal(size=n))
    return X, y


def fit_time(model, X, **kw):
    start = time.process_time()
    g = AdaptiveGrouper(model, random_state=0, **kw).fit(X)
    return time.process_time() - start, g


def found(g):
    lab = g.labels_
    return sum(lab[a] == lab[a + 1] for a in (0, 2, 4, 6))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--widths", nargs="+", type=int, default=[64, 256, 1024])
    args = parser.parse_args()
    Xs, ys = problem(20, n=200)
    small = RandomForestRegressor(n_estimators=5, max_depth=4, random_state=0).fit(Xs, ys)
    fit_time(small, Xs)
    fit_time(small, Xs, strategy="paper")
    print(f"{'d':>5} {'stopping':>10} {'pairs (s)':>10} {'paper (s)':>10} {'ratio':>6} "
          f"{'pairs found':>11} {'paper found':>11}")
    for d in args.widths:
        X, y = problem(d)
        model = RandomForestRegressor(n_estimators=60, max_depth=8, random_state=0,
                                      n_jobs=1).fit(X, y)
        for stopping, kw in (("8 merges", dict(n_groups=d - 8)), ("held-out", {})):
            t_pairs, g_pairs = fit_time(model, X, strategy="pairs", **kw)
            t_paper, g_paper = fit_time(model, X, strategy="paper", **kw)
            print(f"{d:5d} {stopping:>10} {t_pairs:10.1f} {t_paper:10.1f} "
                  f"{t_pairs / t_paper:6.2f} {found(g_pairs):11d} {found(g_paper):11d}",
                  flush=True)


if __name__ == "__main__":
    main()
