"""Brute-force oracles, written apart from the package kernels.

Everything here is computed from first principles with explicit loops over
subsets, with no use of skdecomp's kernels or value function.
"""

from itertools import combinations
from math import factorial

import numpy as np


def powerset(items):
    items = list(items)
    for r in range(len(items) + 1):
        yield from combinations(items, r)


def hybrid(x, z, columns):
    """Row with the given columns from x and the rest from z."""
    h = np.array(z, dtype=float, copy=True)
    cols = list(columns)
    h[cols] = x[cols]
    return h


def coalition_value(f, x, background, groups, subset):
    """v_x(S) = mean over z of f(x_{G_S}, z_{-G_S}), one row at a time."""
    cols = [c for k in subset for c in groups[k]]
    return float(np.mean([f(hybrid(x, z, cols)[None, :])[0] for z in background]))


def game(f, x, background, groups):
    """Dict subset (sorted tuple) -> coalition value."""
    K = len(groups)
    return {S: coalition_value(f, x, background, groups, S) for S in powerset(range(K))}


def moebius(v, K):
    """F_U = sum_{S subset of U} (-1)^{|U|-|S|} v(S), by inclusion-exclusion."""
    return {
        U: sum((-1) ** (len(U) - len(S)) * v[S] for S in powerset(U))
        for U in powerset(range(K))
    }


def shapley(v, K):
    phi = np.zeros(K)
    for k in range(K):
        others = [j for j in range(K) if j != k]
        for S in powerset(others):
            w = factorial(len(S)) * factorial(K - len(S) - 1) / factorial(K)
            phi[k] += w * (v[tuple(sorted(S + (k,)))] - v[S])
    return phi


def shapley_by_permutations(v, K):
    """Shapley value as the average marginal contribution over all orders."""
    from itertools import permutations

    phi = np.zeros(K)
    perms = list(permutations(range(K)))
    for order in perms:
        S = ()
        for k in order:
            T = tuple(sorted(S + (k,)))
            phi[k] += v[T] - v[S]
            S = T
    return phi / len(perms)


def banzhaf(v, K):
    phi = np.zeros(K)
    for k in range(K):
        others = [j for j in range(K) if j != k]
        for S in powerset(others):
            phi[k] += v[tuple(sorted(S + (k,)))] - v[S]
    return phi / 2 ** (K - 1)


def occlusion(v, K):
    full = tuple(range(K))
    return np.array([v[full] - v[tuple(j for j in full if j != k)] for k in range(K)])


def arch(v, K):
    return np.array([v[(k,)] - v[()] for k in range(K)])


METHODS = {
    "shapley": shapley,
    "banzhaf": banzhaf,
    "occlusion": occlusion,
    "arch": arch,
    "pdp": arch,
    "pfi": occlusion,
}


# -- the path-dependent (cover-weighted) game of trees -------------------------
def path_dependent_tree_value(tree, x, columns):
    """Value of one tree at row x when only ``columns`` are known, by recursion.

    ``tree`` is a dict of sklearn-style arrays: children_left, children_right
    (-1 at leaves), feature, threshold (``x <= threshold`` goes left), value
    (per node, shape (n_nodes, n_outputs)) and cover. At a split on a known
    column the row's way is taken; at any other split both children,
    weighted by cover(child) / cover(node).
    """
    left, right = tree["children_left"], tree["children_right"]
    feature, threshold = tree["feature"], tree["threshold"]
    value, cover = np.asarray(tree["value"], dtype=float), tree["cover"]
    known = set(int(c) for c in columns)

    def walk(node):
        if left[node] < 0:
            return value[node]
        f = int(feature[node])
        if f in known:
            return walk(left[node] if x[f] <= threshold[node] else right[node])
        total = float(cover[node])
        return (cover[left[node]] / total * walk(left[node])
                + cover[right[node]] / total * walk(right[node]))

    return np.asarray(walk(0), dtype=float)


def path_dependent_game(trees, offset, x, groups):
    """Dict subset (sorted tuple) -> v_x(S) of the path-dependent game of trees.

    ``trees`` is a list of dicts as for :func:`path_dependent_tree_value`;
    ``offset`` is added to every value. Values are arrays of the outputs.
    """
    K = len(groups)
    out = {}
    for S in powerset(range(K)):
        cols = [c for k in S for c in groups[k]]
        total = np.array(offset, dtype=float, copy=True)
        for tree in trees:
            total = total + path_dependent_tree_value(tree, x, cols)
        out[S] = total
    return out


def sklearn_tree_arrays(estimator, scale=1.0, output=None):
    """The arrays of a fitted scikit-learn tree for :func:`path_dependent_tree_value`.

    Leaf values are ``scale * tree_.value[:, :, 0]`` (regression trees), or
    the single column ``output`` of it.
    """
    t = estimator.tree_
    value = scale * np.asarray(t.value[:, :, 0], dtype=float)
    if output is not None:
        value = value[:, [output]]
    return {
        "children_left": t.children_left, "children_right": t.children_right,
        "feature": t.feature, "threshold": t.threshold, "value": value,
        "cover": t.weighted_n_node_samples,
    }


def consistent_orders(node):
    """Every order of the players in which the players of every node arrive together.

    ``node`` is a player (an int) or a list of nodes (nested lists).
    """
    from itertools import permutations, product

    if isinstance(node, int):
        return [(node,)]
    out = []
    for perm in permutations(node):
        for parts in product(*(consistent_orders(c) for c in perm)):
            out.append(tuple(p for part in parts for p in part))
    return out


def hierarchical_value(v, K, hierarchy):
    """Owen / Winter value: the mean marginal contribution over the consistent orders.

    ``hierarchy`` is nested lists of the players 0..K-1; ``v`` maps sorted
    tuples to coalition values.
    """
    orders = consistent_orders(hierarchy)
    phi = np.zeros(K)
    for order in orders:
        S = ()
        for k in order:
            T = tuple(sorted(S + (k,)))
            phi[k] += v[T] - v[S]
            S = T
    return phi / len(orders)
