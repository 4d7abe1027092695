"""Full anchored matrices of single groups, read from the leaves of tree ensembles.

For a tree, the hybrid row ``(x_{G_k}, z_{-G_k})`` reaches leaf L iff x meets
the conditions of L's path on the columns of group k and z meets the others.
With ``A_k[n, L]`` and ``B_k[m, L]`` these two indicators and ``v_L`` the leaf
value, the anchored matrix of group k is

    G_k[n, m] = sum_L v_L (A_k[n, L] - A_k[m, L]) B_k[m, L],

a product of two N x L matrices. Leaves whose path has no condition on
group k add nothing (A_k = 1), so every leaf counts only for the groups its
path tests. This is the tree back end of
:meth:`~skdecomp._game.AnchoredStatistics.group_matrices`; it reads the
arrays of :class:`~._treemodel.TreeModel` and nothing else.
"""

# SPDX-License-Identifier: BSD-3-Clause

import numpy as np

from ._vectorized import _goes_left as _goes_left_at

__all__ = ["tree_group_matrices"]


def _goes_left(tree, Xm, node):
    """Boolean vector: the rows of Xm sent left at a split (categorical too)."""
    feat, _, _, nan_left, cat_row = tree.node_int[node, :5]
    col = Xm[:, feat]
    if cat_row >= 0:
        return _goes_left_at(node, col, tree.node_int, tree.threshold, tree.cat_bits)
    with np.errstate(invalid="ignore"):
        left = col <= tree.threshold[node]
    missing = np.isnan(col)
    if missing.any():
        left = np.where(missing, bool(nan_left), left)
    return left


def tree_group_matrices(tree, Xm, col_group, n_groups):
    """Anchored matrices of every group from the leaves.

    Parameters
    ----------
    tree : TreeModel
        The flattened ensemble.
    Xm : ndarray of shape (N, n_model_columns)
        The sample rows as the trees read them (``tree.prepare``).
    col_group : ndarray of int of shape (n_model_columns,)
        Group of every column the trees read; ids outside ``0..n_groups-1``
        are columns of no group (always taken from the anchor row).
    n_groups : int

    Returns
    -------
    G : ndarray of shape (n_groups, n_outputs, N, N)
        ``G[k, o, n, m] = f(x^n_{G_k}, x^m_{-G_k})[o] - f(x^m)[o]``.
    """
    N = Xm.shape[0]
    n_out = tree.values.shape[1]
    node_int = tree.node_int
    # per group: the leaves whose path tests it, as columns of A, B and values
    cols_a = [[] for _ in range(n_groups)]
    cols_b = [[] for _ in range(n_groups)]
    vals = [[] for _ in range(n_groups)]
    ones = np.ones(N, dtype=bool)
    for root in tree.roots:
        # stack of (node, {group: rows meeting its conditions}, rows meeting all others)
        stack = [(int(root), {}, ones)]
        while stack:
            node, by_group, rest = stack.pop()
            feat = node_int[node, 0]
            if feat < 0:
                v = tree.values[node]
                if not np.any(v):
                    continue
                for g, a in by_group.items():
                    b = rest
                    for h, other in by_group.items():
                        if h != g:
                            b = b & other
                    cols_a[g].append(a)
                    cols_b[g].append(b)
                    vals[g].append(v)
                continue
            left = _goes_left(tree, Xm, node)
            g = int(col_group[feat])
            for child, cond in ((node_int[node, 1], left), (node_int[node, 2], ~left)):
                if 0 <= g < n_groups:
                    new = dict(by_group)
                    new[g] = new[g] & cond if g in new else cond
                    stack.append((int(child), new, rest))
                else:
                    stack.append((int(child), by_group, rest & cond))
    G = np.zeros((n_groups, n_out, N, N))
    for g in range(n_groups):
        if not vals[g]:
            continue
        A = np.stack(cols_a[g], axis=1).astype(np.float64)  # (N, L)
        B = np.stack(cols_b[g], axis=1).astype(np.float64)
        V = np.asarray(vals[g], dtype=np.float64)  # (L, n_out)
        for o in range(n_out):
            BV = B * V[:, o][None, :]
            # sum_L v_L A[n, L] B[m, L] - sum_L v_L A[m, L] B[m, L]
            G[g, o] = A @ BV.T - (A * BV).sum(axis=1)[None, :]
    idx = np.arange(N)
    G[:, :, idx, idx] = 0.0
    return G
