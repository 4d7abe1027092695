"""XGBoost and LightGBM on the tree path against shap's interventional TreeExplainer.

For each library, models of 100 and 500 trees of depth 6 (LightGBM:
``num_leaves=63``, ``max_depth=6``) fitted on 2,000 rows of 20 and 100
standard normal columns (a target with pair terms and an additive part).
Exact Shapley values over the singleton columns for 100 explained rows with
100 background rows:

* skdecomp: ``Explainer(model, background=bg).transform(rows)`` on the
  margin (``response_method="auto"``), after one call that compiles the
  kernels;
* shap: ``shap.TreeExplainer(model, bg,
  feature_perturbation="interventional").shap_values(rows)`` (its margin
  output, ``model_output="raw"``), explainer construction included.

Both run single-threaded in the same process (CPU seconds); the script prints
each time, the ratio shap / skdecomp (target: at least 5) and the largest
absolute difference of the values.

Run: ``python benchmarks/bench_tree_boosters.py [--trees 100 500] [--columns 20 100]``.
"""

# SPDX-License-Identifier: BSD-3-Clause

import argparse
import time

import numpy as np

from skdecomp import Explainer


def problem(d, n=2000, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    y = (X[:, 0] * X[:, 1] + X[:, 2] * X[:, 3] + X[:, : min(d, 10)].sum(axis=1)
         + np.sin(X[:, 4]) + 0.1 * rng.normal(size=n))
    return X, y


def model_of(library, n_trees):
    if library == "xgboost":
        from xgboost import XGBRegressor

        return XGBRegressor(n_estimators=n_trees, max_depth=6, n_jobs=1, random_state=0)
    from lightgbm import LGBMRegressor

    return LGBMRegressor(n_estimators=n_trees, max_depth=6, num_leaves=63, n_jobs=1,
                         verbose=-1, random_state=0)


def cpu(fn):
    t = time.process_time()
    out = fn()
    return time.process_time() - t, out


def main():
    import shap

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trees", type=int, nargs="+", default=[100, 500])
    parser.add_argument("--columns", type=int, nargs="+", default=[20, 100])
    args = parser.parse_args()
    print(f"{'library':<9} {'trees':>6} {'columns':>8} {'skdecomp (s)':>13} "
          f"{'shap (s)':>9} {'shap/ours':>10} {'max |diff|':>11}")
    for library in ("xgboost", "lightgbm"):
        try:
            __import__(library)
        except ImportError:
            print(f"{library:<9} not installed")
            continue
        for d in args.columns:
            X, y = problem(d)
            bg, rows = X[:100], X[100:200]
            for n_trees in args.trees:
                model = model_of(library, n_trees).fit(X, y)
                explainer = Explainer(model, background=bg, random_state=0).fit(X)
                if explainer.algorithm_ != "tree":
                    raise RuntimeError(explainer.algorithm_)
                explainer.transform(rows)  # compile (small calls run in numpy)
                t_ours, phi = cpu(lambda: explainer.transform(rows))
                t_shap, sv = cpu(lambda: shap.TreeExplainer(
                    model, bg, feature_perturbation="interventional").shap_values(rows))
                print(f"{library:<9} {n_trees:>6} {d:>8} {t_ours:>13.3f} {t_shap:>9.3f} "
                      f"{t_shap / t_ours:>10.1f} {np.abs(phi - sv).max():>11.2e}",
                      flush=True)


if __name__ == "__main__":
    main()
