"""Accuracy of sampled interaction indices at equal budgets: skdecomp and shapiq.

Model: ``HistGradientBoostingRegressor(max_iter=100, random_state=0)`` (31
leaves a tree, so interactions of high order) on 2,000 synthetic rows of K
standard normal columns, ``y = sum_j x_j / 2 + x0 x1 + sin(x2) x3 + x4 x5 x6
+ x7 x8 x9 x10 / 2 + noise``. Background: 20 training rows; explained rows:
test rows.

Reference: the exact values from the tree path (orders up to 3 for any
number of groups). Path under test: the same model through model calls
(``algorithm="model_agnostic"``), ``interactions(X, index, 2,
n_samples=budget - 2)``. shapiq's approximators get ``budget`` (they count
the empty and the full coalitions) and, for each row, a game that returns
skdecomp's coalition values of that row (``explainer.game_.values``), so
both see the same game at the same number of model calls.

The MSE is over explained rows and pairs of groups, the median over seeds.

Run: ``python benchmarks/bench_sampled_interactions.py [--rows 3] [--seeds 3]
[--budget 4096] [--columns 12 20 30 40] [--indices k-SII STII FSII BII]``
(about 15 minutes on two cores with the defaults, most of it in SVARM-IQ).
"""

# SPDX-License-Identifier: BSD-3-Clause

import argparse
import time
import warnings
from itertools import combinations

import numpy as np
from sklearn.ensemble import HistGradientBoostingRegressor

from skdecomp import Explainer

# shapiq's approximators of each index
SHAPIQ = {
    "k-SII": ["KernelSHAPIQ", "InconsistentKernelSHAPIQ", "PermutationSamplingSII",
              "SVARMIQ", "SHAPIQ"],
    "SII": ["KernelSHAPIQ", "InconsistentKernelSHAPIQ", "PermutationSamplingSII",
            "SVARMIQ", "SHAPIQ"],
    "STII": ["PermutationSamplingSTII", "SVARMIQ", "SHAPIQ"],
    "FSII": ["RegressionFSII", "SVARMIQ", "SHAPIQ"],
    "FBII": ["RegressionFBII", "SVARMIQ", "SHAPIQ"],
    "BII": ["SVARMIQ", "SHAPIQ"],
}


def data(K, seed=0):
    rng = np.random.RandomState(seed)
    X = rng.normal(size=(2000, K))
    y = (X.sum(axis=1) / 2 + X[:, 0] * X[:, 1] + np.sin(X[:, 2]) * X[:, 3]
         + X[:, 4] * X[:, 5] * X[:, 6] + X[:, 7] * X[:, 8] * X[:, 9] * X[:, 10] / 2
         + 0.1 * rng.normal(size=2000))
    return X, y


def shapiq_estimate(name, K, index, budget, game, seed):
    import shapiq

    cls = getattr(shapiq, name)
    kwargs = {"max_order": 2, "random_state": seed}
    if name in ("KernelSHAPIQ", "InconsistentKernelSHAPIQ", "PermutationSamplingSII",
                "SVARMIQ", "SHAPIQ"):
        kwargs["index"] = index
    approx = cls(K, **kwargs)
    return approx.approximate(budget, game)


def run(K, index, budget, n_rows, seeds):
    X, y = data(K)
    model = HistGradientBoostingRegressor(max_iter=100, random_state=0).fit(X[:1500], y[:1500])
    background = X[:20]
    rows = X[1500 : 1500 + n_rows]
    ref = Explainer(model, background=background).fit(X[:1500])
    exact = ref.interactions(rows, index=index, max_order=2).values
    pairs = list(combinations(range(K), 2))
    at = {t: j for j, t in enumerate(ref.interactions(rows[:1], index, 2).terms)}
    cols = [at[p] for p in pairs]
    errors = {"skdecomp": []}
    times = {"skdecomp": 0.0}
    for seed in range(seeds):
        ex = Explainer(model, background=background, algorithm="model_agnostic",
                       random_state=seed).fit(X[:1500])
        t0 = time.perf_counter()
        est = ex.interactions(rows, index=index, max_order=2, n_samples=budget - 2)
        times["skdecomp"] += time.perf_counter() - t0
        errors["skdecomp"].append(np.mean((est.values[:, cols] - exact[:, cols]) ** 2))
        game = ex.game_
        for name in SHAPIQ[index]:
            sq = []
            t0 = time.perf_counter()
            for r in range(n_rows):
                x = rows[r : r + 1]

                def value(coalitions, x=x):
                    return game.values(x, np.asarray(coalitions, dtype=bool))[0, :, 0]

                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    iv = shapiq_estimate(name, K, index, budget, value, seed)
                got = np.array([iv[p] for p in pairs])
                sq.append(np.mean((got - exact[r, cols]) ** 2))
            times[name] = times.get(name, 0.0) + time.perf_counter() - t0
            errors.setdefault(name, []).append(np.mean(sq))
    return {k: float(np.median(v)) for k, v in errors.items()}, times


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=3)
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--budget", type=int, default=4096)
    parser.add_argument("--columns", type=int, nargs="+", default=[12, 20, 30, 40])
    parser.add_argument("--indices", nargs="+", default=["k-SII"])
    args = parser.parse_args()
    for index in args.indices:
        print(f"\n{index}, order 2, budget {args.budget} coalitions, {args.rows} rows, "
              f"median MSE of the pair terms over {args.seeds} seeds")
        names = ["skdecomp"] + SHAPIQ[index]
        print(f"{'K':>4} " + " ".join(f"{n:>24}" for n in names))
        for K in args.columns:
            mse, times = run(K, index, args.budget, args.rows, args.seeds)
            print(f"{K:>4} " + " ".join(f"{mse[n]:>24.2e}" for n in names), flush=True)
            print("     time (s)" + " ".join(f"{times[n]:>24.1f}" for n in names)[11:],
                  flush=True)


if __name__ == "__main__":
    main()
