"""Coverage of 95 % intervals at the smallest budgets: smooth, AND-like, majority games.

Games over K = 6 columns, one group each (``game``):

- ``smooth``: a random smooth function with interactions of all orders;
- ``and``: ``prod_k 1[x_k > 0]``, which changes only when every group is
  present: with one background row below 0 everywhere, v(S) = 1 for S = N
  and 0 for every other coalition, so every drawn coalition agrees;
- ``majority``: ``1[#{k: x_k > 0} >= 4]``.

Data: normal columns shifted by 0.8 (each column above 0 with probability
0.79); 6 explained rows, half of them with every column above 0. The
background is 4 rows (one below 0 everywhere, one above 0 everywhere, two
mostly below 0), or one row below 0 everywhere (an anchored game, as for an
image against one baseline).

For every sampled method (``kernel_shap``, ``permutation_shap``, ``lime``,
``rise``, and ``owen`` on three hierarchies, ``OWEN``) at its smallest
budget (``min_samples``), and every interaction index of order 2 (order 1
for ``SV`` and ``BV``) and of order 3 (``SII@3``) at its smallest budget
(``smallest_index_budget``), the script prints the share of the intervals
``value +- 1.96 se`` that hold the exact value (over 40 seeds and the rows;
for the indices, the lowest over the sizes of terms, singletons, pairs,
triples; values exact but for rounding count as held), and the number of
values that are not exact yet have a standard error of 0 or of rounding
size (below 1e-12 times the scale of the game's values); the target is at
least 0.90 and no such value. ``--groups 8`` runs 8 groups (majority: at
least 5 above 0), ``--random-smooth 12`` twelve random smooth games.
Reference: the exact Shapley values for ``kernel_shap`` and
``permutation_shap``, each method's value with every coalition for ``lime``
and ``rise``, the exact index values for the indices, and for ``owen`` the
mean marginal contribution over every order consistent with the hierarchy
(``tests/_naive.hierarchical_value``, from the values of all coalitions).

Measured (40 seeds; coverage, then the inexact values with a standard
error of 0 in brackets)::

    K = 6               budget smooth/4 smooth/1  and/4    and/1 majority/4 majority/1
    kernel_shap             48 0.943(0) 0.923(0) 1.000(0) 0.977(0) 0.998(0) 0.958(0)
    permutation_shap        30 0.967(0) 0.969(0) 1.000(0) 1.000(0) 1.000(0) 1.000(0)
    lime                    14 0.935(0) 0.944(0) 0.965(0) 1.000(0) 0.938(0) 0.965(0)
    rise                     7 0.931(0) 0.928(0) 0.981(0) 1.000(0) 0.968(0) 0.994(0)
    owen-chain              40 0.977(0) 0.944(0) 1.000(0) 1.000(0) 0.999(0) 1.000(0)
    owen-two                40 0.963(0) 0.913(0) 1.000(0) 1.000(0) 0.994(0) 1.000(0)
    owen-deep               40 0.985(0) 0.938(0) 1.000(0) 1.000(0) 0.997(0) 1.000(0)
    Moebius                 21 1.000(0) 1.000(0) 1.000(0) 1.000(0) 1.000(0) 1.000(0)
    SII, k-SII, SV          28 0.932(0) 0.936(0) 0.944(0) 0.927(0) 0.924(0) 0.909(0)
    STII                    28 0.969(0) 0.968(0) 0.978(0) 0.988(0) 0.949(0) 0.948(0)
    FSII                    36 0.914(0) 0.927(0) 0.918(0) 0.974(0) 0.918(0) 0.931(0)
    BII, BV                 28 0.938(0) 0.941(0) 0.954(0) 0.950(0) 0.939(0) 0.932(0)
    FBII                    36 0.936(0) 0.940(0) 0.938(0) 0.975(0) 0.944(0) 0.925(0)
    SII@3, k-SII@3          50 0.941(0) 0.943(0) 0.971(0) 1.000(0) 0.944(0) 0.989(0)
    STII@3                  50 0.971(0) 0.971(0) 0.996(0) 1.000(0) 0.958(0) 1.000(0)
    FSII@3                  50 0.942(0) 0.944(0) 0.971(0) 1.000(0) 0.960(0) 0.997(0)
    BII@3                   50 0.941(0) 0.943(0) 0.974(0) 1.000(0) 0.958(0) 0.987(0)
    FBII@3                  50 0.942(0) 0.944(0) 0.974(0) 1.000(0) 0.927(0) 0.999(0)

    K = 8
    kernel_shap             64 0.937(0) 0.940(0) 0.990(0) 0.973(0) 0.995(0) 0.952(0)
    permutation_shap        42 0.927(0) 0.917(0) 1.000(0) 1.000(0) 1.000(0) 1.000(0)
    lime                    18 0.928(0) 0.915(0) 0.977(0) 0.998(0) 0.949(0) 0.941(0)
    rise                     9 0.942(0) 0.932(0) 0.968(0) 1.000(0) 0.954(0) 0.995(0)
    owen-chain              56 0.970(0) 0.968(0) 1.000(0) 1.000(0) 0.999(0) 1.000(0)
    owen-two                56 0.939(0) 0.929(0) 1.000(0) 1.000(0) 0.998(0) 1.000(0)
    owen-deep               56 0.962(0) 0.958(0) 1.000(0) 1.000(0) 1.000(0) 1.000(0)
    SII, k-SII, SV          40 0.941(0) 0.937(0) 0.953(0) 0.952(0) 0.948(0) 0.929(0)
    STII                    40 0.964(0) 0.967(0) 0.976(0) 0.990(0) 0.963(0) 0.949(0)
    FSII                    52 0.940(0) 0.943(0) 0.926(0) 0.955(0) 0.942(0) 0.957(0)
    BII, BV                 40 0.943(0) 0.942(0) 0.960(0) 0.973(0) 0.952(0) 0.940(0)
    FBII                    52 0.952(0) 0.952(0) 0.954(0) 0.970(0) 0.945(0) 0.944(0)
    SII@3, k-SII@3          88 0.944(0) 0.941(0) 0.952(0) 0.996(0) 0.926(0) 0.984(0)
    STII@3                  88 0.976(0) 0.976(0) 0.994(0) 1.000(0) 0.990(0) 0.995(0)
    FSII@3                  88 0.957(0) 0.957(0) 0.941(0) 0.999(0) 0.946(0) 0.991(0)
    BII@3                   88 0.940(0) 0.940(0) 0.965(0) 1.000(0) 0.944(0) 0.989(0)
    FBII@3                  88 0.958(0) 0.958(0) 0.938(0) 0.989(0) 0.944(0) 0.989(0)

Order 3 before (the order-2 smallest budget, 28 and 40 coalitions; no layer
of two groups taken whole): K = 6, k-SII 0.82 to 0.96, FSII 0.85 to 0.93,
FBII 0.88 to 0.97, STII 0.91 to 1.00; K = 8, k-SII 0.73 on majority/4 and
/1, FBII 0.84 to 0.86 on majority (the singletons). KernelSHAP on one
background row, 12 random smooth games of 6 groups: 0.908 to 0.931 (0.901
to 0.924 before its degrees of freedom counted its fit, ``Draws.spent``).
Order-2 FSII and FBII with 4 pairs a layer (28 and 40 coalitions): their
singletons covered 0.872 and 0.887 on majority/1 of 6 groups; with 5 pairs
(32) 0.903 to 0.963, with 6 (36) 0.914 or more.

The sampled Owen value before its standard errors were permutation SHAP's
(each group's spread moderated, agreeing pairs bounded): at two pairs of
orders a game, K = 6, 0.78 to 0.95 and up to 227 inexact values with a
standard error of 0 a cell; at three pairs (6(K - 1)) with them, 8 groups,
``owen-deep`` covered 0.883 (smooth/4) and 0.867 (smooth/1): players 2 and
4 (in the block under player 0) turn on whether player 0 and the other
come first, which each pair of an order and its reverse settles one of two
ways, the same way in all three pairs of a quarter of the games (their
intervals 0.53 to 0.57). With four pairs (8(K - 1)), on 12 random smooth
games of 6 and of 8 groups, 0.909 to 0.988.

Run: ``python benchmarks/bench_coverage_games.py [--seeds 40] [--n-jobs 2]``
(under 10 s on two cores; ``--groups 8`` as long).
"""

# SPDX-License-Identifier: BSD-3-Clause

import argparse
import os
import sys
import time
import warnings
from multiprocessing import Pool

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "tests"))

from _naive import hierarchical_value

import skdecomp._methods._sampled as sampled
from skdecomp import Explainer
from skdecomp._methods._indices import INDICES, index_terms
from skdecomp._methods._owen import owen_attributions, owen_coalition_count
from skdecomp._methods._registry import min_samples
from skdecomp._methods._sampled_indices import (
    sampled_interactions,
    smallest_index_budget,
)

K = 6
N_ROWS = 6
ORDER3 = [f"{name}@3" for name in ("SII", "k-SII", "STII", "FSII", "BII", "FBII")]
METHODS = ["kernel_shap", "permutation_shap", "lime", "rise"]
INDEX_NAMES = list(INDICES)
GAMES = ["smooth", "and", "majority"]
BACKGROUNDS = [4, 1]
# the sampled Owen value on hierarchies whose exact coalitions exceed its
# smallest budget: "owen-chain" nests one group at a time ([0, [1, [2, ...]]]),
# "owen-two" is two blocks, of K - 2 groups and of 2 (K - 1 and 1 for K < 8),
# "owen-deep" three levels, [[0, [1, ..., K - 3]], [K - 2, K - 1]] (K < 8:
# [[0, [1, ..., K - 2]], [K - 1]])
OWEN = ["owen-chain", "owen-two", "owen-deep"]


def nested(kind, K):
    """The hierarchy of an ``owen-<kind>`` method as nested lists over K groups."""
    if kind == "chain":
        h = K - 1
        for k in range(K - 2, -1, -1):
            h = [k, h]
        return h
    # the last block: 2 groups, 1 for K < 8 (so that the exact count exceeds
    # the smallest budget)
    m = K - 2 if K >= 8 else K - 1
    if kind == "two":
        return [list(range(m)), list(range(m, K))]
    return [[0, list(range(1, m))], list(range(m, K))]


def model(name, K):
    if name.startswith("smooth"):
        # "smooth" is the game of seed 3, "smooth<r>" that of seed r
        r = np.random.default_rng(int(name[6:] or 3))
        a, c = r.normal(size=K), r.normal(size=K)
        B = np.triu(r.normal(size=(K, K)), 1)

        def f(X):
            X = np.asarray(X, dtype=float)
            return (np.sin(X) @ a + np.einsum("ni,ij,nj->n", X, B, X)
                    + np.tanh(X @ c) + X[:, 0] * X[:, 2] * X[:, 4])
        return f
    if name == "and":
        return lambda X: np.all(np.asarray(X, dtype=float) > 0, axis=1).astype(float)
    # at least two thirds of the groups above 0 (4 of 6, 5 of 8)
    need = round(2 * K / 3)
    return lambda X: (np.sum(np.asarray(X, dtype=float) > 0, axis=1) >= need).astype(float)


def problem(name, n_background, K):
    """Model, data, background rows and explained rows."""
    rng = np.random.RandomState(0)
    X = rng.normal(size=(400, K)) + 0.8
    every = np.flatnonzero(np.all(X > 0, axis=1))
    some = np.flatnonzero(~np.all(X > 0, axis=1))
    rows = X[np.r_[every[:N_ROWS // 2], some[:N_ROWS - N_ROWS // 2]]]
    # below 0 everywhere, above 0 everywhere, then mostly below 0
    bg = rng.normal(size=(n_background, K)) - 0.3
    bg[0] = -np.abs(bg[0])
    if n_background > 1:
        bg[1] = np.abs(bg[1])
    return model(name, K), X, bg, rows


def explainer(name, n_background, K, hierarchy=None):
    f, X, bg, rows = problem(name, n_background, K)
    return Explainer(f, background=bg, random_state=0, hierarchy=hierarchy).fit(X), rows


def owen_kind(method):
    """``chain``, ``two`` or ``deep`` for an ``owen-<kind>`` method, else None."""
    return method[5:] if method.startswith("owen-") else None


def index_of(method):
    """The index and its order of a method name ("SII", "SII@3"), else None."""
    name, _, order = method.partition("@")
    if name not in INDICES:
        return None
    spec = INDICES[name]
    return spec, int(order) if order else spec.order or 2


def smallest(method, K):
    if index_of(method):
        return smallest_index_budget(K, *index_of(method))
    return min_samples(method, K)


def reference(ex, rows, method):
    if owen_kind(method):
        # brute force: the mean marginal contribution over the consistent orders
        n = ex.game_.n_groups
        Z = ((np.arange(1 << n)[:, None] >> np.arange(n)) & 1).astype(bool)
        values = ex.game_.values(rows, Z)[:, :, 0]
        keys = [tuple(np.flatnonzero(z)) for z in Z]
        H = nested(owen_kind(method), n)
        return np.array([hierarchical_value(dict(zip(keys, v)), n, H) for v in values])
    if index_of(method):
        spec, order = index_of(method)
        return np.asarray(ex.interactions(rows, index=spec.name, max_order=order).values)
    if method in ("kernel_shap", "permutation_shap"):
        return ex.set_params(method="shapley").transform(rows)
    return sampled.sampled_attributions(
        ex.game_, rows, [method], np.random.RandomState(0),
        n_samples=1 << ex.game_.n_groups)[method]


def estimate(ex, rows, method, budget, seed):
    """Values and standard errors of one seed, (n_rows, n_values)."""
    if owen_kind(method):
        value, se = owen_attributions(ex.game_, rows, ex.hierarchy_,
                                      np.random.RandomState(seed), n_samples=budget,
                                      errors=True)
        if se is None:  # exact at this budget
            se = np.zeros(value.shape)
        return value, se
    if index_of(method):
        value, se = sampled_interactions(ex.game_, rows, *index_of(method), budget, seed)
        # the empty term is v({}) or a fitted constant: the others only
        return value[:, 1:, 0], se[:, 1:, 0]
    errors = {}
    value = sampled.sampled_attributions(
        ex.game_, rows, [method], np.random.RandomState(seed), n_samples=budget,
        errors=errors,
    )[method]
    return value, errors[method]


def measure(job):
    """Coverage and the count of inexact values with a zero standard error."""
    game, n_background, method, seeds, budget, K = job
    warnings.filterwarnings("ignore")
    H = nested(owen_kind(method), K) if owen_kind(method) else None
    ex, rows = explainer(game, n_background, K, H)
    target = reference(ex, rows, method)
    if index_of(method):
        target = target[:, 1:]
    budget = budget or smallest("owen" if H else method, K)
    if H and budget >= owen_coalition_count(ex.hierarchy_):
        print(f"{method}: exact at {budget} coalitions for K = {K}", file=sys.stderr)
    # the scale of the game's values: rounding below 1e-12 of it
    scale = max(np.ptp(np.r_[ex.game_.predict(rows).ravel(),
                             ex.game_.background_prediction.ravel()]), 1.0)
    # the terms of each size apart (one class for the attributions)
    size = np.zeros(target.shape[1], dtype=np.int64)
    if index_of(method):
        size = np.array([len(t) for t in index_terms(K, index_of(method)[1])[1:]])
    held, zero = np.zeros(size.size), 0
    for seed in range(seeds):
        value, se = estimate(ex, rows, method, budget, seed)
        miss = np.abs(value - target)
        exact = miss <= 1e-9 * scale
        held += np.sum(exact | (miss <= 1.96 * se), axis=0)
        zero += np.sum(~exact & (se <= 1e-12 * scale))
    held /= seeds * value.shape[0]
    # the lowest coverage over the sizes of terms
    low = min(held[size == s].mean() for s in np.unique(size))
    return game, n_background, method, budget, low, int(zero)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=40)
    parser.add_argument("--n-jobs", type=int, default=2)
    parser.add_argument("--groups", type=int, default=K, help="number of groups K")
    parser.add_argument("--games", nargs="+", default=GAMES,
                        help="smooth, and, majority, or smooth<r>: the random "
                             "smooth game of seed r")
    parser.add_argument("--random-smooth", type=int, default=0,
                        help="the games smooth0 ... smooth<n-1> instead of --games")
    parser.add_argument("--backgrounds", nargs="+", type=int, default=BACKGROUNDS)
    parser.add_argument("--methods", nargs="+", default=METHODS + OWEN + INDEX_NAMES + ORDER3,
                        help="sampled methods, indices, and indices at order 3 "
                             "(SII@3)")
    parser.add_argument("--budget", type=int, default=None,
                        help="one budget for every method instead of the smallest")
    args = parser.parse_args()
    if args.random_smooth:
        args.games = [f"smooth{r}" for r in range(args.random_smooth)]
    start = time.perf_counter()
    jobs = [(g, b, m, args.seeds, args.budget, args.groups) for m in args.methods
            for g in args.games for b in args.backgrounds]
    with Pool(args.n_jobs) as pool:
        results = pool.map(measure, jobs, chunksize=1)
    got = {(g, b, m): (budget, c, z) for g, b, m, budget, c, z in results}
    cols = [(g, b) for g in args.games for b in args.backgrounds]
    print(f"K = {args.groups}, {args.seeds} seeds; coverage (inexact values with se 0)")
    print(f"{'method':<17} {'budget':>6} "
          + " ".join(f"{g + '/' + str(b):>11}" for g, b in cols))
    worst, zeros = 1.0, 0
    for m in args.methods:
        budget = got[cols[0] + (m,)][0]
        cells = []
        for g, b in cols:
            _, c, z = got[g, b, m]
            worst, zeros = min(worst, c), zeros + z
            cells.append(f"{c:.3f}({z})")
        print(f"{m:<17} {budget:>6} " + " ".join(f"{c:>11}" for c in cells))
    print(f"lowest coverage {worst:.3f}; inexact values with se 0: {zeros}; "
          f"{time.perf_counter() - start:.0f} s")


if __name__ == "__main__":
    main()
