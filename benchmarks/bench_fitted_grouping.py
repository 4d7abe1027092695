"""Groupers on the structure of fitted models: semi-synthetic problems.

Real columns of scikit-learn's bundled tables, a target of known structure
(three blocks of interacting columns, sizes 3, 2 and 2, plus an additive term
for every other column; :func:`skdecomp.datasets.make_semi_synthetic`, 2,000
rows by a smoothed bootstrap) and HistGradientBoosting and RandomForest
regressors fitted to it. Every grouper sees the fitted model only (on the
tree path), never the true function. Per run it prints the adjusted Rand
index (ARI) to the true blocks of

- ``agreed``: AdaptiveGrouper on its defaults (``strategy="pairs"``,
  held-out stopping with ``group_penalty=0.02`` per column pair joined);
- ``paper``: the AGREED paper's merge order with the same held-out stopping
  (``strategy="paper"``), and ``paper25``: the paper's order and rule (stop at
  25 % of the initial loss);
- ``agreed@K``, ``pairwise@K``: AdaptiveGrouper and PairwiseGrouper told the
  true number of groups K;
- ``recursive``, ``ishap``: RecursiveGrouper and IShapGrouper on their
  defaults;

with the size of the largest group of every default grouper, the number of
groups AGREED found, whether it calls its partition useful, and its time
(the fitted model's predict time on the same rows is printed for scale).
The summary counts the runs where default AGREED is within 0.1 ARI of
PairwiseGrouper at the true K, at least as close as IShapGrouper, and where a
default grouper returns a group of more than half the columns.

Run: ``python benchmarks/bench_fitted_grouping.py [--seeds 3] [--tables
breast_cancer wine] [--rows 2000]`` (about 20 minutes for the 12 runs on 2
cores, mostly IShapGrouper and RecursiveGrouper).
"""

# SPDX-License-Identifier: BSD-3-Clause

import argparse
import time
import warnings

import numpy as np
from sklearn.ensemble import HistGradientBoostingRegressor, RandomForestRegressor
from sklearn.metrics import adjusted_rand_score

from skdecomp import AdaptiveGrouper, IShapGrouper, PairwiseGrouper, RecursiveGrouper
from skdecomp._partition import group_labels
from skdecomp.datasets import make_semi_synthetic


def fitted_model(family, seed):
    if family == "hgb":
        return HistGradientBoostingRegressor(max_iter=300, learning_rate=0.05,
                                             random_state=seed)
    return RandomForestRegressor(n_estimators=200, min_samples_leaf=2, n_jobs=1,
                                 random_state=seed)


def run(table, family, seed, rows, only=None):
    data = make_semi_synthetic(table, n_samples=rows, random_state=seed)
    X, y = data.data, data.target
    d, K = X.shape[1], data.n_groups
    truth = group_labels([np.asarray(g) for g in data.groups], d)
    model = fitted_model(family, seed).fit(X, y)
    start = time.perf_counter()
    model.predict(X)
    predict_time = time.perf_counter() - start
    groupers = {
        "agreed": AdaptiveGrouper(model, random_state=0),
        "paper": AdaptiveGrouper(model, strategy="paper", random_state=0),
        "paper25": AdaptiveGrouper(model, strategy="paper", rel_tol=0.25, random_state=0),
        "agreed@K": AdaptiveGrouper(model, n_groups=K, random_state=0),
        "pairwise@K": PairwiseGrouper(model, n_groups=K, random_state=0),
        "recursive": RecursiveGrouper(model, random_state=0),
        "ishap": IShapGrouper(model, random_state=0),
    }
    out = dict(table=table, model=family, seed=seed, d=d, K=K, predict=predict_time)
    for name, grouper in groupers.items():
        if only is not None and name not in only:
            out.update({name: np.nan, name + "_time": np.nan, name + "_largest": 0,
                        name + "_k": 0})
            continue
        start = time.perf_counter()
        grouper.fit(X)
        out[name + "_time"] = time.perf_counter() - start
        out[name] = adjusted_rand_score(truth, grouper.labels_)
        out[name + "_largest"] = max(len(g) for g in grouper.groups_)
        out[name + "_k"] = grouper.n_groups_
    out["useful"] = groupers["agreed"].useful_partition_
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--tables", nargs="+", default=["breast_cancer", "wine"])
    parser.add_argument("--models", nargs="+", default=["hgb", "rf"])
    parser.add_argument("--rows", type=int, default=2000)
    parser.add_argument("--groupers", nargs="+", default=None,
                        help="run only these (agreed and pairwise@K are always run)")
    args = parser.parse_args()
    only = None if args.groupers is None else set(args.groupers) | {"agreed", "pairwise@K"}
    warnings.filterwarnings("ignore")
    names = ["agreed", "paper", "paper25", "agreed@K", "pairwise@K", "recursive", "ishap"]
    header = (f"{'table':14s} {'model':5s} {'seed':>4s} {'d':>3s} {'K':>3s} "
              + " ".join(f"{n:>10s}" for n in names)
              + "  largest(agreed/paper/paper25/recursive/ishap)  K_agreed useful"
              + "  agreed_s predict_s")
    print(header)
    results = []
    for table in args.tables:
        for family in args.models:
            for seed in range(args.seeds):
                r = run(table, family, seed, args.rows, only)
                results.append(r)
                largest = "/".join(str(r[n + "_largest"]) for n in
                                   ("agreed", "paper", "paper25", "recursive", "ishap"))
                print(f"{table:14s} {family:5s} {seed:4d} {r['d']:3d} {r['K']:3d} "
                      + " ".join(f"{r[n]:10.2f}" for n in names)
                      + f"  {largest:>45s}  {r['agreed_k']:8d} {str(r['useful']):>6s}"
                      + f"  {r['agreed_time']:8.2f} {r['predict']:9.4f}", flush=True)
    n = len(results)
    for name in ("agreed", "paper", "paper25"):
        within = sum(r[name] >= r["pairwise@K"] - 0.1 for r in results)
        vs_ishap = sum(r[name] >= r["ishap"] for r in results)
        half = sum(r[name + "_largest"] > r["d"] / 2 for r in results)
        med = np.median([r[name] for r in results])
        print(f"{name:8s}: within 0.1 ARI of pairwise@K in {within}/{n}, at least as "
              f"close as ishap in {vs_ishap}/{n}, a group of more than half the "
              f"columns in {half}/{n}, median ARI {med:.2f}")
    for name in ("recursive", "ishap", "pairwise@K", "agreed@K"):
        half = sum(r[name + "_largest"] > r["d"] / 2 for r in results)
        one = sum(r[name + "_k"] == 1 for r in results)
        med = np.median([r[name] for r in results])
        print(f"{name:10s}: median ARI {med:.2f}, one group in {one}/{n}, a group of "
              f"more than half the columns in {half}/{n}")


if __name__ == "__main__":
    main()
