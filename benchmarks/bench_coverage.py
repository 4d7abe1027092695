"""Coverage of the 95 % intervals of the sampled attributions, per method and budget.

Models: an MLP, an SVR, a k-nearest-neighbours regressor and a random
forest, fitted on two tables bundled with scikit-learn, standardised:
``load_wine`` (13 columns, the class as a number) and ``load_diabetes``
(10 columns). 10 background rows and 10 explained rows, drawn at random.
Reference: the exact Shapley values (``method="shapley"``) for
``kernel_shap`` and ``permutation_shap``, each method's value with every
coalition for ``lime`` and ``rise``. For every budget, from the smallest
each method accepts to 1,600 coalitions (1,000 for diabetes: from 1,022 on,
every coalition of 10 groups is taken and the values are exact), the script
prints the share of the intervals ``value +- 1.96 se`` (over seeds, rows
and groups: 40 seeds x 10 rows x K groups) that hold the reference; every
cell should be at least 0.90. ``--detail`` also prints the median over
values of (mean se over seeds) / (sd of the values over seeds), and the
share of inexact values whose standard error is 0.

The models are called through a table of their predictions on every
hybrid of an explained row and a background row (2**K per pair), made once
per model: the game, and so every estimate and standard error, is the
same as with the model itself, at a fraction of the cost.

Measured (40 seeds, coverage per model MLP/SVR/kNN/forest; no inexact value
had a standard error of 0)::

    wine, K = 13
      kernel_shap      104: 0.93/0.93/0.98/0.99  400: 0.95/0.95/0.96/0.98
                       1600: 0.95/0.95/0.95/0.96
      permutation_shap 72: 0.97/0.96/0.98/1.00  100: 0.96/0.96/0.97/0.99
                       400: 0.94/0.95/0.97/0.98  1600: 0.95/0.94/0.95/0.96
      lime             28: 0.94/0.94/0.94/0.95  100: 0.95/0.95/0.95/0.95
                       400: 0.95/0.95/0.95/0.95  1600: 0.96/0.96/0.95/0.95
      rise             14: 0.96/0.97/0.95/0.96  100: 0.96/0.97/0.96/0.96
                       400: 0.96/0.97/0.97/0.97  1600: 0.95/0.95/0.95/0.95
    diabetes, K = 10
      kernel_shap      80: 0.94/0.94/0.94/0.94  100: 0.94/0.94/0.94/0.94
                       400: 0.94/0.94/0.94/0.95  1000: 0.96/0.96/0.95/0.95
      permutation_shap 54: 0.97/0.97/0.97/0.98  100: 0.96/0.95/0.96/0.97
                       400: 0.96/0.96/0.96/0.96  1000: 0.96/0.95/0.96/0.95
      lime             22: 0.95/0.94/0.95/0.94  100: 0.96/0.96/0.95/0.95
                       400: 0.95/0.95/0.96/0.96  1000: 0.94/0.95/0.95/0.94
      rise             11: 0.95/0.95/0.95/0.95  100: 0.95/0.95/0.95/0.95
                       400: 0.94/0.94/0.94/0.94  1000: 0.94/0.94/0.95/0.94

Draws that all agree get the interval of a rule-of-three bound
(``_errors.Agreeing``): the piecewise constant models of wine (kNN, the
forest) are conservative at the smallest budgets (``--detail``: se/sd 1.5
to 3.2, 1.0 to 1.1 at 1,600). Scaled by the range of the game's values
alone, the bound made the forest's standard errors 40 to 90 times the
spread over seeds. ``benchmarks/bench_coverage_games.py`` measures the
smallest budgets on smooth, AND-like and majority games.

Run: ``python benchmarks/bench_coverage.py [--seeds 40] [--detail]``
(about 3.5 minutes on two cores; ``--tables``, ``--models``, ``--methods`` and
``--budgets`` select cells).
"""

# SPDX-License-Identifier: BSD-3-Clause

import argparse
import os
import sys
import time
import warnings
from multiprocessing import Pool

import numpy as np
from sklearn.datasets import load_diabetes, load_wine
from sklearn.ensemble import RandomForestRegressor
from sklearn.neighbors import KNeighborsRegressor
from sklearn.neural_network import MLPRegressor
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVR

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

import skdecomp._methods._sampled as sampled  # noqa: E402
from skdecomp import Explainer  # noqa: E402
from skdecomp._methods._registry import min_samples, n_coalitions  # noqa: E402

N_BG, N_ROWS = 10, 10
METHODS = ["kernel_shap", "permutation_shap", "lime", "rise"]
MODELS = ["mlp", "svr", "knn", "forest"]
TABLES = ["wine", "diabetes"]


def table(name):
    if name == "wine":
        X, y = load_wine(return_X_y=True)
        y = y.astype(float)
    else:
        X, y = load_diabetes(return_X_y=True)
    return StandardScaler().fit_transform(X), y


def model(name):
    return {
        "mlp": MLPRegressor(hidden_layer_sizes=(32, 32), max_iter=2000, random_state=0),
        "svr": SVR(C=10.0),
        "knn": KNeighborsRegressor(n_neighbors=5),
        "forest": RandomForestRegressor(n_estimators=50, max_depth=6, random_state=0,
                                        n_jobs=1),
    }[name]


def budgets(method, K, chosen=None):
    low = min_samples(method, K)
    top = 1600 if n_coalitions(K) > 1600 else 1000
    out = sorted({low} | {b for b in (100, 400, top) if b > low})
    return [b for b in out if chosen is None or b in chosen or b == low and 0 in chosen]


class Lookup:
    """A model's predictions on every hybrid of some rows with the background.

    Rows it does not hold are predicted by the model itself.
    """

    def __init__(self, predict, rows, background):
        K = rows.shape[1]
        self.fallback = predict
        rng = np.random.RandomState(0)
        self.mult = rng.randint(1, 2**62, size=K).astype(np.uint64) * np.uint64(2) + 1
        masks = ((np.arange(1 << K)[:, None] >> np.arange(K)) & 1).astype(bool)
        keys, values = [], []
        for x in rows:
            H = np.where(masks[:, None, :], x, background[None]).reshape(-1, K)
            keys.append(self.keys(H))
            values.append(predict(H))
        keys, first = np.unique(np.concatenate(keys), return_index=True)
        self.table, self.values = keys, np.concatenate(values)[first]

    def keys(self, X):
        # a hash of the exact bits of each row
        bits = np.ascontiguousarray(X, dtype=np.float64).view(np.uint64)
        return (bits * self.mult).sum(axis=1, dtype=np.uint64)

    def __call__(self, X):
        X = np.asarray(X, dtype=np.float64)
        k = self.keys(X)
        at = np.minimum(np.searchsorted(self.table, k), self.table.size - 1)
        found = self.table[at] == k
        out = np.empty(X.shape[0])
        out[found] = self.values[at[found]]
        if not found.all():
            out[~found] = self.fallback(X[~found])
        return out


def reference(explainer, rows, method):
    if method in ("kernel_shap", "permutation_shap"):
        return explainer.set_params(method="shapley").transform(rows)
    K = explainer.game_.n_groups
    return sampled.sampled_attributions(
        explainer.game_, rows, [method], np.random.RandomState(0), n_samples=1 << K
    )[method]


def measure(job):
    table_name, model_name, method, n_seeds, chosen = job
    warnings.filterwarnings("ignore")
    X, y = table(table_name)
    f = model(model_name).fit(X, y)
    order = np.random.RandomState(0).permutation(X.shape[0])
    bg, rows = X[order[:N_BG]], X[order[N_BG:N_BG + N_ROWS]]
    explainer = Explainer(Lookup(f.predict, rows, bg), background=bg,
                          random_state=0).fit(X)
    target = reference(explainer, rows, method)
    out = []
    for b in budgets(method, X.shape[1], chosen):
        est, se = [], []
        for seed in range(n_seeds):
            errors = {}
            value = sampled.sampled_attributions(
                explainer.game_, rows, [method], np.random.RandomState(seed),
                n_samples=b, errors=errors,
            )[method]
            est.append(value)
            se.append(errors[method])
        est, se = np.array(est), np.array(se)
        miss = np.abs(est - target)
        # values exact but for rounding count as held
        exact = miss <= 1e-9 * (1 + np.abs(target))
        cover = np.mean(exact | (miss <= 1.96 * se))
        zero = np.mean((se == 0) & ~exact)
        sd = est.std(axis=0, ddof=1)
        ratio = np.median(se.mean(axis=0)[sd > 0] / sd[sd > 0])
        out.append((table_name, model_name, method, b, cover, ratio, zero))
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=40)
    parser.add_argument("--detail", action="store_true")
    parser.add_argument("--n-jobs", type=int, default=2)
    parser.add_argument("--tables", nargs="+", default=TABLES)
    parser.add_argument("--models", nargs="+", default=MODELS)
    parser.add_argument("--methods", nargs="+", default=METHODS)
    parser.add_argument("--budgets", nargs="+", type=int, default=None,
                        help="budgets to run (0: the smallest)")
    args = parser.parse_args()
    start = time.perf_counter()
    jobs = [(t, m, meth, args.seeds, args.budgets) for t in args.tables
            for meth in args.methods for m in args.models]
    results = {}
    with Pool(args.n_jobs) as pool:
        for res in pool.imap_unordered(measure, jobs):
            for t, m, meth, b, cover, ratio, zero in res:
                results[t, m, meth, b] = cover
                if args.detail:
                    print(f"{t:8s} {m:6s} {meth:16s} n_samples={b:5d} "
                          f"coverage={cover:.3f} se/sd={ratio:.2f} se=0: {zero:.3f}",
                          flush=True)
    for t in args.tables:
        K = table(t)[0].shape[1]
        print(f"\n{t}, K = {K}: coverage per model ({', '.join(args.models)})")
        for meth in args.methods:
            cells = []
            for b in budgets(meth, K, args.budgets):
                covers = [results[t, m, meth, b] for m in args.models]
                cells.append(f"{b}: " + "/".join(f"{c:.2f}" for c in covers))
            print(f"  {meth:16s} " + "  ".join(cells))
    print(f"\n{time.perf_counter() - start:.0f} s")


if __name__ == "__main__":
    main()
