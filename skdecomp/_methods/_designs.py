"""The designs of coalitions of the sampled methods.

KernelSHAP's layered, paired design (``kernel_shap_design``), antithetic
permutations and their prefixes, Bernoulli masks, and every coalition.
"""

# SPDX-License-Identifier: BSD-3-Clause

from itertools import combinations
from math import comb

import numpy as np

from ._errors import Draws
from ._registry import n_coalitions

def _unique_rows(coalitions):
    """Distinct boolean rows (sorted) with their counts and the inverse index."""
    K = coalitions.shape[1]
    packed = np.packbits(coalitions, axis=1)
    uniq, inverse, counts = np.unique(
        packed, axis=0, return_inverse=True, return_counts=True
    )
    rows = np.unpackbits(uniq, axis=1, count=K).astype(bool)
    return rows, counts.astype(np.float64), inverse.reshape(-1)


def all_coalitions(n_groups, nontrivial=False):
    """Every coalition of K groups as a boolean array, in bitmask order."""
    masks = np.arange(1 << n_groups, dtype=np.int64)
    if nontrivial:
        masks = masks[1:-1]
    return ((masks[:, None] >> np.arange(n_groups)[None, :]) & 1).astype(bool)


# -- KernelSHAP design ----------------------------------------------------------
def shapley_kernel(n_groups, sizes):
    """Shapley kernel (K-1) / (C(K, s) s (K-s)) of coalitions of the given sizes."""
    K = n_groups
    binom = np.array([comb(K, int(s)) for s in range(K + 1)], dtype=np.float64)
    s = np.asarray(sizes, dtype=np.float64)
    return (K - 1) / (binom[np.asarray(sizes)] * s * (K - s))


def _layer(K, s):
    """Every subset of size s, as boolean rows."""
    members = np.array(list(combinations(range(K), s)), dtype=np.int64).reshape(-1, s)
    Z = np.zeros((members.shape[0], K), dtype=bool)
    Z[np.arange(members.shape[0])[:, None], members] = True
    return Z


def _distinct_pairs(rng, K, s, n, n_pairs):
    """n distinct pairs {S, complement} with |S| = s, uniformly without replacement.

    Returns the member of size s of each pair (for s = K/2, the one holding
    group 0).
    """
    middle = 2 * s == K
    if n_pairs <= 4 * n:  # a small layer: choose among all its pairs
        Z = _layer(K, s)
        if middle:
            Z = Z[Z[:, 0]]
        return Z[np.sort(rng.choice(Z.shape[0], n, replace=False))]
    drawn = np.zeros((0, K), dtype=bool)
    while True:
        keys = rng.random_sample((n - drawn.shape[0] // 2 + 8, K))
        Z = np.zeros(keys.shape, dtype=bool)
        np.put_along_axis(Z, np.argpartition(keys, s - 1, axis=1)[:, :s], True, axis=1)
        if middle:
            Z[~Z[:, 0]] = ~Z[~Z[:, 0]]
        drawn = np.vstack([drawn, Z])
        _, first = np.unique(np.packbits(drawn, axis=1), axis=0, return_index=True)
        if first.size >= n:
            return drawn[np.sort(first)[:n]]


def _equal_shares(total, caps):
    """Split ``total`` equally among layers, none above its cap (water-filling)."""
    out = np.zeros(caps.shape[0])
    free = np.ones(caps.shape[0], dtype=bool)
    left = float(total)
    while free.any():
        share = left / free.sum()
        full = free & (caps <= share)
        if not full.any():
            out[free] = share
            break
        out[full] = caps[full]
        left -= caps[full].sum()
        free &= ~full
    return out


def kernel_shap_design(n_groups, budget, rng):
    """Coalitions and regression weights of KernelSHAP.

    Coalition sizes s and K - s form one layer, and every coalition comes
    with its complement (paired sampling; Covert & Lee, AISTATS 2021), so
    games with at most pairwise interactions are estimated exactly. The
    budget is shared equally between the layers, which is sampling by the
    leverage scores of the Shapley regression (Musco & Witter, ICLR 2025):
    layers taken whole while their share covers them (the singletons
    first, which makes the design full rank), then, in each other layer,
    a number of distinct pairs drawn uniformly without replacement (counts
    rounded systematically, so they sum to the budget). A drawn coalition
    weighs the layer's Shapley-kernel mass over its expected count. Equal
    shares gave a 10-30% lower error than shares proportional to the
    kernel mass (shap's and shapiq's, which spend most of the budget on
    the smallest and largest sizes) on most benchmark cases.

    Returns
    -------
    coalitions : ndarray of shape (n_coalitions, K), bool
    weights : ndarray of shape (n_coalitions,)
    """
    return _kernel_design(n_groups, budget, rng)[:2]


def _kernel_design(n_groups, budget, rng, whole=1):
    """``kernel_shap_design`` and its draws: the rows of each drawn pair, their strata.

    The layers of sizes 1 to ``whole`` (and their complements) are taken
    whole whatever the equal shares give, as far as the budget allows.
    """
    K = n_groups
    if budget >= n_coalitions(K):
        Z = all_coalitions(K, nontrivial=True)
        no_pairs = np.zeros((0, 2), dtype=np.int64)
        return Z, shapley_kernel(K, Z.sum(axis=1)), no_pairs, None
    sizes = np.arange(1, K // 2 + 1)  # s and K - s, paired unless s == K - s
    paired = sizes != K - sizes
    mass = (K - 1) / (sizes * (K - sizes)) * np.where(paired, 2.0, 1.0)
    mass /= mass.sum()
    n_pairs = np.array(
        [float(comb(K, int(s))) / (1.0 if p else 2.0) for s, p in zip(sizes, paired)]
    )
    coal, weights, pairs, strata = [], [], [], []
    left = budget
    n_full = 0
    for i, s in enumerate(sizes):
        size = 2 * n_pairs[i]
        if size > left or (i >= whole and left / (sizes.size - i) < size - 1e-8):
            break
        Z = _layer(K, int(s))
        Z = np.vstack([Z, ~Z]) if paired[i] else Z
        coal.append(Z)
        weights.append(np.full(Z.shape[0], mass[i] / Z.shape[0]))
        left -= Z.shape[0]
        n_full += 1
    start = sum(z.shape[0] for z in coal)
    if left >= 2 and n_full < sizes.size:
        rest = np.arange(n_full, sizes.size)
        expected = _equal_shares(left // 2, n_pairs[rest])
        edges = np.floor(np.r_[0.0, np.cumsum(expected)] + rng.random_sample())
        counts = np.minimum(np.diff(edges), n_pairs[rest]).astype(np.int64)
        for i, e, n in zip(rest, expected, counts):
            if n == 0:
                continue
            Z = _distinct_pairs(rng, K, int(sizes[i]), int(n), n_pairs[i])
            coal.append(np.vstack([Z, ~Z]))
            weights.append(np.full(2 * n, mass[i] / (2.0 * e)))
            pairs.append(start + np.c_[np.arange(n), n + np.arange(n)])
            strata.append(np.full(n, i))
            start += 2 * n
    draws = (
        Draws(np.concatenate(strata), n_pairs) if strata else None
    )
    pairs = np.vstack(pairs) if pairs else np.zeros((0, 2), dtype=np.int64)
    return np.vstack(coal), np.concatenate(weights), pairs, draws


def _permutation_design(n_groups, budget, rng):
    """Antithetic permutations: orders, their distinct prefixes, the prefix index."""
    K = n_groups
    n_pairs = budget // (2 * (K - 1))
    forward = np.argsort(rng.random_sample((n_pairs, K)), axis=1)
    orders = np.empty((2 * n_pairs, K), dtype=np.int64)
    orders[0::2] = forward
    orders[1::2] = forward[:, ::-1]  # antithetic: the reverse permutation
    return orders, *prefix_design(orders)


def prefix_design(orders):
    """The distinct prefixes of orders of the groups and every order's prefix index.

    Returns the coalitions (the prefixes, then the empty and the full one)
    and ``index`` of shape (n_orders, K + 1): the row of the coalition of
    the first j groups of every order.
    """
    K = orders.shape[1]
    rank = np.argsort(orders, axis=1)  # position of every group
    # prefix j of order p holds the groups at positions < j
    prefixes = rank[:, None, :] < np.arange(1, K)[None, :, None]
    coal, _, inverse = _unique_rows(prefixes.reshape(-1, K))
    n_coal = coal.shape[0]
    # values are stored as [coalitions..., empty, full]
    index = np.empty((orders.shape[0], K + 1), dtype=np.int64)
    index[:, 0] = n_coal
    index[:, 1:K] = inverse.reshape(orders.shape[0], K - 1)
    index[:, K] = n_coal + 1
    ends = np.array([[False] * K, [True] * K])
    return np.vstack([coal, ends]), index


def _bernoulli_design(n_groups, budget, p, rng):
    """Coalitions with their weights and counts: i.i.d. Bernoulli(p) draws.

    Or all coalitions with their probabilities, and no counts.
    """
    K = n_groups
    if budget >= n_coalitions(K):
        Z = all_coalitions(K)
        s = Z.sum(axis=1)
        return Z, p**s * (1.0 - p) ** (K - s), None
    draws = rng.random_sample((budget, K)) < p
    Z, counts, _ = _unique_rows(draws)
    return Z, counts / budget, counts
