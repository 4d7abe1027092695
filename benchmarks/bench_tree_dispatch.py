"""Tree-path kernels around each threshold of the dispatch table.

The tree path has several kernels that compute the same numbers
(``skdecomp._tree._dispatch.DispatchThresholds`` describes them), and
``_choose_kernel`` picks one from a few thresholds. This script times the
candidate kernels on both sides of each threshold and prints their times, the
ratio of the times, and the measured crossover next to the threshold in use:

* components, ``ternary_max_groups``: the 3**K table (``ternary``) against the
  walk per (explained, background) pair (``pairwise``), all 2**K components;
* attributions, ``patterns_max_groups``: per distinct row pattern with tables
  over 2**K patterns (``patterns``) against the leaf-wise kernel without them
  (``hashed``), one method;
* attributions, ``patterns_max_methods_x_groups`` and ``patterns_min_groups``:
  ``patterns`` against ``ternary`` for 1 to 4 methods and few groups.

Data: 16 standard normal columns with interactions; a RandomForestRegressor
(``--trees`` trees of ``--depth`` levels); ``--rows`` explained rows and
``--background`` background rows. K groups are the columns modulo K. Every
time is the best of ``--repeat`` calls after a compiling call; kernels run
serially unless ``--n-jobs`` is given. It prints ratios; it is not a test.

Run: ``python benchmarks/bench_tree_dispatch.py [--trees 200] [--depth 10]``

Measured (serial; 200 trees of depth 10, 200 explained and 100 background
rows; shared machine, so ratios near 1 move by about 10 % between runs):

    components, ternary / pairwise:           K=8 0.03, K=10 0.13, K=11 0.29,
                                              K=12 0.63  -> ternary faster
                                              through K=12 (threshold 10)
    attributions, patterns / hashed (1 m.):   K=10 0.27, K=12 0.40, K=13 0.77,
                                              K=14 1.7   -> crossover 13
                                              (threshold 12)
    attributions, patterns / ternary:         K=6: 1 method 0.70, 2 methods
                                              1.08, 3 1.38, 4 1.72; K=7: 1 0.75,
                                              2 1.25; K=8: 4 methods 0.75
                                              -> patterns faster while
                                              methods x K <= 6-7 (threshold 12)
                                              and from K=8 on (threshold 8)

See the report of the run that set each threshold in
``skdecomp/_tree/_dispatch.py``.
"""

import argparse
import time

import numpy as np
from sklearn.ensemble import RandomForestRegressor

from skdecomp._decomposition import size_weights
from skdecomp._tree import extract_tree_model, tree_attributions, tree_components
from skdecomp._tree._dispatch import DISPATCH, _choose_kernel

METHODS = ["shapley", "banzhaf", "occlusion", "arch"]


def best_time(fn, repeat):
    fn()  # compile, and fill the background summary cache
    best = np.inf
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def compare(label, settings, kernels, run, chosen, repeat):
    """Time ``run(setting, kernel)`` for both kernels at every setting.

    Prints one line per setting: both times, the ratio first / second, which
    is faster, and which the dispatch picks. Returns the settings at which
    the first kernel is faster.
    """
    a, b = kernels
    print(label)
    print(f"  {'setting':<22}{a:>12}{b:>12}{a + ' / ' + b:>22}  faster    dispatch")
    first_faster = []
    for setting in settings:
        t_a = best_time(lambda: run(setting, a), repeat)
        t_b = best_time(lambda: run(setting, b), repeat)
        faster = a if t_a < t_b else b
        if faster == a:
            first_faster.append(setting)
        print(f"  {str(setting):<22}{t_a:11.3f}s{t_b:11.3f}s{t_a / t_b:22.2f}  "
              f"{faster:<10}{chosen(setting)}")
    return first_faster


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trees", type=int, default=200)
    parser.add_argument("--depth", type=int, default=10)
    parser.add_argument("--rows", type=int, default=200)
    parser.add_argument("--background", type=int, default=100)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--n-jobs", type=int, default=None)
    args = parser.parse_args()

    rng = np.random.default_rng(0)
    n, d = 2000, 16
    X = rng.normal(size=(n, d))
    y = (X[:, 0] * X[:, 1] + np.sin(2 * X[:, 2]) + X[:, 3] * (X[:, 4] > 0)
         + X[:, 5:].sum(axis=1) + 0.1 * rng.normal(size=n))
    model = RandomForestRegressor(
        n_estimators=args.trees, max_depth=args.depth, random_state=0
    ).fit(X, y)
    tm = extract_tree_model(model)
    Xe = X[args.background:args.background + args.rows]
    Z = X[:args.background]
    print(f"RandomForestRegressor({args.trees} trees, max_depth={args.depth}), "
          f"{d} columns, {Xe.shape[0]} explained and {Z.shape[0]} background rows, "
          f"n_jobs={args.n_jobs}\nthresholds in use: {DISPATCH}\n")

    def labels(k):
        return np.arange(d) % k

    def components(k, kernel):
        return tree_components(tm, Xe, Z, labels(k), k, n_jobs=args.n_jobs, kernel=kernel)

    def attributions(setting, kernel):
        k, n_methods = setting if isinstance(setting, tuple) else (setting, 1)
        weights = {m: size_weights(m, k) for m in METHODS[:n_methods]}
        return tree_attributions(tm, Xe, Z, labels(k), k, weights, n_jobs=args.n_jobs,
                                 kernel=kernel)

    t = DISPATCH
    ks = list(range(t.ternary_max_groups - 2, t.ternary_max_groups + 3))
    faster = compare(
        "components: ternary vs pairwise (all 2**K components)", ks,
        ("ternary", "pairwise"), components,
        lambda k: _choose_kernel("components", k), args.repeat,
    )
    print(f"  ternary faster up to K = {max(faster, default=None)}; "
          f"threshold ternary_max_groups = {t.ternary_max_groups}\n")

    ks = list(range(t.patterns_max_groups - 2, t.patterns_max_groups + 3))
    faster = compare(
        "attributions: patterns vs hashed (1 method)", ks,
        ("patterns", "hashed"), attributions,
        lambda k: _choose_kernel("attributions", k), args.repeat,
    )
    print(f"  patterns faster up to K = {max(faster, default=None)}; "
          f"threshold patterns_max_groups = {t.patterns_max_groups}\n")

    settings = [(k, m) for k in range(4, t.patterns_min_groups + 2)
                for m in range(1, len(METHODS) + 1)]
    faster = compare(
        "attributions: patterns vs ternary ((K, methods))", settings,
        ("patterns", "ternary"), attributions,
        lambda s: _choose_kernel("attributions", s[0], n_methods=s[1]), args.repeat,
    )
    below = [s for s in settings if s[0] < t.patterns_min_groups]
    slower = [s for s in below if s not in faster]
    print(f"  below K = {t.patterns_min_groups}: patterns faster while methods x K <= "
          f"{max((k * m for k, m in below if (k, m) in faster), default=None)}, "
          f"ternary faster from methods x K = "
          f"{min((k * m for k, m in slower), default=None)}; "
          f"threshold patterns_max_methods_x_groups = "
          f"{t.patterns_max_methods_x_groups}")
    always = [k for k in range(4, t.patterns_min_groups + 2)
              if all((k, m) in faster for m in range(1, len(METHODS) + 1))]
    print(f"  patterns faster for every number of methods at K in {always}; "
          f"threshold patterns_min_groups = {t.patterns_min_groups}\n")


if __name__ == "__main__":
    main()
