"""Exact tree path against the model-agnostic path and shap's interventional TreeSHAP.

Data: 12 features, 6 groups of two columns; 100 background rows and 200
explained rows. Models: RandomForestRegressor (200 trees, max_depth=10) and
HistGradientBoostingRegressor (200 iterations). Prints, per model,

* the time of grouped Shapley values (``Explainer.transform``) and of the full
  decomposition (``Explainer.decompose``, 2**6 components) on the tree path;
* the time of ``transform`` on the model-agnostic path (2**6 * 100 hybrid
  rows per explained row), and the ratio (target: at least 50x);
* the time of Shapley values over the 12 singleton groups on the tree path,
  of ``shap.TreeExplainer(model, data=background,
  feature_perturbation="interventional").shap_values``, and their ratio
  (target: no slower than shap).

* AdaptiveGrouper on the 12 columns (N = 100 sample rows, down to one
  group): time with ``algorithm="tree"`` (row and column sums of the anchored
  matrices read from the trees) and with ``algorithm="model_agnostic"`` (every
  hybrid row sent to the model), their ratio, and whether the merges agree.

The tree path and the model-agnostic path are timed in five rounds, each the
best of 3 tree-path calls next to one model-agnostic call, so that every ratio
compares times taken under the same load on a shared machine. The speed-up is
the ratio of the best times (the usual estimate of each path's own cost, as
noise only adds time); the median of the paired ratios shows how much load from
other processes moves it. Kernels are compiled, and the model-agnostic path run
once (which starts the joblib workers), before timing. ``--n-jobs`` is passed
to both paths (threads over the kernels on the tree path, joblib workers on the
model-agnostic path). The random forest and shap stay single-threaded;
HistGradientBoosting's own predict uses OpenMP threads on every core in both
settings, which favours the model-agnostic path. ``--agnostic-rows`` times the
model-agnostic path on fewer explained rows and scales the time linearly (its
cost is linear in the rows), to keep the run short.

Run: ``python benchmarks/bench_tree.py [--n-jobs 1] [--agnostic-rows 200]``
"""

import argparse
import time

import numpy as np
from sklearn.ensemble import HistGradientBoostingRegressor, RandomForestRegressor

from skdecomp import AdaptiveGrouper, Explainer


def timed(fn, repeat=1):
    best = np.inf
    out = None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t0)
    return best, out


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n-jobs", type=int, default=1)
    parser.add_argument("--agnostic-rows", type=int, default=200)
    parser.add_argument("--no-shap", action="store_true")
    parser.add_argument("--no-grouper", action="store_true")
    args = parser.parse_args()

    rng = np.random.default_rng(0)
    n, d = 2000, 12
    X = rng.normal(size=(n, d))
    y = (
        X[:, 0] * X[:, 1]
        + np.sin(2 * X[:, 2])
        + X[:, 3] * (X[:, 4] > 0)
        + X[:, 5:].sum(axis=1)
        + 0.1 * rng.normal(size=n)
    )
    groups = [[2 * g, 2 * g + 1] for g in range(6)]
    background, Xe = X[:100], X[100:300]
    models = {
        "RandomForestRegressor(200 trees, depth 10)": RandomForestRegressor(
            n_estimators=200, max_depth=10, random_state=0
        ),
        "HistGradientBoostingRegressor(200 iterations)": HistGradientBoostingRegressor(
            max_iter=200, early_stopping=False, random_state=0
        ),
    }
    print(
        f"{d} features in {len(groups)} groups, {background.shape[0]} background "
        f"rows, {Xe.shape[0]} explained rows, n_jobs={args.n_jobs}\n"
    )
    for name, model in models.items():
        model.fit(X, y)
        kw = dict(background=background, n_jobs=args.n_jobs)
        tree = Explainer(model, groups=groups, algorithm="tree", **kw).fit(X)
        agnostic = Explainer(model, groups=groups, algorithm="model_agnostic", **kw).fit(X)
        singles = Explainer(model, algorithm="tree", **kw).fit(X)
        for e in (tree, singles):  # compile the kernels
            e.transform(Xe[:2])
            e.decompose(Xe[:2])

        m = min(args.agnostic_rows, Xe.shape[0])
        agnostic.transform(Xe[:m])  # warm-up, and start the joblib workers
        # rounds of (best of 3 tree-path calls, one model-agnostic call), so
        # that each ratio compares times taken under the same machine load
        t_tree, t_ag, ratios = np.inf, np.inf, []
        for _ in range(5):
            t_round, phi_tree = timed(lambda: tree.transform(Xe), repeat=3)
            t_ag_round, phi_ag = timed(lambda: agnostic.transform(Xe[:m]))
            t_ag_round *= Xe.shape[0] / m
            ratios.append(t_ag_round / t_round)
            t_tree, t_ag = min(t_tree, t_round), min(t_ag, t_ag_round)
        t_dec, _ = timed(lambda: tree.decompose(Xe), repeat=3)
        err = np.abs(phi_tree[:m] - phi_ag).max()
        scaled = "" if m == Xe.shape[0] else f" (measured on {m} rows, scaled)"
        print(name)
        print(f"  grouped Shapley, tree path:            {t_tree:8.3f} s")
        print(f"  grouped decomposition, tree path:      {t_dec:8.3f} s")
        print(f"  grouped Shapley, model-agnostic path:  {t_ag:8.3f} s{scaled}")
        print(f"  speed-up over model-agnostic:          {t_ag / t_tree:8.1f} x"
              "   (target >= 50x; best times)")
        print(f"  speed-up, median of paired rounds:     {np.median(ratios):8.1f} x"
              f"   (rounds {min(ratios):.1f}-{max(ratios):.1f})")
        print(f"  max |tree - model-agnostic|:           {err:8.1e}")

        t_single, phi_single = timed(lambda: singles.transform(Xe), repeat=3)
        print(f"  singleton Shapley, tree path:          {t_single:8.3f} s")
        if not args.no_shap:
            import shap

            ref = shap.TreeExplainer(
                model, data=background, feature_perturbation="interventional"
            )
            t_shap, phi_shap = timed(
                lambda: ref.shap_values(Xe, check_additivity=False), repeat=1
            )
            print(f"  singleton Shapley, shap interventional:{t_shap:8.3f} s")
            print(f"  shap time / tree path time:            {t_shap / t_single:8.1f} x"
                  "   (target >= 1)")
            print(f"  max |tree - shap|:                     "
                  f"{np.abs(phi_single - phi_shap).max():8.1e}")
            gap = phi_shap.sum(axis=1) + ref.expected_value - model.predict(Xe)
            print(f"  shap's own additivity gap:             {np.abs(gap).max():8.1e}")
        if not args.no_grouper:
            kw = dict(max_samples=100, n_groups=1, random_state=0, n_jobs=args.n_jobs)
            AdaptiveGrouper(model, algorithm="tree", **kw).fit(X[:200])  # compile
            t_gt, g_tree = timed(lambda: AdaptiveGrouper(model, algorithm="tree", **kw).fit(X))
            t_ga, g_ag = timed(
                lambda: AdaptiveGrouper(model, algorithm="model_agnostic", **kw).fit(X)
            )
            same = [h["groups"] for h in g_tree.history_] == [h["groups"] for h in g_ag.history_]
            print(f"  AdaptiveGrouper (N=100), tree path:    {t_gt:8.3f} s")
            print(f"  AdaptiveGrouper, model-agnostic path:  {t_ga:8.3f} s"
                  f"   ({g_ag.model_calls_:,} model rows)")
            print(f"  speed-up over model-agnostic:          {t_ga / t_gt:8.1f} x"
                  f"   (same merges: {same})")
        print()


if __name__ == "__main__":
    main()
