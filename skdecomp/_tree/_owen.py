"""Exact hierarchical (Owen and Winter) values of tree ensembles, for any number of groups.

The hierarchical value of a group over a hierarchy of the groups is the mean
of its marginal contributions over the orders in which the groups of every
node arrive one after the other (Owen 1977 for two levels, Winter 1989 for
deeper hierarchies). On trees it is read leaf by leaf, as the tree path's
Shapley values are: every leaf adds a game that needs x (or z) on a few
groups of its path, whose hierarchical value is a product of factors along
the group's ancestors (see :mod:`._owen_kernels`). The cost is that of the
tree path's Shapley values, whatever the number of groups; results are
bit-identical for any ``n_jobs``.
"""

# SPDX-License-Identifier: BSD-3-Clause

from math import comb

import numpy as np

from .._numba import kernel_threads
from ._dispatch import _block_sums, _n_chunks, _n_slots
from ._owen_kernels import _owen_marginal_chunk, _owen_pd_chunk
from ._pathdep import _block_rows, _cover_shares

__all__ = [
    "tree_owen_values",
    "path_dependent_owen_values",
    "explainer_owen_values",
    "order_factors",
]


def order_factors(n):
    """``g[p, q] = p! q! / (p + q + 1)!`` for ``p + q < n``, shape (n, n).

    The probability that, in a uniform random order of ``p + q + 1``
    children, p given ones come before a given child and q given ones after.
    """
    g = np.zeros((n, n))
    for p in range(n):
        for q in range(n - p):
            g[p, q] = 1.0 / ((p + q + 1) * comb(p + q, p))
    return g


def _hierarchy_arrays(hierarchy, n_groups):
    """Parents of the hierarchy's nodes (players first), its depth and factor table."""
    if hierarchy.n_players != n_groups:
        raise ValueError(f"The hierarchy has {hierarchy.n_players} players for "
                         f"{n_groups} groups.")
    parent = np.ascontiguousarray(hierarchy.parent, dtype=np.int64)
    n_children = max((len(ch) for ch in hierarchy.children), default=1)
    # a leaf's slots are at most MAX_PATH_GROUPS (62), so are the children
    # of a node that hold them
    gtab = order_factors(min(n_children, 62) + 1)
    return parent, int(max(hierarchy.depth, 1)), gtab


def tree_owen_values(tree_model, X, Z, labels, n_groups, hierarchy, n_jobs=None):
    """Hierarchical values of the marginal game of the trees.

    Parameters
    ----------
    tree_model : TreeModel
    X, Z : array-like or DataFrame
        Explained rows and background rows, in the model's input format.
    labels : ndarray of shape (n_features,)
        Group of each input column.
    n_groups : int
    hierarchy : Hierarchy
        A rooted tree whose leaves are the groups ``0 .. n_groups - 1``.
    n_jobs : int or None
        Threads (None or 1: serial). The result is bit-identical for any
        value.

    Returns
    -------
    values : ndarray of shape (n_rows, n_outputs, n_groups)
        ``phi_k(x)`` averaged over the background rows.
    """
    # the background rows are walked with every block, before its rows
    Zm = tree_model.prepare(Z)
    n_bg = Zm.shape[0]
    phi = _in_blocks(tree_model, X, labels, n_groups, hierarchy, n_jobs,
                     lambda cols, col_group, arrays, *rest: _owen_marginal_chunk(
                         cols, n_bg, col_group, *arrays, *rest),
                     background=Zm)
    phi /= n_bg
    return phi


def path_dependent_owen_values(tree_model, X, labels, n_groups, hierarchy, n_jobs=None):
    """Hierarchical values of the path-dependent game of the trees.

    Parameters
    ----------
    tree_model : TreeModel
    X : array-like or DataFrame
        Explained rows, in the model's input format.
    labels : ndarray of shape (n_features,)
        Group of each input column.
    n_groups : int
    hierarchy : Hierarchy
        A rooted tree whose leaves are the groups ``0 .. n_groups - 1``.
    n_jobs : int or None
        Threads (None or 1: serial). The result is bit-identical for any
        value.

    Returns
    -------
    values : ndarray of shape (n_rows, n_outputs, n_groups)

    Raises
    ------
    TreeUnsupportedError
        When the model does not record the training cover of its nodes.
    """
    frac = _cover_shares(tree_model)
    return _in_blocks(tree_model, X, labels, n_groups, hierarchy, n_jobs,
                      lambda cols, col_group, arrays, *rest: _owen_pd_chunk(
                          cols, col_group, *arrays, frac, *rest))


def _in_blocks(tree_model, X, labels, n_groups, hierarchy, n_jobs, chunk,
               background=None):
    """Run a hierarchical-value kernel on blocks of the explained rows.

    ``chunk(cols, col_group, arrays, *rest)`` runs the kernel, ``rest``
    being the hierarchy's arguments, the trees' depth, the chunk and the
    number of chunks (``cols``: a block's rows column by column, after the
    rows of ``background`` when given). Returns the sums, of shape (n_rows,
    n_outputs, n_groups).
    """
    col_group = tree_model.column_groups(labels)
    parent, depth, gtab = _hierarchy_arrays(hierarchy, n_groups)
    Xm = tree_model.prepare(X)
    n_out = tree_model.n_outputs
    n_chunks = _n_chunks(tree_model)
    arrays = tree_model.arrays()
    with kernel_threads(n_jobs) as threads:
        block = _block_rows(tree_model, n_groups * n_out, _n_slots(n_chunks, threads),
                            Xm.shape[1])
        parts = [
            total.reshape(n_groups, n_out, -1).transpose(2, 1, 0)
            for _, total in _block_sums(
                tree_model, Xm, block, n_chunks, threads,
                lambda cols, c: chunk(cols, col_group, arrays, parent, depth, gtab,
                                      int(n_groups), tree_model.max_depth, c, n_chunks),
                background=background)
        ]
    if not parts:
        return np.zeros((0, n_out, n_groups))
    return np.ascontiguousarray(np.concatenate(parts))


def explainer_owen_values(tree_model, X, background, labels, n_groups, hierarchy,
                          n_jobs=None):
    """Hierarchical values in the Explainer's layout.

    Parameters
    ----------
    background : array-like, DataFrame or None
        Background rows of the marginal game; None for the path-dependent
        game.

    Returns
    -------
    values : ndarray of shape (n_rows, n_groups) or (n_rows, n_groups, n_outputs)
    """
    if background is None:
        phi = path_dependent_owen_values(tree_model, X, labels, n_groups, hierarchy,
                                         n_jobs)
    else:
        phi = tree_owen_values(tree_model, X, background, labels, n_groups, hierarchy,
                               n_jobs)
    phi = np.moveaxis(phi, 1, -1)
    return phi[..., 0] if phi.shape[-1] == 1 else phi
