"""Owen and Winter values on the tree path against shap's PartitionExplainer.

An XGBoost model of 300 trees of depth 6 on 30 columns, 100 background rows
(the marginal game), 1,000 explained rows, one thread. skdecomp reads the
hierarchical values leaf by leaf (``Explainer(model, method="owen",
hierarchy=...)``) for a three-level hierarchy (3 blocks of 2 to 4
sub-blocks) and for a binary hierarchy (the columns halved recursively,
depth 5), the one given to shap as a scipy linkage:
``shap.PartitionExplainer(model.predict, shap.maskers.Partition(background,
clustering=Z))`` at ``max_evals = M**2 = 900``, where its values are exact
(the same with 2,000 and 5,000), measured on 20 rows and scaled to 1,000.
skdecomp's tree-path Shapley values of the same game are timed beside them.

Measured (2 shared cores, one thread, warm kernels)::

    skdecomp owen, three levels       1000 rows    0.74 s
    skdecomp owen, binary             1000 rows    0.96 s
    skdecomp shapley (tree path)      1000 rows    0.70 s
    shap PartitionExplainer, binary     20 rows   20.36 s  -> 1000 rows ~1018 s
    shap / skdecomp (binary)         1059x
    owen / shapley (three levels)    1.06x
    max |skdecomp - shap| (binary)   2.6e-06 (shap calls the model in float32)

With ``--quick`` (200 rows, 5 shap rows): 0.46 s, 0.56 s and 0.29 s, shap
~196 s (352x), owen / shapley 1.56x, agreement 5.0e-07. The explained rows
share the per-leaf work (the background patterns and the leaf's local
hierarchy), so the time grows slower than the rows.

Run ``python benchmarks/bench_tree_owen.py`` (``--quick`` for 200 rows and
5 shap rows).
"""

# SPDX-License-Identifier: BSD-3-Clause

import sys
import time

import numpy as np


def halves(lo, hi):
    """A binary hierarchy over ``lo .. hi - 1``: halved recursively."""
    if hi - lo == 1:
        return lo
    mid = (lo + hi) // 2
    return [halves(lo, mid), halves(mid, hi)]


THREE_LEVELS = [
    [list(range(0, 3)), list(range(3, 7)), list(range(7, 10))],
    [list(range(10, 14)), list(range(14, 16)), [16], list(range(17, 22))],
    [list(range(22, 26)), list(range(26, 30))],
]


def main(quick=False):
    import shap
    import xgboost

    from skdecomp import Explainer

    n_rows, n_shap = (200, 5) if quick else (1000, 20)
    rng = np.random.default_rng(0)
    M = 30
    X = rng.normal(size=(3000, M))
    y = (X[:, 0] * X[:, 11] + np.sin(X[:, 3] * X[:, 22]) + X[:, 5] * X[:, 6] * X[:, 29]
         + X[:, 14] ** 2 - X[:, 17] * X[:, 8] + X[:, :10].sum(axis=1))
    model = xgboost.XGBRegressor(n_estimators=300, max_depth=6, n_jobs=1).fit(X, y)
    background = X[:100]
    rows = X[1000:1000 + n_rows]

    def timed(explainer):
        # the kernels are chosen by the sizes: warm the ones of these sizes
        explainer.transform(rows)
        t = time.perf_counter()
        phi = explainer.transform(rows)
        return phi, time.perf_counter() - t

    fit = dict(background=background)
    owen3, t_owen3 = timed(Explainer(model, method="owen", hierarchy=THREE_LEVELS,
                                     **fit).fit(X))
    binary = Explainer(model, method="owen", hierarchy=halves(0, M), **fit).fit(X)
    owen2, t_owen2 = timed(binary)
    shapley, t_shapley = timed(Explainer(model, **fit).fit(X))
    # efficiency of both
    for phi in (owen3, owen2):
        gap = np.abs(phi.sum(axis=1) + binary.expected_value_ - model.predict(rows))
        assert gap.max() < 1e-4, gap.max()

    Z = binary.hierarchy_.linkage()
    masker = shap.maskers.Partition(background, clustering=Z)
    explainer = shap.PartitionExplainer(model.predict, masker)
    explainer(rows[:1], max_evals=M * M, silent=True)  # warm-up
    t = time.perf_counter()
    sv = explainer(rows[:n_shap], max_evals=M * M, silent=True)
    t_shap = time.perf_counter() - t
    t_shap_all = t_shap * n_rows / n_shap
    diff = np.abs(sv.values - owen2[:n_shap]).max()

    print(f"{'skdecomp owen, three levels':32s} {n_rows:5d} rows {t_owen3:7.2f} s")
    print(f"{'skdecomp owen, binary':32s} {n_rows:5d} rows {t_owen2:7.2f} s")
    print(f"{'skdecomp shapley (tree path)':32s} {n_rows:5d} rows {t_shapley:7.2f} s")
    print(f"{'shap PartitionExplainer, binary':32s} {n_shap:5d} rows {t_shap:7.2f} s"
          f"  -> {n_rows} rows ~{t_shap_all:.0f} s")
    print(f"{'shap / skdecomp (binary)':32s} {t_shap_all / t_owen2:.0f}x")
    print(f"{'owen / shapley (three levels)':32s} {t_owen3 / t_shapley:.2f}x")
    print(f"{'max |skdecomp - shap| (binary)':32s} {diff:.1e}")


if __name__ == "__main__":
    main(quick="--quick" in sys.argv)
