"""Cost of AGREED (AdaptiveGrouper) against PAIRWISE, and of its caching.

Part 1 (d = 12): model calls and wall time of AdaptiveGrouper and
PairwiseGrouper on a fitted HistGradientBoostingRegressor, with each time
divided by the time the model itself takes to predict the same number of rows
(the rest is hybrid-row building and the N x N statistics).

Part 2 (d = 16, N = 200): model calls of AGREED with its cache against
re-evaluating every group's anchored matrix at every merge step (the same
merges, without the cache), counted from the merge history; ``--run-naive``
also runs and times the uncached variant.

Run: ``python benchmarks/bench_grouper.py [--run-naive]``.
"""

# SPDX-License-Identifier: BSD-3-Clause

import argparse
import time

import numpy as np
from sklearn.ensemble import HistGradientBoostingRegressor

from skdecomp import AdaptiveGrouper, PairwiseGrouper
from skdecomp._grouper import _AnchoredSample
from skdecomp.datasets import make_block_function


def predict_time(model, X, n_rows, batch=65536):
    rows = X[np.arange(n_rows) % X.shape[0]]
    start = time.perf_counter()
    for s in range(0, n_rows, batch):
        model.predict(rows[s : s + batch])
    return time.perf_counter() - start


def fitted_problem(d, seed):
    data = make_block_function(3000, n_features=d, max_block_size=3, noise=0.05,
                               random_state=seed)
    model = HistGradientBoostingRegressor(max_iter=100, random_state=0)
    return data, model.fit(data.data, data.target)


def part1(N):
    data, model = fitted_problem(12, seed=0)
    print(f"d = 12, N = {N}, true partition {data.groups}")
    print(f"{'method':10s} {'model calls':>12s} {'time (s)':>9s} {'predict (s)':>11s} "
          f"{'ratio':>6s}  groups")
    for name, grouper in (
        ("AGREED", AdaptiveGrouper(model, n_samples=N, rel_tol=0.05, random_state=0)),
        ("PAIRWISE", PairwiseGrouper(model, n_samples=N, random_state=0)),
    ):
        start = time.perf_counter()
        grouper.fit(data.data)
        elapsed = time.perf_counter() - start
        pt = predict_time(model, data.data, grouper.model_calls_)
        print(f"{name:10s} {grouper.model_calls_:12d} {elapsed:9.2f} {pt:11.2f} "
              f"{elapsed / pt:6.2f}  {grouper.groups_}")


def part2(N, run_naive):
    d = 16
    data, model = fitted_problem(d, seed=1)
    grouper = AdaptiveGrouper(model, n_samples=N, rel_tol=0.05, random_state=0)
    start = time.perf_counter()
    grouper.fit(data.data)
    cached_time = time.perf_counter() - start
    # without the cache, every step re-evaluates all K groups, then the K - 1
    # candidates of the chosen group
    steps = [h["n_groups"] + 1 for h in grouper.history_]
    naive = N + d * N**2 + sum((2 * K - 1) * N**2 for K in steps)
    print(f"\nd = {d}, N = {N}: {len(steps)} merges, "
          f"loss {grouper.initial_loss_:.4g} -> {grouper.loss_:.4g}")
    print(f"cached   : {grouper.model_calls_:10d} model calls, {cached_time:7.2f} s")
    line = f"no cache : {naive:10d} model calls"
    if run_naive:
        ev = _AnchoredSample(grouper._response, grouper.background_, d, n_jobs=None,
                             max_memory=2**30)
        start = time.perf_counter()
        ev.union_means(np.zeros(0, dtype=np.int64),
                       [np.array(g) for g in grouper.initial_groups_])
        for step, K in enumerate(steps):
            groups = [np.array(g) for g in grouper.cut(K)]
            ev.union_means(np.zeros(0, dtype=np.int64), groups)
            merged = grouper.history_[step]["groups"][0]
            i = next(k for k, g in enumerate(groups) if list(g) == merged)
            ev.union_means(groups[i], [g for k, g in enumerate(groups) if k != i])
        line += f", {time.perf_counter() - start:7.2f} s (counted {ev.model_calls})"
    print(line)
    print(f"ratio    : {naive / grouper.model_calls_:.2f}x fewer calls with the cache "
          f"(d/2 = {d / 2:.0f})")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n-samples", type=int, default=100, help="N for part 1")
    parser.add_argument("--run-naive", action="store_true")
    args = parser.parse_args()
    part1(args.n_samples)
    part2(200, args.run_naive)
