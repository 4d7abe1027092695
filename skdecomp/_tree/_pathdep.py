"""The path-dependent game of tree ensembles, exactly, from the fitted trees.

The path-dependent game is the one TreeSHAP explains without background data
(``feature_perturbation="tree_path_dependent"``; Lundberg et al., "From
local explanations to global understanding with explainable AI for trees",
Nature Machine Intelligence 2020): for a row x and a coalition S of groups,
every tree follows x at the splits on the columns of S and, at every other
split, takes both children weighted by their share of the node's training
cover. ``v_x(N) = f(x)`` and ``v_x({})`` is the cover-weighted mean of the
leaves, the same for every row.

Each leaf adds a product game to v_x (see :mod:`._pathdep_kernels`), so that
its Moebius components, attributions and interaction indices of order up to
3 come from per-leaf work over the groups of the leaf's path, for any number
of groups. Results are bit-identical for any ``n_jobs``.
"""

# SPDX-License-Identifier: BSD-3-Clause

from math import comb

import numpy as np

from .._config import MAX_EXACT_GROUPS, kernel_block_cells
from .._numba import kernel_threads
from .._partition import group_terms
from ._dispatch import (
    _block_sums,
    _cache_block_rows,
    _check_weights,
    _n_chunks,
    _n_slots,
    _too_many_path_groups,
)
from ._index_kernels import MAX_LEAF_ORDER, term_key
from ._indices import MAX_DENSE_TERMS, _decode, _n_terms, tree_path_terms
from ._kernels import MAX_PATH_GROUPS
from ._pathdep_kernels import (
    _pd_attributions_chunk,
    _pd_components_chunk,
    _pd_index_chunk,
    _pd_values_chunk,
)
from ._treemodel import TreeUnsupportedError

__all__ = [
    "path_dependent_expected_value",
    "path_dependent_values",
    "path_dependent_attributions",
    "path_dependent_components",
    "path_dependent_interactions",
]


def _cover_shares(tree_model):
    """Share of its parent's training cover of every node (1 at the roots).

    A node whose parent has no cover gets 1/2.
    """
    cover = getattr(tree_model, "cover", None)
    node_int = tree_model.node_int
    if cover is None or cover.shape[0] != node_int.shape[0] or np.isnan(cover).any():
        raise TreeUnsupportedError(
            f"{tree_model.description} does not record the training cover of its "
            "nodes, which the path-dependent game weighs the children by; use "
            "the marginal game (a background) instead"
        )
    if (cover < 0).any():
        raise TreeUnsupportedError(
            f"{tree_model.description} records a negative training cover"
        )
    frac = np.ones(node_int.shape[0])
    inner = np.flatnonzero(node_int[:, 0] >= 0)
    parent = cover[inner]
    has = parent > 0
    safe = np.where(has, parent, 1.0)
    for side in (1, 2):
        child = node_int[inner, side]
        frac[child] = np.where(has, cover[child] / safe, 0.5)
    return frac


def _block_rows(tree_model, width, n_slots, n_columns=0):
    """Rows per kernel call.

    The accumulators stay below ``kernel_block_cells()`` and the per-row
    buffers walked at every node within the caches (``_cache_block_rows``).
    """
    per_row = (2 * n_slots + 1) * width + 2 * n_slots * (tree_model.max_depth + 2)
    cached = _cache_block_rows(n_columns, tree_model.max_depth, width, n_slots)
    return max(1, min(kernel_block_cells() // max(1, per_row), cached))


def _path_cap(tree_model):
    """Most path slots a leaf can use, as the kernels size their buffers."""
    return max(1, min(tree_model.max_depth, MAX_PATH_GROUPS))


def path_dependent_expected_value(tree_model):
    """The path-dependent game's value of the empty coalition.

    Parameters
    ----------
    tree_model : TreeModel

    Returns
    -------
    expected_value : ndarray of shape (n_outputs,)
        The model's constant offset plus, over the trees, the leaf values
        weighted by the share of the training cover that reaches them.

    Raises
    ------
    TreeUnsupportedError
        When the model does not record the training cover of its nodes.
    """
    frac = _cover_shares(tree_model)
    node_int, values = tree_model.node_int, tree_model.values
    # the share of the cover reaching every node, one tree level at a time
    node = np.asarray(tree_model.roots, dtype=np.int64)
    share = np.ones(node.shape[0])
    ev = np.zeros(values.shape[1])
    while node.size:
        leaf = node_int[node, 0] < 0
        ev += share[leaf] @ values[node[leaf]]
        inner = node[~leaf]
        children = np.concatenate([node_int[inner, 1], node_int[inner, 2]])
        share = np.tile(share[~leaf], 2) * frac[children]
        node = children
    return tree_model.offset + ev


def _bool_masks(masks, n_groups):
    """Coalitions as booleans of shape (n_masks, n_groups)."""
    masks = np.asarray(masks)
    if masks.ndim == 2 and masks.dtype == bool:
        if masks.shape[1] < n_groups:
            raise ValueError(
                f"The coalitions have {masks.shape[1]} columns for {n_groups} groups."
            )
        return np.ascontiguousarray(masks)
    if masks.ndim != 1:
        raise ValueError(
            "masks must be int64 bitmasks of shape (n_masks,) or booleans of shape "
            f"(n_masks, n_groups); got shape {masks.shape}."
        )
    if n_groups > MAX_PATH_GROUPS:
        raise ValueError(
            f"Bitmasks hold at most {MAX_PATH_GROUPS} groups; pass the coalitions "
            f"of the {n_groups} groups as booleans of shape (n_masks, n_groups)."
        )
    masks = masks.astype(np.int64, copy=False)
    bits = np.arange(max(n_groups, 1), dtype=np.int64)
    return np.ascontiguousarray(((masks[:, None] >> bits[None, :]) & 1).astype(bool))


def _run_blocks(tree_model, X, chunk, shape, args, n_jobs, extra_width=0):
    """Sum a path-dependent kernel over the trees, for blocks of the explained rows.

    ``chunk`` sums the trees of one chunk into an array of shape ``shape +
    (n_rows,)``; it takes the explained rows column by column, the column
    groups, the tree arrays, the cover shares, ``args``, the trees' depth,
    the chunk and the number of chunks, and returns False when a leaf met too
    many groups. ``extra_width`` is the number of float64 cells per row that
    the kernel keeps besides its output, which sizes the blocks with it.

    Returns
    -------
    sums : ndarray of shape ``shape + (n_rows,)``
    """
    frac, col_group, Xm = args[0], args[1], tree_model.prepare(X)
    n_chunks = _n_chunks(tree_model)
    arrays = tree_model.arrays()
    depth = tree_model.max_depth
    width = int(np.prod(shape))
    with kernel_threads(n_jobs) as threads:
        n_slots = _n_slots(n_chunks, threads)
        block = _block_rows(tree_model, width + extra_width, n_slots, Xm.shape[1])
        parts = [total for _, total in _block_sums(
            tree_model, Xm, block, n_chunks, threads,
            lambda cols, c: chunk(cols, col_group, *arrays, frac, *args[2:], depth, c,
                                  n_chunks))]
    out = np.concatenate(parts, axis=1) if parts else np.zeros((width, 0))
    return out.reshape(tuple(shape) + (Xm.shape[0],))


def path_dependent_values(tree_model, X, labels, masks, n_jobs=None):
    """Coalition values of the path-dependent game.

    Parameters
    ----------
    tree_model : TreeModel
    X : array-like, DataFrame or Table
        Explained rows, in the model's input format.
    labels : ndarray of shape (n_features,)
        Group of each input column.
    masks : ndarray
        Coalitions as int64 bitmasks over the groups (bit k for group k), or
        booleans of shape (n_masks, n_groups).
    n_jobs : int or None
        Threads (None or 1: serial). The result is bit-identical for any
        value.

    Returns
    -------
    values : ndarray of shape (n_rows, n_masks, n_outputs)
        ``v_x(S)``: the model output at the full coalition, the expected
        value (:func:`path_dependent_expected_value`) at the empty one.
    """
    n_groups = int(np.max(labels, initial=-1)) + 1
    masks = _bool_masks(masks, n_groups)
    args = (_cover_shares(tree_model), tree_model.column_groups(labels), masks)
    out = _run_blocks(tree_model, X, _pd_values_chunk,
                      (masks.shape[0], tree_model.n_outputs), args, n_jobs)
    out = np.ascontiguousarray(out.transpose(2, 0, 1))
    out += tree_model.offset[None, None, :]
    empty = ~masks.any(axis=1)
    if empty.any():
        out[:, empty, :] = path_dependent_expected_value(tree_model)[None, None, :]
    return out


def path_dependent_attributions(tree_model, X, labels, n_groups, weights, n_jobs=None):
    """Exact attributions of the path-dependent game, for any number of groups.

    An exact attribution is ``phi_k = sum over U containing k of w(|U|) m(U)``
    for size weights w and the game's Moebius components m (w(s) = 1/s for
    Shapley values, the grouped counterpart of path-dependent TreeSHAP).

    Parameters
    ----------
    tree_model : TreeModel
    X : array-like, DataFrame or Table
        Explained rows, in the model's input format.
    labels : ndarray of shape (n_features,)
        Group of each input column.
    n_groups : int
    weights : dict
        Name -> ndarray of shape (n_groups + 1,): the weight w(s) of a
        component of s groups, s = 0..n_groups (w(0) is not used).
    n_jobs : int or None
        Threads (None or 1: serial). The result is bit-identical for any
        value.

    Returns
    -------
    attributions : dict
        Name -> ndarray of shape (n_rows, n_outputs, n_groups).
    """
    frac = _cover_shares(tree_model)
    col_group = tree_model.column_groups(labels)
    weights = _check_weights(weights, n_groups)
    names = list(weights)
    cap = _path_cap(tree_model)
    # wtab[m, t] = w_m(t + 1): a leaf meets at most min(depth, n_groups) groups
    wtab = np.zeros((len(names), cap))
    top = min(cap, n_groups)
    for i, m in enumerate(names):
        wtab[i, :top] = weights[m][1:top + 1]
    phi = _run_blocks(tree_model, X, _pd_attributions_chunk,
                      (n_groups, len(names), tree_model.n_outputs),
                      (frac, col_group, wtab, int(n_groups)), n_jobs)
    phi = np.ascontiguousarray(phi.transpose(3, 1, 2, 0))
    return {m: phi[:, i] for i, m in enumerate(names)}


def path_dependent_components(tree_model, X, labels, n_groups, n_jobs=None):
    """All Moebius components of the path-dependent game.

    Parameters
    ----------
    tree_model : TreeModel
    X : array-like, DataFrame or Table
        Explained rows, in the model's input format.
    labels : ndarray of shape (n_features,)
        Group of each input column.
    n_groups : int
        At most ``MAX_EXACT_GROUPS``.
    n_jobs : int or None
        Threads (None or 1: serial). The result is bit-identical for any
        value.

    Returns
    -------
    components : ndarray of shape (n_rows, n_outputs, 2**n_groups)
        ``m(U)`` in mask order (bit k set when group k is in U); ``m({})``
        is the expected value.
    """
    if n_groups > MAX_EXACT_GROUPS:
        raise ValueError(
            f"All 2**K components of {n_groups} groups are more than exact "
            f"enumeration allows (at most {MAX_EXACT_GROUPS}); the attributions "
            "and the interaction indices of order up to 3 of the path-dependent "
            "game take any number of groups."
        )
    args = (_cover_shares(tree_model), tree_model.column_groups(labels), int(n_groups))
    F = _run_blocks(tree_model, X, _pd_components_chunk,
                    (1 << n_groups, tree_model.n_outputs), args, n_jobs)
    F = np.ascontiguousarray(F.transpose(2, 1, 0))
    F[:, :, 0] = path_dependent_expected_value(tree_model)[None, :]
    return F


def path_dependent_interactions(tree_model, X, labels, n_groups, weight, order,
                                dense=None, n_jobs=None):
    """Values of an interaction index of the path-dependent game, orders 1 to 3.

    Same contract as :func:`._indices.tree_interactions`, without background.

    Parameters
    ----------
    tree_model : TreeModel
    X : array-like, DataFrame or Table
        Explained rows, in the model's input format.
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
        while there are at most ``MAX_DENSE_TERMS`` terms.
    n_jobs : int or None
        Threads (None or 1: serial). The result is bit-identical for any value.

    Returns
    -------
    values : ndarray of shape (n_rows, n_terms, n_outputs)
        Index values; the empty term is ``sum_T c(0, |T|, k) m(T)`` with the
        offset in ``m({})`` (for efficient indices, whose empty term is the
        base value, replace it by :func:`path_dependent_expected_value`).
    terms : list of tuple of int
        The terms, the empty one first, then by size and lexicographically.
    """
    order = int(order)
    if not 1 <= order <= MAX_LEAF_ORDER:
        raise ValueError(
            f"The tree path reads interaction indices of order 1 to {MAX_LEAF_ORDER} "
            f"from the leaves; got max_order={order}."
        )
    frac = _cover_shares(tree_model)
    col_group = tree_model.column_groups(labels)
    roots, node_int = tree_model.roots, tree_model.node_int
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
    cap = _path_cap(tree_model)
    # wtab[s, t] = c(s, t, k) for s <= t (t up to the most groups of a leaf)
    wtab = np.zeros((order + 1, cap + 1))
    for s in range(order + 1):
        for t in range(s, min(cap, n_groups) + 1):
            wtab[s, t] = float(weight(s, t, order))
    n_local = sum(comb(cap, s) for s in range(order + 1))
    out = _run_blocks(tree_model, X, _pd_index_chunk,
                      (len(terms), tree_model.n_outputs),
                      (frac, col_group, wtab, keys, int(n_groups)), n_jobs,
                      extra_width=n_local)
    out = np.ascontiguousarray(out.transpose(2, 0, 1))
    # the constant offset is part of the component of the empty coalition
    out[:, 0, :] += float(weight(0, 0, order)) * tree_model.offset[None, :]
    return out, terms
