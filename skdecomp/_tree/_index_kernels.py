"""Numba kernels of interaction indices read from the leaves of tree ensembles.

For an explained row x and a background row z, a leaf whose path splits on
the groups P (where z leaves the path and x stays) and B (where x leaves and
z stays), and on no group where both leave, adds its value times
``(-1)**|T|`` to the Moebius component ``m(P | T)`` for every ``T <= B``, and
nothing to any other component (see :mod:`._kernels`). An index that weighs
``m(T)`` by ``c(|S|, |T|, k)`` in the value of a term S therefore receives,
for every ``S <= P | B`` of at most k groups::

    value * coef[|S|, |P|, |B|, |S & B|]
    coef[s, p, q, r] = sum_j C(q - r, j) (-1)**(r + j) c(s, p + r + j, k)

so that each term of order k <= 3 comes from per-leaf work, whatever the
number of groups. Terms are integer keys (:func:`term_key`) looked up in a
sorted array of the terms to report.
"""

# SPDX-License-Identifier: BSD-3-Clause

import numpy as np
from numba import njit

from .._numba import zeros_1d, zeros_2d
from ._kernels import (
    MAX_PATH_GROUPS,
    _bit_count,
    _lower_bound,
    _tree_background_patterns,
    _tree_next_leaf_local,
    _tree_slot,
    _tree_table,
    _tree_walk_buffers,
    _tree_walk_start,
)

#: Largest order of the leaf-wise index kernels.
MAX_LEAF_ORDER = 3


@njit(cache=True, inline="always")
def _key3(size, g0, g1, g2, n_groups):
    # key of the term of `size` sorted groups g0 < g1 < g2 (unused ones 0):
    # keys sort by size, then lexicographically
    m = np.int64(n_groups)
    return ((np.int64(size) * m + g0) * m + g1) * m + g2


def term_key(term, n_groups):
    """Integer key of a term (a sorted tuple of at most 3 group positions)."""
    g = list(term) + [0] * (3 - len(term))
    return ((len(term) * n_groups + g[0]) * n_groups + g[1]) * n_groups + g[2]


@njit(cache=True, inline="always")
def _sort3(a, b, c):
    if a > b:
        a, b = b, a
    if b > c:
        b, c = c, b
    if a > b:
        a, b = b, a
    return a, b, c


@njit(cache=True, inline="always")
def _n_local_subsets(n_slots, order):
    # subsets of at most `order` of n_slots path slots, ranked by size then colex
    n = 1
    if order >= 1:
        n += n_slots
    if order >= 2:
        n += n_slots * (n_slots - 1) // 2
    if order >= 3:
        n += n_slots * (n_slots - 1) * (n_slots - 2) // 6
    return n


@njit(cache=True, nogil=True)
def _tree_index_chunk(
    cols, n_bg, col_group, roots, node_int, threshold, values, cat_bits,
    coef, term_keys, n_groups, max_depth, c, n_chunks,
):
    # Per leaf of the trees of chunk c and distinct row pattern B, the
    # coefficient of every term S <= P | B over the compatible background
    # patterns P (P & B == 0, weight = their count), then added, times the
    # leaf value, to the rows of that pattern in acc_c (n_rows, n_terms *
    # n_outputs), not divided by the background rows. cols holds the
    # background rows, then the explained ones, column by column. Local
    # subsets of the path slots are ranked 0 (empty), 1 + a, off2 + C(b, 2)
    # + a and off3 + C(c, 3) + C(b, 2) + a for slots a < b < c. Returns False
    # when a path met more than MAX_PATH_GROUPS groups.
    n_rows = cols.shape[1] - n_bg
    n_out = values.shape[1]
    n_trees = roots.shape[0]
    order = coef.shape[0] - 1
    cap = min(max_depth, MAX_PATH_GROUPS)
    n_sub = _n_local_subsets(cap, order)
    off2 = 1 + cap
    off3 = off2 + cap * (cap - 1) // 2
    stack_node, stack_level, stack_bit, goes, path = _tree_walk_buffers(
        cols.shape[1], max_depth)
    p_stamp, p_key, p_slot = _tree_table(n_rows, n_bg)
    b_stamp, b_key, b_slot = _tree_table(n_rows, n_bg)
    p_pat = np.empty(n_bg, dtype=np.int64)
    p_w = np.empty(n_bg, dtype=np.float64)
    slot_of = np.full(n_groups, -1, dtype=np.int64)
    slot_group = np.empty(MAX_PATH_GROUPS, dtype=np.int64)
    level_new = np.empty(max_depth + 2, dtype=np.int64)
    state = zeros_1d(2, np.int64)
    loc = zeros_1d(n_sub, np.float64)
    pos = np.empty(MAX_PATH_GROUPS, dtype=np.int64)
    inb = np.empty(MAX_PATH_GROUPS, dtype=np.int64)
    # per distinct row pattern: its terms and their coefficients
    cls_n = np.empty(n_rows, dtype=np.int64)
    cls_term = np.empty((n_rows, n_sub), dtype=np.int64)
    cls_coef = zeros_2d(n_rows, n_sub, np.float64)
    cur = 0
    acc_c = zeros_2d(n_rows, term_keys.shape[0] * n_out, np.float64)
    for t in range(c, n_trees, n_chunks):
        top = _tree_walk_start(roots[t], stack_node, stack_level, stack_bit)
        while top > 0:
            leaf, d, top = _tree_next_leaf_local(
                cols, col_group, node_int, threshold, cat_bits,
                stack_node, stack_level, stack_bit, top, goes, path,
                slot_of, slot_group, level_new, state,
            )
            if leaf < 0:
                return acc_c, False
            v = path[d]
            cur += 1
            n_pat = _tree_background_patterns(
                v, n_bg, p_stamp, p_key, p_slot, cur, p_pat, p_w)
            n_cls = 0
            for r in range(n_rows):
                B = v[n_bg + r]
                h, new = _tree_slot(B, b_stamp, b_key, cur)
                if not new:
                    cls = b_slot[h]
                else:
                    cls = n_cls
                    b_slot[h] = cls
                    n_cls += 1
                    q = _bit_count(B)
                    touched = np.int64(0)
                    for p in range(n_pat):
                        P = p_pat[p]
                        if P & B:
                            continue
                        w = p_w[p]
                        a = _bit_count(P)
                        U = P | B
                        touched |= U
                        m = 0
                        k = 0
                        while U:
                            if U & 1:
                                pos[m] = k
                                inb[m] = (B >> k) & 1
                                m += 1
                            U >>= 1
                            k += 1
                        loc[0] += w * coef[0, a, q, 0]
                        if order >= 1:
                            for i in range(m):
                                loc[1 + pos[i]] += w * coef[1, a, q, inb[i]]
                        if order >= 2:
                            for j in range(m):
                                bj = pos[j]
                                rj = off2 + bj * (bj - 1) // 2
                                for i in range(j):
                                    loc[rj + pos[i]] += w * coef[
                                        2, a, q, inb[i] + inb[j]]
                        if order >= 3:
                            for j in range(m):
                                cj = pos[j]
                                rj = off3 + cj * (cj - 1) * (cj - 2) // 6
                                for i in range(j):
                                    bi = pos[i]
                                    ri = rj + bi * (bi - 1) // 2
                                    for h2 in range(i):
                                        loc[ri + pos[h2]] += w * coef[
                                            3, a, q, inb[h2] + inb[i] + inb[j]]
                    # the class's terms: the subsets of the touched slots
                    n_t = 0
                    m = 0
                    k = 0
                    U = touched
                    while U:
                        if U & 1:
                            pos[m] = k
                            m += 1
                        U >>= 1
                        k += 1
                    if n_pat > 0:
                        cls_term[cls, 0] = 0
                        cls_coef[cls, 0] = loc[0]
                        loc[0] = 0.0
                        n_t = 1
                    for i in range(m if order >= 1 else 0):
                        rank = 1 + pos[i]
                        key = _key3(1, slot_group[pos[i]], 0, 0, n_groups)
                        cls_term[cls, n_t] = _lower_bound(term_keys, key)
                        cls_coef[cls, n_t] = loc[rank]
                        loc[rank] = 0.0
                        n_t += 1
                    for j in range(m if order >= 2 else 0):
                        bj = pos[j]
                        rj = off2 + bj * (bj - 1) // 2
                        for i in range(j):
                            rank = rj + pos[i]
                            g0, g1, g2 = _sort3(-1, slot_group[pos[i]],
                                                slot_group[bj])
                            key = _key3(2, g1, g2, 0, n_groups)
                            cls_term[cls, n_t] = _lower_bound(term_keys, key)
                            cls_coef[cls, n_t] = loc[rank]
                            loc[rank] = 0.0
                            n_t += 1
                    for j in range(m if order >= 3 else 0):
                        cj = pos[j]
                        rj = off3 + cj * (cj - 1) * (cj - 2) // 6
                        for i in range(j):
                            bi = pos[i]
                            ri = rj + bi * (bi - 1) // 2
                            for h2 in range(i):
                                rank = ri + pos[h2]
                                g0, g1, g2 = _sort3(slot_group[pos[h2]],
                                                    slot_group[bi],
                                                    slot_group[cj])
                                key = _key3(3, g0, g1, g2, n_groups)
                                cls_term[cls, n_t] = _lower_bound(term_keys, key)
                                cls_coef[cls, n_t] = loc[rank]
                                loc[rank] = 0.0
                                n_t += 1
                    cls_n[cls] = n_t
                for i in range(cls_n[cls]):
                    j0 = cls_term[cls, i] * n_out
                    cf = cls_coef[cls, i]
                    for o in range(n_out):
                        acc_c[r, j0 + o] += cf * values[leaf, o]
    return acc_c, True
