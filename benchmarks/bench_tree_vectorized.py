"""numpy tree attributions against the warm Numba kernels, for small problems.

``skdecomp._tree._vectorized`` computes the exact tree attributions (and the
tree predictions) with numpy alone, so that a first call does not compile
Numba kernels: in a fresh process with an empty Numba cache, the first
``tree_attributions`` of a HistGradientBoostingRegressor (50 iterations, 10
groups, 5 explained and 100 background rows) takes 7.2 s with the
``patterns`` kernel and 6.0 s with ``hashed``, 14 ms with numpy. This script
times numpy next to the Numba kernels of the dispatch compiled beforehand
(``hashed``, and ``patterns``, which the dispatch picks for these numbers of
groups; the ``patterns`` background summary is dropped before each call, as
a first call has none), with the work estimate ``vectorized_work`` of each
case, so that a dispatcher can take numpy below a threshold on it; then the
predictions, numpy against ``_tree_predict_serial``.

Models, on the diabetes data (442 rows, 10 columns): HistGradientBoosting-
Regressor with 50 and 100 iterations, RandomForestRegressor with 100 trees
of default depth, GradientBoostingRegressor with 100 trees of depth 3.
Explained rows 5, 20, 50 and 100; background rows 50 and 100; 10 singleton
groups or 3 groups; 1 method (Shapley) or 4. Times are the best of
``--repeat`` calls (serial), the calls of the kernels interleaved.

Run: ``python benchmarks/bench_tree_vectorized.py [--repeat 5] [--quick]``

Measured (serial, a shared 2-core machine with a load average of 2-3, so
times move by up to 1.5x between runs), attributions, numpy / warm Numba:

    HGB50, 10 groups, 1 method   5 rows: 5-10.5 ms, 1.5-1.9x hashed,
                                 1.7-2.0x patterns; 100 rows: 24-37 ms,
                                 3.3-4.2x hashed, 6.3-6.6x patterns
    HGB100, 10 groups, 1 method  5 rows: 7-11 ms, 1.4-1.8x / 2.0-2.3x;
                                 100 rows: 42-61 ms, 2.9-3.7x / 5.6-7.1x
    RF100, 10 groups, 1 method   5 rows: 83-129 ms, 1.4-1.6x / 2.7-3.1x;
                                 100 rows: 0.65-0.87 s, 2.6-2.7x / 9.2-9.6x
    GB100, 10 groups, 1 method   5 rows: 2.7-3.6 ms, 1.9-3.0x hashed,
                                 0.75-1.5x patterns; 100 rows: 8-10 ms
    4 methods, 5 rows            0.8-2.7x hashed and 0.4-2.0x patterns
                                 (HGB, GB)
    3 groups, 5 rows             numpy 2-10 ms (HGB, GB), 50-90 ms (RF):
                                 1.5-2.9x, the Numba kernels taking 1-5 ms
                                 (20-35 ms RF)

``vectorized_work`` predicts the numpy time as about 1.5 ms plus 15 ns per
unit, within 2x in nine cases out of ten. Among the cases with work at most
2e5, numpy takes at most 11.5 ms and at most 4 ms more than ``patterns``
(median ratio 2.1); at most 1e6, at most 26 ms and 23 ms more. The
predictions: numpy is 0.6-0.9x the Numba kernel from 100 rows on, and
0.1-0.5 ms slower at 5 rows.
"""

import argparse
import time

import numpy as np
from sklearn.datasets import load_diabetes
from sklearn.ensemble import (
    GradientBoostingRegressor,
    HistGradientBoostingRegressor,
    RandomForestRegressor,
)

from skdecomp._decomposition import size_weights
from skdecomp._tree import extract_tree_model, tree_attributions
from skdecomp._tree._dispatch import leaf_coefficients
from skdecomp._tree._kernels import _tree_predict_serial
from skdecomp._tree._vectorized import (
    attributions_vectorized,
    predict_vectorized,
    vectorized_work,
)

METHODS = ["shapley", "banzhaf", "occlusion", "arch"]


def models():
    """The timed models, by name."""
    return {
        "HGB50": HistGradientBoostingRegressor(max_iter=50, random_state=0),
        "HGB100": HistGradientBoostingRegressor(max_iter=100, random_state=0),
        "RF100": RandomForestRegressor(n_estimators=100, random_state=0),
        "GB100": GradientBoostingRegressor(n_estimators=100, max_depth=3,
                                           random_state=0),
    }


def best_of(calls, repeat):
    """Best time in ms of each call over ``repeat`` interleaved rounds."""
    best = [np.inf] * len(calls)
    for _ in range(repeat):
        for i, call in enumerate(calls):
            t0 = time.perf_counter()
            call()
            best[i] = min(best[i], time.perf_counter() - t0)
    return [1e3 * t for t in best]


def time_predictions(fitted, X, repeat):
    """Print numpy and Numba prediction times of every model."""
    print("model  rows   numpy   numba  ratio")
    for name, tree_model in fitted.items():
        arrays = tree_model._arrays()
        for n_rows in (5, 100, 442):
            Xm = tree_model.prepare(X[:n_rows])
            _tree_predict_serial(Xm, *arrays)
            t_np, t_nb = best_of([lambda: predict_vectorized(*arrays, Xm),
                                  lambda: _tree_predict_serial(Xm, *arrays)], repeat)
            print(f"{name:6s} {n_rows:4d} {t_np:7.2f} {t_nb:7.2f} {t_np / t_nb:6.2f}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--quick", action="store_true",
                        help="one method and 10 groups only")
    args = parser.parse_args()
    X, y = load_diabetes(return_X_y=True)
    fitted = {}
    print("model   K  m   bg rows      work   numpy  hashed patterns  np/hashed "
          "np/patterns")
    for name, model in models().items():
        tree_model = fitted[name] = extract_tree_model(model.fit(X, y))
        n_leaves = int((tree_model.node_int[:, 0] < 0).sum())
        for n_groups in (10,) if args.quick else (10, 3):
            labels = np.arange(10) % n_groups
            col_group = tree_model.column_groups(labels)
            for n_methods in (1,) if args.quick else (1, 4):
                methods = METHODS[:n_methods]
                weights = {m: size_weights(m, n_groups) for m in methods}
                tables = [leaf_coefficients(weights[m], n_groups) for m in methods]
                coef_a = np.stack([t[0] for t in tables])
                coef_b = np.stack([t[1] for t in tables])
                for kernel in ("hashed", "patterns"):  # compile
                    tree_attributions(tree_model, X[:2], X[:3], labels, n_groups,
                                      weights, kernel=kernel)
                for n_bg in (50, 100):
                    for n_rows in (5, 20, 50, 100):
                        Xe, Z = X[:n_rows], X[200:200 + n_bg]
                        Xm, Zm = tree_model.prepare(Xe), tree_model.prepare(Z)

                        def vectorized():
                            attributions_vectorized(Xm, Zm, col_group,
                                                    *tree_model._arrays(), coef_a,
                                                    coef_b, n_groups)

                        def numba(kernel):
                            tree_model.__dict__.pop("_background_leaves", None)
                            tree_attributions(tree_model, Xe, Z, labels, n_groups,
                                              weights, kernel=kernel)

                        t_np, t_h, t_p = best_of(
                            [vectorized, lambda: numba("hashed"),
                             lambda: numba("patterns")], args.repeat)
                        work = vectorized_work(
                            tree_model.node_int.shape[0], n_leaves, n_rows, n_bg,
                            min(tree_model.max_depth, n_groups), n_methods)
                        print(f"{name:6s} {n_groups:2d} {n_methods:2d} {n_bg:4d} "
                              f"{n_rows:4d} {work:9.3g} {t_np:7.1f} {t_h:7.1f} "
                              f"{t_p:8.1f} {t_np / t_h:10.2f} {t_np / t_p:11.2f}",
                              flush=True)
    time_predictions(fitted, X, args.repeat)


if __name__ == "__main__":
    main()
