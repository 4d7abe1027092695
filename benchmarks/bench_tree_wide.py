"""The tree path on wide tables: AGREED and exact Shapley values as columns grow.

Part 1: ``AdaptiveGrouper`` on a RandomForestRegressor (100 trees,
max_depth=8) fitted on 1,000 rows of d standard normal columns with a target
of a few pair terms and an additive part; CPU seconds of ``fit`` for d = 64,
256 and 1,024 (defaults: ``max_samples=100``, held-out stopping), and the
ratio of each to the previous one next to the ratio of the column counts
(linear growth: the two agree).

Part 2: exact Shapley values over d singleton groups on the tree path
(``Explainer.transform``, 100 background rows, 100 explained rows) of a
GradientBoostingRegressor (100 trees, depth 4), for d = 100, 300 and 1,000,
against ``shap.TreeExplainer(model, background,
feature_perturbation="interventional")`` in the same process: time of each,
their ratio, and the largest absolute difference.

Kernels are compiled on a small call before timing.
Run: ``python benchmarks/bench_tree_wide.py [--widths 64 256 1024]``.
"""

# SPDX-License-Identifier: BSD-3-Clause

import argparse
import time

import numpy as np
from sklearn.ensemble import GradientBoostingRegressor, RandomForestRegressor

from skdecomp import AdaptiveGrouper, Explainer


def problem(d, n=1000, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    y = (X[:, 0] * X[:, 1] + X[:, 2] * X[:, 3] + X[:, :8].sum(axis=1)
         + 0.1 * rng.normal(size=n))
    return X, y


def cpu(fn):
    t = time.process_time()
    out = fn()
    return time.process_time() - t, out


def part1(widths):
    print("Part 1: AdaptiveGrouper on a random forest (1,000 rows), CPU seconds")
    print(f"{'columns':>8} {'fit (s)':>9} {'time ratio':>11} {'width ratio':>12} "
          f"{'groups':>7} {'largest':>8}")
    X, y = problem(16)
    model = RandomForestRegressor(100, max_depth=8, random_state=0).fit(X, y)
    AdaptiveGrouper(model, random_state=0).fit(X[:200])  # compile
    prev = None
    for d in widths:
        X, y = problem(d)
        model = RandomForestRegressor(100, max_depth=8, random_state=0).fit(X, y)
        t, g = cpu(lambda: AdaptiveGrouper(model, random_state=0).fit(X))
        largest = max(len(c) for c in g.groups_)
        ratio = "" if prev is None else f"{t / prev[1]:11.2f} {d / prev[0]:12.2f}"
        print(f"{d:>8} {t:>9.2f} {ratio:>24} {len(g.groups_):>7} {largest:>8}", flush=True)
        prev = (d, t)


def part2(widths):
    import shap

    print("Part 2: exact Shapley values on singletons, GradientBoosting "
          "(100 trees, depth 4), 100 background and 100 explained rows")
    print(f"{'columns':>8} {'skdecomp (s)':>13} {'shap (s)':>9} {'shap/ours':>10} "
          f"{'max |diff|':>11}")
    for d in widths:
        X, y = problem(d, n=600)
        model = GradientBoostingRegressor(n_estimators=100, max_depth=4,
                                          random_state=0).fit(X, y)
        bg, rows = X[:100], X[100:200]
        explainer = Explainer(model, background=bg, random_state=0).fit(X)
        explainer.transform(rows)  # compile (small calls run in numpy)
        t_ours, phi = cpu(lambda: explainer.transform(rows))
        t_shap, sv = cpu(lambda: shap.TreeExplainer(
            model, bg, feature_perturbation="interventional").shap_values(rows))
        print(f"{d:>8} {t_ours:>13.3f} {t_shap:>9.3f} {t_shap / t_ours:>10.1f} "
              f"{np.abs(phi - sv).max():>11.2e}", flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--widths", type=int, nargs="+", default=[64, 256, 1024])
    parser.add_argument("--shap-widths", type=int, nargs="+", default=[100, 300, 1000])
    args = parser.parse_args()
    part1(args.widths)
    part2(args.shap_widths)


if __name__ == "__main__":
    main()
