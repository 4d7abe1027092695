"""Interaction indices on the tree path for wide models.

A GradientBoostingRegressor on 30 columns (2**30 coalitions) and a
HistGradientBoostingRegressor on 300 columns: order-2 and order-3 k-SII from
per-leaf work, timed against shap's interventional TreeExplainer on the same
rows and background (order 1, Shapley values), in the same process; both
efficiency errors are printed (shap's interventional values lose additivity
on the deep trees of HistGradientBoosting). The
first call includes the compilation of the kernels; the second is warm.

Run: ``python benchmarks/bench_tree_interactions.py [--rows 50] [--background 100]``
"""

import argparse
import time

import numpy as np
from sklearn.ensemble import GradientBoostingRegressor, HistGradientBoostingRegressor

from skdecomp import Explainer


def _timed(fn):
    t0 = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - t0


def _data(n_columns, rng):
    X = rng.normal(size=(2000, n_columns))
    y = (X[:, 0] * X[:, 1] + np.sin(X[:, 2]) * X[:, 3] + X[:, 4] * X[:, 5] * X[:, 6]
         + X[:, 7:12].sum(axis=1) + 0.1 * rng.normal(size=2000))
    return X, y


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=50)
    parser.add_argument("--background", type=int, default=100)
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    try:
        import shap
    except ImportError:
        shap = None
    cases = [
        ("GB, 30 columns", 30,
         GradientBoostingRegressor(n_estimators=200, max_depth=3, random_state=0)),
        ("HGB, 300 columns", 300,
         HistGradientBoostingRegressor(max_iter=200, random_state=0)),
    ]
    print(f"{args.rows} explained rows, {args.background} background rows, serial\n")
    print("| model | query | terms | time (s) | ratio to shap SV |")
    print("|---|---|---|---|---|")
    for name, n_columns, model in cases:
        X, y = _data(n_columns, rng)
        model.fit(X, y)
        bg, x = X[:args.background], X[-args.rows:]
        explainer = Explainer(model, background=bg, algorithm="tree").fit(X)
        ref_time = np.nan
        if shap is not None:
            ref = shap.TreeExplainer(model, data=bg, feature_perturbation="interventional")
            theirs, ref_time = _timed(lambda: ref.shap_values(x, check_additivity=False))
        for label, index, order in [("SV", "SV", 1), ("k-SII order 2", "k-SII", 2),
                                    ("k-SII order 3", "k-SII", 3)]:
            for when in ("first", "warm"):
                r, t = _timed(lambda: explainer.interactions(x, index=index,
                                                             max_order=order))
                print(f"| {name} | {label} ({when}) | {len(r.terms)} | {t:.2f} "
                      f"| {t / ref_time:.2f} |")
            if index == "SV" and shap is not None:
                err = np.abs(r.values[:, 1:] - theirs).max()
                print(f"| {name} | SV max abs difference to shap | | {err:.1e} | |")
                # shap's own efficiency error (its interventional algorithm
                # loses additivity on deep trees)
                base = float(np.ravel(ref.expected_value)[0])
                shap_eff = np.abs(theirs.sum(axis=1) + base - model.predict(x)).max()
                print(f"| {name} | shap SV efficiency error | | {shap_eff:.1e} | |")
            if index == "k-SII":
                eff = np.abs(r.values.sum(axis=1) - model.predict(x)).max()
                print(f"| {name} | {label}: efficiency error | | {eff:.1e} | |")
        print(f"| {name} | shap interventional SV | | {ref_time:.2f} | 1.00 |")


if __name__ == "__main__":
    main()
