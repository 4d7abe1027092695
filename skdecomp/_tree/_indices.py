"""Interaction indices of tree ensembles from per-leaf work, for any number of groups.

The Moebius components of an interventional tree game vanish outside the
sets of groups that share a root-to-leaf path, so an index of order
k <= 3 (a weighted sum of components, see
:mod:`skdecomp._methods._indices`) is read from the leaves without the 2**K
components (:mod:`._index_kernels`).
"""

# SPDX-License-Identifier: BSD-3-Clause

from fractions import Fraction
from functools import lru_cache
from math import comb

import numpy as np

from .._config import kernel_block_cells
from .._partition import group_terms
from .._numba import kernel_threads
from ._dispatch import _block_sums, _n_chunks, _n_slots, _too_many_path_groups
from ._index_kernels import (
    MAX_LEAF_ORDER,
    _tree_index_chunk,
    term_key,
)
from ._kernels import MAX_PATH_GROUPS
from ._vectorized import _tree_chunks

__all__ = ["MAX_LEAF_ORDER", "MAX_DENSE_TERMS", "tree_path_terms", "tree_interactions",
           "leaf_index_coefficients"]

#: Most terms reported densely (every term of at most k groups); past it the
#: tree path reports the terms whose groups share a root-to-leaf path only.
MAX_DENSE_TERMS = 1 << 14

# largest number of groups whose term keys fit an int64
_MAX_KEY_GROUPS = 1 << 20


def tree_path_terms(roots, node_int, col_group, n_groups, order):
    """Keys of the terms of 2..order groups that share a root-to-leaf path.

    Returns the sorted unique keys and the most distinct groups on one path.
    The trees are walked one level at a time for all their nodes, keeping
    the groups of every node's path; the distinct groups of each leaf's
    path give its terms. Trees are taken in chunks, each chunk's keys made
    unique before the next.
    """
    n_groups = int(n_groups)
    col_group = np.asarray(col_group, dtype=np.int64)
    found = np.zeros(0, dtype=np.int64)
    most = 0
    # trees whose nodes, times a path of up to 64 splits, fit a block
    for t0, t1 in _tree_chunks(roots, node_int.shape[0], 64):
        node = np.asarray(roots[t0:t1], dtype=np.int64)
        groups = np.zeros((node.shape[0], 0), dtype=np.int64)
        keys = [found]
        while node.size:
            feature = node_int[node, 0]
            leaf = feature < 0
            if leaf.any() and groups.shape[1]:
                paths = np.sort(groups[leaf], axis=1)
                # the distinct groups of every path first, then n_groups
                repeat = np.zeros(paths.shape, dtype=bool)
                repeat[:, 1:] = paths[:, 1:] == paths[:, :-1]
                paths[repeat] = n_groups
                paths = np.sort(paths, axis=1)
                n_distinct = (paths < n_groups).sum(axis=1)
                most = max(most, int(n_distinct.max()))
                keys.extend(_path_keys(paths, n_distinct, n_groups, order))
            inner = ~leaf
            groups = np.repeat(np.column_stack([groups[inner], col_group[feature[inner]]]),
                               2, axis=0)
            node = np.column_stack([node_int[node[inner], 1],
                                    node_int[node[inner], 2]]).ravel()
        found = np.unique(np.concatenate(keys))
    return found, most


def _path_keys(paths, n_distinct, n_groups, order):
    """Term keys of 2..order of the sorted distinct groups of each path."""
    m = int(n_distinct.max())
    out = []
    for j in range(1, m if order >= 2 else 0):
        rows = n_distinct > j
        for i in range(j):
            out.append(_key(2, 0, paths[rows, i], paths[rows, j], n_groups))
            for h in range(i if order >= 3 else 0):
                out.append(_key(3, paths[rows, h], paths[rows, i], paths[rows, j],
                                n_groups))
    return out


def _key(size, g0, g1, g2, n_groups):
    """:func:`term_key` of many terms of one size (groups in increasing order)."""
    if size == 2:
        g0, g1, g2 = g1, g2, 0
    m = np.int64(n_groups)
    return ((np.int64(size) * m + g0) * m + g1) * m + g2


@lru_cache(maxsize=32)
def _coefficients(weight, order, max_size):
    coef = np.zeros((order + 1, max_size + 1, max_size + 1, order + 1))
    c = {}
    for s in range(order + 1):
        for t in range(s, max_size + 1):
            c[s, t] = Fraction(weight(s, t, order))
    for s in range(order + 1):
        for p in range(max_size + 1):
            for q in range(max_size + 1 - p):
                for r in range(min(s, q) + 1):
                    if s - r > p:
                        continue
                    total = sum(
                        (comb(q - r, j) * (-1) ** (r + j) * c[s, p + r + j]
                         for j in range(q - r + 1)),
                        Fraction(0),
                    )
                    coef[s, p, q, r] = float(total)
    return coef


def leaf_index_coefficients(weight, order, max_size):
    """Table ``coef[s, p, q, r]`` of one index for leaves of up to ``max_size`` groups.

    ``coef[s, p, q, r] = sum_j C(q - r, j) (-1)**(r + j) c(s, p + r + j, k)``
    in exact rational arithmetic, for index weights ``c(s, t, k)`` (a
    function returning a Fraction), ``s <= k = order`` and ``p + q <= max_size``.
    """
    return _coefficients(weight, int(order), int(max_size))


def _n_terms(n_groups, order):
    return sum(comb(n_groups, s) for s in range(order + 1))


def _decode(keys, n_groups):
    m = n_groups
    terms = []
    for key in keys.tolist():
        g2 = key % m
        key //= m
        g1 = key % m
        key //= m
        g0 = key % m
        size = key // m
        terms.append((g0, g1, g2)[:size])
    return terms


def tree_interactions(tree_model, X, Z, labels, n_groups, weight, order,
                      dense=None, n_jobs=None):
    """Values of an interaction index from the trees, for any number of groups.

    Parameters
    ----------
    tree_model : TreeModel
    X, Z : array-like or DataFrame
        Explained rows and background rows, in the model's input format.
    labels : ndarray of shape (n_features,)
        Group of each input column.
    n_groups : int
    weight : callable
        ``weight(s, t, k)``: the exact weight (a Fraction) of ``m(T)`` in the
        value of S, for ``|S| = s``, ``|T| = t`` and order k.
    order : int
        Largest number of groups in a term, at most :data:`MAX_LEAF_ORDER`.
    dense : bool or None, default=None
        Report every term of at most ``order`` groups (True) or the empty
        term, every group and the terms of 2 or more groups that share a
        root-to-leaf path (False; the others are exactly 0). None: dense
        while there are at most :data:`MAX_DENSE_TERMS` terms.
    n_jobs : int or None
        Threads (None or 1: serial). The result is bit-identical for any value.

    Returns
    -------
    values : ndarray of shape (n_rows, n_terms, n_outputs)
        Index values; the empty term includes the model's constant offset.
    terms : list of tuple of int
        The terms, the empty one first, then by size and lexicographically.
    """
    order = int(order)
    if not 1 <= order <= MAX_LEAF_ORDER:
        raise ValueError(
            f"The tree path reads interaction indices of order 1 to {MAX_LEAF_ORDER} "
            f"from the leaves; got max_order={order}."
        )
    if n_groups >= _MAX_KEY_GROUPS:
        raise ValueError(f"At most {_MAX_KEY_GROUPS - 1} groups; got {n_groups}.")
    col_group = tree_model.column_groups(labels)
    roots, node_int, threshold, values, cat_bits = tree_model.arrays()
    support, most = tree_path_terms(roots, node_int, col_group, int(n_groups), order)
    if most > MAX_PATH_GROUPS:
        raise _too_many_path_groups(tree_model)
    if dense is None:
        dense = _n_terms(n_groups, order) <= MAX_DENSE_TERMS
    if dense:
        terms = group_terms(n_groups, order)
        keys = np.array([term_key(t, n_groups) for t in terms], dtype=np.int64)
    else:
        low = np.array([term_key(t, n_groups) for t in group_terms(n_groups, 1)],
                       dtype=np.int64)
        keys = np.concatenate([low, support])
        terms = _decode(keys, n_groups)
    coef = leaf_index_coefficients(weight, order, max(1, most))
    Xm, Zm = tree_model.prepare(X), tree_model.prepare(Z)
    n_bg = Zm.shape[0]
    n_out = tree_model.n_outputs
    arrays = (roots, node_int, threshold, values, cat_bits)
    with kernel_threads(n_jobs) as threads:
        n_chunks = _n_chunks(tree_model)
        n_slots = _n_slots(n_chunks, threads)
        # per row: the accumulators of the terms, and per chunk the terms and
        # coefficients of its pattern (all local subsets of a path)
        cap = min(tree_model.max_depth, MAX_PATH_GROUPS)
        n_local = sum(comb(cap, s) for s in range(order + 1))
        per_row = ((n_slots + 1) * len(terms) * n_out + 2 * n_slots * n_local)
        block = max(1, kernel_block_cells() // per_row)
        parts = [
            (total / n_bg).reshape(rows.shape[0], len(terms), n_out)
            for rows, total in _block_sums(
                tree_model, Xm, block, n_chunks, threads,
                lambda cols, c: _tree_index_chunk(
                    cols, n_bg, col_group, *arrays, coef, keys, int(n_groups),
                    tree_model.max_depth, c, n_chunks),
                background=Zm)
        ]
    out = (np.concatenate(parts) if parts
           else np.zeros((0, len(terms), n_out)))
    # the constant offset is the component of the empty coalition
    out[:, 0, :] += float(weight(0, 0, order)) * tree_model.offset[None, :]
    return out, terms
