"""Cost of AGREED (AdaptiveGrouper) against PAIRWISE, and of its caching.

All runs use ``algorithm="model_agnostic"``, so every anchored value is a
real model call (with the default ``"auto"``, a tree ensemble's values are
read from its trees and the model sees only the N sample rows).

Part 1 (d = 12, N = 100 by default): model calls and wall time of
AdaptiveGrouper and PairwiseGrouper on a fitted HistGradientBoostingRegressor,
with each time divided by the time the model itself takes to predict the same
number of rows (the rest is hybrid-row building and the N x N statistics).

Part 2 (d = 16, N = 200, HistGradientBoostingRegressor): model calls of AGREED
with its caches against the same greedy algorithm without caches. The greedy
algorithm computes, at every step with K groups, the potentials Psi_k of all
K groups (to pick the group i of largest potential and to check the stopping
rule), then scores the candidate merges of i with each of the K - 1 other
groups by the loss decrease. AGREED keeps the row and column means of every
group's anchored N x N matrix, so a step costs only the K - 1 candidate
matrices (K - 1) N**2; the anchored matrices of groups that are not merged
are never evaluated again. Two uncached baselines are counted:

- "no cache": at every step, re-evaluate the anchored matrix of every current
  group (K N**2 calls) and of every candidate pair it scores ((K - 1) N**2),
  plus the K groups of the final partition for the last stopping check;
- "no cache, full loss": the same, but each candidate is scored by the loss
  of the merged partition recomputed from scratch, i.e. the K - 1 groups of
  that partition ((K - 1)**2 N**2 per step), as a loss-greedy written without
  the locality of the loss (merging i and j leaves every other Psi_k
  unchanged) would do.

The N model outputs on the sample itself are counted once in every variant.
Both baselines are implemented and run (they must reproduce AGREED's merges);
their calls are counted at the full size from the merge history (closed form)
and checked against counted calls on a smaller sample (N = 50 by default),
where all three variants are timed. At the full size "no cache" is run and
timed; the time of "no cache, full loss" (about 10 times the cached run) is
extrapolated as the cached run's time per model call times its calls (the
time ratios measured on the small sample follow the call ratios), and
``--run-naive`` runs it instead.

Run: ``python benchmarks/bench_grouper.py [--run-naive] [--small-n 50]``.
"""

# SPDX-License-Identifier: BSD-3-Clause

import argparse
import time

import numpy as np
from sklearn.ensemble import HistGradientBoostingRegressor

from skdecomp import AdaptiveGrouper, PairwiseGrouper
from skdecomp._game import AnchoredStatistics, CoalitionGame
from skdecomp._game._kernels import interaction_potentials
from skdecomp.datasets import make_block_function

# as AdaptiveGrouper: losses below this fraction of the variance count as zero
_ATOL = 1e-9
_REL_TOL = 0.05


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


def warm_up(model, X):
    """Compile the numba kernels before anything is timed."""
    AdaptiveGrouper(model, max_samples=5, n_groups=1, algorithm="model_agnostic",
                    random_state=0).fit(X)
    PairwiseGrouper(model, max_samples=5, algorithm="model_agnostic",
                    random_state=0).fit(X)


def part1(N):
    data, model = fitted_problem(12, seed=0)
    warm_up(model, data.data)
    print(f"d = 12, N = {N}, true partition {data.groups}")
    print(f"{'method':10s} {'model calls':>12s} {'time (s)':>9s} {'predict (s)':>11s} "
          f"{'ratio':>6s}  groups")
    for name, grouper in (
        ("AGREED", AdaptiveGrouper(model, max_samples=N, rel_tol=_REL_TOL,
                                   algorithm="model_agnostic", random_state=0)),
        ("PAIRWISE", PairwiseGrouper(model, max_samples=N, algorithm="model_agnostic",
                                     random_state=0)),
    ):
        start = time.perf_counter()
        grouper.fit(data.data)
        elapsed = time.perf_counter() - start
        pt = predict_time(model, data.data, grouper.model_calls_)
        print(f"{name:10s} {grouper.model_calls_:12d} {elapsed:9.2f} {pt:11.2f} "
              f"{elapsed / pt:6.2f}  {grouper.groups_}")


# -- the greedy algorithm without caches ---------------------------------------


def uncached_agreed(response, sample, d, *, full_loss):
    """AGREED's greedy merges, re-evaluating every anchored matrix it needs.

    Returns the merges (pairs of column lists) and the rows sent to the model.
    """
    seen = [0]

    def counting(Z):
        seen[0] += len(Z)
        return response(Z)

    game = CoalitionGame(counting, sample, np.arange(d))
    ev = AnchoredStatistics(
        game, sample, max_memory=2**30, anchor_values=game.background_prediction
    )
    empty = np.zeros(0, dtype=np.int64)
    groups = [np.array([j], dtype=np.int64) for j in range(d)]
    atol = _ATOL * max(ev.variance, np.finfo(float).tiny)
    merges, initial = [], None
    while True:
        rows, cols = ev.union_means(empty, groups)  # every current group
        psi = interaction_potentials(rows, cols)
        loss = float(psi.sum())
        initial = loss if initial is None else initial
        if len(groups) == 1 or loss <= max(_REL_TOL * initial, atol):
            break
        i = int(np.argmax(psi))
        others = [j for j in range(len(groups)) if j != i]
        if full_loss:
            decrease = []
            for j in others:
                rest = [g for k, g in enumerate(groups) if k not in (i, j)]
                merged = rest + [np.sort(np.concatenate([groups[i], groups[j]]))]
                decrease.append(loss - ev.loss(merged))
            decrease = np.array(decrease)
        else:
            r, c = ev.union_means(groups[i], [groups[j] for j in others])
            decrease = psi[i] + psi[others] - interaction_potentials(r, c)
        j = others[int(np.argmax(decrease))]
        pair = sorted(([int(c) for c in groups[i]], [int(c) for c in groups[j]]))
        merges.append(tuple(pair))
        groups = [g for k, g in enumerate(groups) if k not in (i, j)] + [
            np.sort(np.concatenate([groups[i], groups[j]]))
        ]
        groups.sort(key=lambda g: int(g[0]))
    assert seen[0] == ev.model_calls
    return merges, ev.model_calls


def closed_forms(grouper, N):
    """Model calls of the cached run and of both baselines, from the history."""
    d = len(grouper.initial_groups_)
    before = [h["n_groups"] + 1 for h in grouper.history_]  # K before each merge
    checks = before + [grouper.n_groups_]  # every partition whose Psi is needed
    cached = N + d * N**2 + sum((K - 1) * N**2 for K in before)
    naive = N + sum(K * N**2 for K in checks) + sum((K - 1) * N**2 for K in before)
    full = N + sum(K * N**2 for K in checks) + sum((K - 1) ** 2 * N**2 for K in before)
    return cached, naive, full


def history_merges(grouper):
    return [tuple(sorted(map(sorted, h["groups"]))) for h in grouper.history_]


def run_all(model, X, d, N, baselines):
    """Cached fit (timed), closed forms, and the named baselines run and timed."""
    grouper = AdaptiveGrouper(model, max_samples=N, rel_tol=_REL_TOL,
                              algorithm="model_agnostic", random_state=0)
    start = time.perf_counter()
    grouper.fit(X)
    out = {"grouper": grouper, "time": {"cached": time.perf_counter() - start}}
    out["closed"] = dict(zip(("cached", "naive", "full"), closed_forms(grouper, N)))
    assert grouper.model_calls_ == out["closed"]["cached"]
    out["counted"] = {"cached": grouper.model_calls_}
    for name, full_loss in (("naive", False), ("full", True)):
        if name in baselines:
            start = time.perf_counter()
            merges, calls = uncached_agreed(
                grouper.game_.response, grouper.background_, d, full_loss=full_loss
            )
            out["time"][name] = time.perf_counter() - start
            out["counted"][name] = calls
            out[f"same_{name}"] = merges == history_merges(grouper)
    return out


def part2(N, small_n, run_naive):
    d = 16
    data, model = fitted_problem(d, seed=1)
    print(f"\nd = {d}: true partition {data.groups}")
    warm_up(model, data.data)
    small = run_all(model, data.data, d, small_n, baselines=("naive", "full"))
    big = run_all(model, data.data, d, N,
                  baselines=("naive", "full") if run_naive else ("naive",))
    g = big["grouper"]
    print(f"N = {N}: {len(g.history_)} merges (rel_tol={_REL_TOL}), "
          f"{g.n_groups_} groups, loss {g.initial_loss_:.4g} -> {g.loss_:.4g}")
    labels = {"cached": "AGREED (cached)", "naive": "no cache",
              "full": "no cache, full loss"}
    print(f"{'variant':22s} {'calls N=' + str(N):>14s} {'time (s)':>10s} "
          f"{'calls N=' + str(small_n):>13s} {'counted':>11s} {'time (s)':>9s}  "
          "same merges")
    extrapolated = False
    for key, label in labels.items():
        calls = big["closed"][key]
        if key in big["time"]:
            t_big = f"{big['time'][key]:10.2f}"
        else:
            # the cached run's time per model call at this N, times the calls
            extrapolated = True
            t_big = f"~{big['time']['cached'] * calls / big['closed']['cached']:9.1f}"
        same = "-" if key == "cached" else str(small[f"same_{key}"])
        if key in big["time"] and key != "cached":
            same += f" / {big[f'same_{key}']}"
        print(f"{label:22s} {calls:14d} {t_big} {small['closed'][key]:13d} "
              f"{small['counted'][key]:11d} {small['time'][key]:9.2f}  {same}")
    if extrapolated:
        print(f"(~: extrapolated: the N={N} cached time per model call times the "
              "baseline's calls; --run-naive runs it)")
    for key in ("naive", "full"):
        ratio = big["closed"][key] / big["closed"]["cached"]
        t_small = small["time"][key] / small["time"]["cached"]
        verdict = "at least" if ratio >= d / 2 else "below"
        print(f"{labels[key]:22s}: {ratio:5.2f}x the calls of AGREED, {verdict} "
              f"d/2 = {d / 2:.0f} (time ratio measured at N={small_n}: {t_small:.2f}x)")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n-samples", type=int, default=100, help="N for part 1")
    parser.add_argument("--small-n", type=int, default=50,
                        help="N of the part 2 run where every variant is timed")
    parser.add_argument("--run-naive", action="store_true",
                        help="also run the full-loss baseline at N = 200")
    parser.add_argument("--skip-part1", action="store_true")
    args = parser.parse_args()
    if not args.skip_part1:
        part1(args.n_samples)
    part2(200, args.small_n, args.run_naive)
