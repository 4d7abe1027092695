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
time is the best of ``--repeat`` calls (one call when it takes over 2 s),
after a call on two rows that compiles the kernel; kernels run serially unless
``--n-jobs`` is given. It prints ratios; it is not a test.

Run: ``python benchmarks/bench_tree_dispatch.py [--trees 200] [--depth 10]``

Measured with the defaults (serial; two runs on a shared 2-core machine with
a load average of 2.5-5, so times move by up to 2x between runs and ratios
near 1 by 20-40 %); ratios are first kernel / second kernel:

    components, ternary / pairwise        K=8 0.04, 9 0.05-0.06, 10 0.08-0.09,
      (ternary 0.5-9.5 s)                 11 0.17, 12 0.25-0.35
    attributions, patterns / hashed,      K=10 0.23-0.26, 11 0.22-0.26,
      1 method (patterns 0.4-2.6 s)       12 0.23, 13 0.28-0.33, 14 0.42-0.49
    attributions, patterns / ternary      K=4: 1 method 0.85-0.86, 2 1.00-1.01,
      (0.1-2.2 s)                         3 1.17-1.53, 4 1.15-1.38;
                                          K=6: 1 0.76-0.81, 2 1.09-1.12,
                                          3 1.34-1.49, 4 1.53-1.71;
                                          K=7: 1 0.56-0.76, 2 0.76-1.14,
                                          3 0.90-1.38, 4 1.08-1.83;
                                          K=8: 0.31-0.89 for 1-4 methods

No threshold moved: ternary components and pattern attributions stay faster
past their thresholds, which bound memory rather than time (the script prints
the table sizes); patterns is faster for any number of methods from K = 8;
below it, ternary gains 0-50 % over patterns at methods x K = 8..12, too little
under this load to move ``patterns_max_methods_x_groups`` from 12.
"""

import argparse
import time

import numpy as np
from sklearn.ensemble import RandomForestRegressor

from skdecomp._decomposition import size_weights
from skdecomp._tree import extract_tree_model, tree_attributions, tree_components
from skdecomp._tree._dispatch import DISPATCH, _choose_kernel

METHODS = ["shapley", "banzhaf", "occlusion", "arch"]


def best_time(fn, warm, repeat):
    """Best of ``repeat`` calls of fn, after ``warm()`` compiled the kernel.

    Calls longer than 2 s are timed once: their noise is small next to the
    ratios measured here.
    """
    warm()
    best = np.inf
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
        if best > 2.0:
            break
    return best


def compare(label, settings, kernels, run, chosen, repeat):
    """Time ``run(setting, kernel)`` for both kernels at every setting.

    Prints one line per setting: both times, the ratio first / second, which
    is faster, and which the dispatch picks. Returns the ratio per setting.
    """
    a, b = kernels
    print(label)
    print(f"  {'setting':<22}{a:>12}{b:>12}{a + ' / ' + b:>22}  faster    dispatch")
    ratios = {}
    for setting in settings:
        t_a = best_time(lambda: run(setting, a), lambda: run(setting, a, warm=True), repeat)
        t_b = best_time(lambda: run(setting, b), lambda: run(setting, b, warm=True), repeat)
        ratios[setting] = t_a / t_b
        faster = a if t_a < t_b else b
        print(f"  {str(setting):<22}{t_a:11.3f}s{t_b:11.3f}s{t_a / t_b:22.2f}  "
              f"{faster:<10}{chosen(setting)}")
    return ratios


def crossover(ratios):
    """Last setting from which on the second kernel is faster (ratio > 1)."""
    out = None
    for setting in reversed(list(ratios)):
        if ratios[setting] <= 1.0:
            break
        out = setting
    return out


def mb(n_bytes):
    return f"{n_bytes / 2**20:,.1f} MB"


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

    def components(k, kernel, warm=False):
        rows = Xe[:2] if warm else Xe
        return tree_components(tm, rows, Z, labels(k), k, n_jobs=args.n_jobs, kernel=kernel)

    def attributions(setting, kernel, warm=False):
        k, n_methods = setting if isinstance(setting, tuple) else (setting, 1)
        weights = {m: size_weights(m, k) for m in METHODS[:n_methods]}
        rows = Xe[:2] if warm else Xe
        return tree_attributions(tm, rows, Z, labels(k), k, weights, n_jobs=args.n_jobs,
                                 kernel=kernel)

    t = DISPATCH
    ks = list(range(t.ternary_max_groups - 2, t.ternary_max_groups + 3))
    ratios = compare(
        "components: ternary vs pairwise (all 2**K components)", ks,
        ("ternary", "pairwise"), components,
        lambda k: _choose_kernel("components", k), args.repeat,
    )
    print(f"  pairwise faster from K = {crossover(ratios)}; "
          f"threshold ternary_max_groups = {t.ternary_max_groups}")
    for k in ks:
        print(f"  K = {k}: ternary accumulators per explained row "
              f"{mb(2 * 3**k * 8)} serial, {mb(65 * 3**k * 8)} with 64 threads")
    print()

    ks = list(range(t.patterns_max_groups - 2, t.patterns_max_groups + 3))
    ratios = compare(
        "attributions: patterns vs hashed (1 method)", ks,
        ("patterns", "hashed"), attributions,
        lambda k: _choose_kernel("attributions", k), args.repeat,
    )
    print(f"  hashed faster from K = {crossover(ratios)}; "
          f"threshold patterns_max_groups = {t.patterns_max_groups}")
    for k in ks:
        print(f"  K = {k}: patterns tables {mb(2 ** (2 * k - 3))} shared, "
              f"{mb(2**k * k * 8)} per thread, method and output")
    print()

    settings = [(k, m) for k in range(4, t.patterns_min_groups + 2)
                for m in range(1, len(METHODS) + 1)]
    ratios = compare(
        "attributions: patterns vs ternary ((K, methods))", settings,
        ("patterns", "ternary"), attributions,
        lambda s: _choose_kernel("attributions", s[0], n_methods=s[1]), args.repeat,
    )
    by_product = {}
    for (k, m), r in ratios.items():
        if k < t.patterns_min_groups:
            by_product.setdefault(k * m, []).append(r)
    by_product = {p: float(np.exp(np.mean(np.log(r)))) for p, r in sorted(by_product.items())}
    print(f"  K < {t.patterns_min_groups}, patterns / ternary by methods x K (geometric "
          "mean): " + ", ".join(f"{p}: {r:.2f}" for p, r in by_product.items()))
    print(f"  ternary faster from methods x K = {crossover(by_product)}; "
          f"threshold patterns_max_methods_x_groups = {t.patterns_max_methods_x_groups}")
    worst = {k: max(r for (kk, _), r in ratios.items() if kk == k)
             for k in range(4, t.patterns_min_groups + 2)}
    print("  largest patterns / ternary over 1-4 methods, by K: "
          + ", ".join(f"{k}: {r:.2f}" for k, r in worst.items()))
    print(f"  patterns faster for any number of methods from K = "
          f"{crossover({k: 1 / r for k, r in worst.items()})}; "
          f"threshold patterns_min_groups = {t.patterns_min_groups}\n")

if __name__ == "__main__":
    main()
