"""FDTree against a CART tree on the target, and its fit cost.

1. Regions. The columns of scikit-learn's bundled diabetes table (442 rows,
   10 columns) and a target with a known regional structure: with u_j the
   rank of column j mapped to [-1, 1],

       y = 2 u_s5 + u_bmi**2 + sin(2 u_age) + 1.5 u_bp * (+1 if sex is the
           larger level, else -1) + 0.5 u_s3 + noise,

   additive within each level of ``sex`` and not across. A
   HistGradientBoostingRegressor is fitted to it, and split into regions
   by FDTree (loss "pdp_pfi") and by the FD-Trees paper's baseline, a CART
   tree of the same depth and leaf size on the target. Every row is then
   explained against the rows of its own region (arch/PDP, Shapley values,
   occlusion/PFI, all exact from the trees), and the benchmark prints the
   region-weighted L2 disagreements PDP-SHAP, PDP-PFI and SHAP-PFI, as
   ``100 * mean over rows and groups of (phi_E - phi_E')**2 / Var f``,
   before (one region) and after.

2. Fit cost. FDTree of depth 3 (alpha=0, min_loss_share=0: every node split
   as deep as allowed) on 2,000 rows and 20 columns of a fitted
   HistGradientBoostingRegressor (100 trees) on the tree path, against
   ``model.predict`` on the N**2 K hybrid rows that the model-call back end
   would evaluate for the same anchored matrices (N = 300 sample rows,
   K = 20 groups), in the same process.

Run: ``python benchmarks/bench_fdtree.py``
"""

import time

import numpy as np
import sklearn.datasets
from sklearn.ensemble import HistGradientBoostingRegressor
from sklearn.tree import DecisionTreeRegressor

from skdecomp import Explainer, FDTree

DEPTH, LEAF = 3, 20
PAIRS = (("arch", "shapley"), ("arch", "occlusion"), ("shapley", "occlusion"))
LABELS = ("PDP-SHAP", "PDP-PFI", "SHAP-PFI")


def regional_table(random_state=0):
    X = sklearn.datasets.load_diabetes(as_frame=True).data
    U = 2 * X.rank(pct=True).to_numpy() - 1
    col = {c: j for j, c in enumerate(X.columns)}
    side = np.where(X["sex"].to_numpy() > X["sex"].mean(), 1.0, -1.0)
    y = (2 * U[:, col["s5"]] + U[:, col["bmi"]] ** 2 + np.sin(2 * U[:, col["age"]])
         + 1.5 * U[:, col["bp"]] * side + 0.5 * U[:, col["s3"]])
    rng = np.random.default_rng(random_state)
    y = y + 0.1 * y.std() * rng.standard_normal(y.shape[0])
    return X, y


def disagreements(model, X, regions):
    """Region-weighted L2 disagreements, each row against its own region."""
    n = X.shape[0]
    var = np.var(model.predict(X))
    totals = np.zeros(len(PAIRS))
    for r in np.unique(regions):
        rows = np.flatnonzero(regions == r)
        Xr = X.iloc[rows]
        expl = Explainer(model, background=rows.size).fit(Xr).explain(
            Xr, methods=["arch", "shapley", "occlusion"])
        for i, (a, b) in enumerate(PAIRS):
            gap = (np.asarray(expl[a]) - np.asarray(expl[b])) ** 2
            totals[i] += gap.mean(axis=1).sum()
    return 100 * totals / n / var


def regions_part():
    X, y = regional_table()
    model = HistGradientBoostingRegressor(max_iter=200, random_state=0).fit(X, y)
    fd = FDTree(model, max_depth=DEPTH, min_samples_leaf=LEAF, random_state=0).fit(X)
    cart = DecisionTreeRegressor(max_depth=DEPTH, min_samples_leaf=LEAF,
                                 random_state=0).fit(X, y)
    print("Regions on the diabetes columns (442 rows), HistGradientBoosting model")
    print("FDTree:")
    print(fd.export_text(show_loss=True))
    rows = {
        "one region (before)": disagreements(model, X, np.zeros(X.shape[0], dtype=int)),
        f"FDTree ({fd.n_regions_} regions)": disagreements(model, X, fd.apply(X)),
        f"CART on y ({cart.get_n_leaves()} regions)": disagreements(model, X, cart.apply(X)),
    }
    print(f"{'100 x L2 disagreement / Var f':<32}" + "".join(f"{s:>10}" for s in LABELS))
    for name, v in rows.items():
        print(f"{name:<32}" + "".join(f"{x:>10.3f}" for x in v))
    fd_v = list(rows.values())[1]
    cart_v = list(rows.values())[2]
    print("FDTree / CART:                  " + "".join(f"{a / b:>10.3f}"
                                                      for a, b in zip(fd_v, cart_v)))
    print(f"FDTree lower than CART on all three: {bool(np.all(fd_v < cart_v))}")


def cost_part():
    rng = np.random.default_rng(0)
    n, d = 2000, 20
    X = rng.uniform(-1, 1, size=(n, d))
    y = X[:, 0] * np.sign(X[:, 1]) + X[:, 2] * (X[:, 3] > 0) + np.sin(3 * X[:, 4:]).sum(axis=1)
    model = HistGradientBoostingRegressor(max_iter=100, random_state=0).fit(X, y)
    FDTree(model, max_depth=1, max_samples=30, random_state=0).fit(X[:100])  # warm up
    t0 = time.perf_counter()
    fd = FDTree(model, max_depth=DEPTH, alpha=0.0, min_loss_share=0.0,
                random_state=0).fit(X)
    t_fit = time.perf_counter() - t0
    N = fd.background_.shape[0]
    S = fd.background_
    # the hybrid rows of the model-call back end: x^n in group k, x^m elsewhere
    hybrids = np.repeat(S[None, :, :], N, axis=0)  # hybrids[n, m] = x^m
    t_predict = 0.0
    for k in range(d):
        h = hybrids.copy()
        h[:, :, k] = S[:, None, k]
        t0 = time.perf_counter()
        model.predict(h.reshape(-1, d))
        t_predict += time.perf_counter() - t0
    print()
    print(f"Fit cost: {n} rows, {d} columns, HistGradientBoosting (100 trees), "
          f"N = {N} sample rows, depth {DEPTH}")
    print(f"regions: {fd.n_regions_}, tree back end: {fd.algorithm_}")
    print(f"FDTree.fit:                                  {t_fit:7.2f} s  (target < 10 s)")
    print(f"model.predict on the N**2 K = {N * N * d:,} hybrid rows: {t_predict:7.2f} s")
    print(f"ratio fit / predict on the hybrid rows:      {t_fit / t_predict:7.3f}")


if __name__ == "__main__":
    regions_part()
    cost_part()
