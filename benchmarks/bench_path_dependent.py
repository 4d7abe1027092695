"""The path-dependent game on the tree path against shap's default TreeExplainer.

Exact Shapley values over the singleton columns of the path-dependent
(cover-weighted) game, the game of ``shap.TreeExplainer(model)`` without
background data, for 3,000 explained rows of 20 standard normal columns
(a target with pair terms and an additive part; the models are fitted on
5,000 rows):

* XGBoost regressor, 300 trees of depth 6 (``nthread=1``); shap calls
  XGBoost's own ``pred_contribs`` (C++) for it;
* LightGBM regressor, 300 trees (``num_leaves=63``, ``max_depth=6``,
  ``n_jobs=1``); shap calls LightGBM's own ``pred_contrib`` (C++);
* scikit-learn RandomForestRegressor, 100 trees of depth 10; shap runs its
  own C++ TreeSHAP.

skdecomp: ``path_dependent_attributions`` (serial) on the model's
TreeModel, warm, after a first call of 10 rows whose time is printed apart
(it loads the kernels from Numba's on-disk cache; the time of the same first
call with an empty cache, which compiles them, is measured once in a fresh
process and printed first); shap: ``shap.TreeExplainer(model).shap_values(rows)``,
explainer construction included. Both run single-threaded in the same
process; times are CPU seconds (``time.process_time``, the best of
``--repeat`` runs). The script prints each time, the ratio shap / skdecomp
(target: at least 1.5 for XGBoost) and the largest absolute difference of
the values (XGBoost computes in float32, hence about 1e-6 there).

Run: ``python benchmarks/bench_path_dependent.py [--rows 3000] [--repeat 3]``.
"""

# SPDX-License-Identifier: BSD-3-Clause

import argparse
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

from skdecomp._model import resolve_response
from skdecomp._tree import extract_tree_model, path_dependent_attributions


COLD = r"""
import time
import numpy as np
from sklearn.ensemble import RandomForestRegressor
from skdecomp._tree import extract_tree_model, path_dependent_attributions
rng = np.random.default_rng(0)
X = rng.normal(size=(200, 5))
model = RandomForestRegressor(n_estimators=5, max_depth=4, random_state=0)
model.fit(X, X[:, 0] * X[:, 1])
tree_model = extract_tree_model(model)
w = {"shapley": np.r_[0.0, 1.0 / np.arange(1, 6)]}
t = time.process_time()
path_dependent_attributions(tree_model, X[:10], np.arange(5), 5, w)
print(time.process_time() - t)
"""


def cold_first_call():
    """CPU seconds of a first call that compiles the kernels (empty cache)."""
    with tempfile.TemporaryDirectory() as folder:
        env = dict(os.environ, NUMBA_CACHE_DIR=folder)
        out = subprocess.run([sys.executable, "-c", COLD], env=env, check=True,
                             capture_output=True, text=True)
    return float(out.stdout.strip().splitlines()[-1])


def problem(d=20, n=5000, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    y = (X[:, 0] * X[:, 1] + X[:, 2] * X[:, 3] + X[:, :10].sum(axis=1)
         + np.sin(X[:, 4]) + 0.1 * rng.normal(size=n))
    return X, y


def model_of(library):
    if library == "xgboost":
        from xgboost import XGBRegressor

        return XGBRegressor(n_estimators=300, max_depth=6, n_jobs=1, random_state=0)
    if library == "lightgbm":
        from lightgbm import LGBMRegressor

        return LGBMRegressor(n_estimators=300, max_depth=6, num_leaves=63, n_jobs=1,
                             verbose=-1, random_state=0)
    from sklearn.ensemble import RandomForestRegressor

    return RandomForestRegressor(n_estimators=100, max_depth=10, n_jobs=1,
                                 random_state=0)


def cpu(fn, repeat=1):
    best, out = np.inf, None
    for _ in range(repeat):
        t = time.process_time()
        out = fn()
        best = min(best, time.process_time() - t)
    return best, out


def main():
    import shap

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=3000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    X, y = problem()
    rows = X[: args.rows]
    d = X.shape[1]
    labels = np.arange(d)
    weights = {"shapley": np.r_[0.0, 1.0 / np.arange(1, d + 1)]}
    print(f"first call with an empty Numba cache (compilation): "
          f"{cold_first_call():.1f} s CPU")
    print(f"{'model':<14} {'trees':>6} {'rows':>6} {'first call (s)':>15} "
          f"{'skdecomp (s)':>13} {'shap (s)':>9} {'shap/ours':>10} {'max |diff|':>11}")
    for library in ("xgboost", "lightgbm", "sklearn"):
        try:
            model = model_of(library).fit(X, y)
        except ImportError:
            print(f"{library:<14} not installed")
            continue
        response, _ = resolve_response(model, "auto", None, X[:1])
        tree_model = extract_tree_model(model, response)

        def ours(part=rows):
            out = path_dependent_attributions(tree_model, part, labels, d, weights)
            return out["shapley"][:, 0, :]

        t_first, _ = cpu(lambda: ours(rows[:10]))
        t_ours, phi = cpu(ours, args.repeat)
        t_shap, sv = cpu(lambda: shap.TreeExplainer(model).shap_values(rows),
                         args.repeat)
        n_trees = tree_model.roots.shape[0]
        print(f"{library:<14} {n_trees:>6} {rows.shape[0]:>6} {t_first:>15.3f} "
              f"{t_ours:>13.3f} {t_shap:>9.3f} {t_shap / t_ours:>10.1f} "
              f"{np.abs(phi - sv).max():>11.2e}", flush=True)


if __name__ == "__main__":
    main()
