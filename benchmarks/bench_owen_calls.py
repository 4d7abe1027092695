"""Owen values of a 64-column model through model calls, against shap's PartitionExplainer.

An MLP on a generated table of 64 columns (``make_friedman1``-like with
pairwise products), a balanced binary hierarchy over the columns, 10
background rows, 20 explained rows.

1. Exact: skdecomp's ``Explainer(method="owen", hierarchy=Z)`` evaluates
   the coalitions the hierarchy needs (2 (M**2 - 1) / 3 = 2730 for M = 64;
   the 2**64 components are out of reach), shap's PartitionExplainer with
   ``max_evals`` large enough to be exact. Coalitions per row are model
   rows / background rows, counted by a wrapper around the model.
2. Sampled: ``n_samples`` coalitions per row and background row (consistent
   orders and their reverses), the coverage of ``value +- 1.96 se`` over
   the exact values on 40 seeds.

Measured (2 shared cores, scikit-learn MLPRegressor (64, 32), shap 0.51;
skdecomp's time includes fit)::

    exact            coalitions/row   time (s)   max |diff| to shap
    skdecomp              2730           3.3          1.4e-15
    shap Partition        2732          30.5

    sampled, 40 seeds   coverage of 95 % intervals   rmse     time/seed (s)
    n_samples=252 (min)          0.970              0.0732       0.32
    n_samples=1008               0.948              0.0370       0.78

shap counts the empty and the full coalition of every row as well. The
sampled estimate costs ``n_samples`` coalitions per row and background row
(2 and 8 pairs of orders here); its values add up to the prediction exactly.

Run ``python benchmarks/bench_owen_calls.py``.
"""

import time

import numpy as np
from scipy.cluster.hierarchy import linkage
from sklearn.neural_network import MLPRegressor

from skdecomp import Explainer
from skdecomp._methods._owen import owen_coalition_count

K = 64
N_BG = 10
N_ROWS = 20


def balanced_linkage(M):
    """A scipy linkage of a balanced binary tree over M = 2**d players."""
    rows, level, next_id = [], list(range(M)), M
    sizes = {k: 1 for k in range(M)}
    height = 1.0
    while len(level) > 1:
        new = []
        for a, b in zip(level[0::2], level[1::2]):
            sizes[next_id] = sizes[a] + sizes[b]
            rows.append([a, b, height, sizes[next_id]])
            new.append(next_id)
            next_id += 1
        level, height = new, height + 1.0
    return np.array(rows, dtype=float)


class Counted:
    def __init__(self, f):
        self.f, self.rows = f, 0

    def __call__(self, X):
        self.rows += len(X)
        return self.f(X)


def main():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(2000, K))
    y = (np.sin(X[:, :8]).sum(axis=1) + (X[:, 0:32:2] * X[:, 1:32:2]).sum(axis=1)
         + 0.5 * np.tanh(X[:, 40] * X[:, 50] * X[:, 60]) + 0.1 * X[:, 32:].sum(axis=1))
    mlp = MLPRegressor(hidden_layer_sizes=(64, 32), max_iter=300, random_state=0)
    mlp.fit(X, y)
    f = mlp.predict
    bg, rows = X[:N_BG], X[100:100 + N_ROWS]
    Z = balanced_linkage(K)

    counted = Counted(f)
    t = time.perf_counter()
    explainer = Explainer(counted, background=bg, method="owen", hierarchy=Z).fit(X)
    counted.rows = 0
    ours = explainer.transform(rows)
    t_ours = time.perf_counter() - t
    ours_coal = (counted.rows - N_ROWS) / N_ROWS / N_BG
    print(f"needed coalitions {owen_coalition_count(explainer.hierarchy_)}")

    try:
        import shap
    except ImportError:  # pragma: no cover
        shap = None
    if shap is not None:
        counted = Counted(f)
        masker = shap.maskers.Partition(bg, clustering=Z)
        t = time.perf_counter()
        theirs = shap.PartitionExplainer(counted, masker)(rows, max_evals=20_000,
                                                          silent=True)
        t_shap = time.perf_counter() - t
        shap_coal = counted.rows / N_ROWS / N_BG
        diff = np.abs(theirs.values - ours).max()
    print("exact        coalitions/row    time (s)   max |diff| to shap")
    print(f"skdecomp      {ours_coal:10.0f}   {t_ours:9.1f}   "
          f"{diff if shap is not None else float('nan'):12.1e}")
    if shap is not None:
        print(f"shap Partition {shap_coal:9.0f}   {t_shap:9.1f}")

    print("sampled, 40 seeds   coverage   rmse   time/seed (s)")
    for n_samples in (8 * (K - 1), 16 * (K - 1)):
        cover, err, t = [], [], time.perf_counter()
        for seed in range(40):
            res = Explainer(f, background=bg, method="owen", hierarchy=Z,
                            n_samples=n_samples, random_state=seed).fit(X).explain(
                rows, methods=["owen"])["owen"]
            v = np.asarray(res.values)
            cover.append(np.mean(np.abs(v - ours) <= 1.96 * res.standard_errors))
            err.append(np.sqrt(np.mean((v - ours) ** 2)))
        print(f"n_samples={n_samples:5d}   {np.mean(cover):.3f}   {np.mean(err):.4f}   "
              f"{(time.perf_counter() - t) / 40:.2f}")


if __name__ == "__main__":
    main()
