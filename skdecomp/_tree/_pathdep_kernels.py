"""Numba kernels of the path-dependent game of tree ensembles.

In the path-dependent game (the game of TreeSHAP without background data,
Lundberg et al., "From local explanations to global understanding with
explainable AI for trees", Nature Machine Intelligence 2020), a tree is
evaluated for a row x and a coalition S by following the split at nodes whose
column's group is in S and, at the other nodes, taking both children weighted
by their share of the node's training cover.

Take a leaf with value ``value`` whose path splits on the distinct groups D.
For a group g of D let ``a_g = 1`` if x follows every split on g along the
path (0 otherwise) and ``b_g`` the product of the cover shares of the path's
children at the splits on g. The leaf adds ``value * prod_{g in S & D} a_g *
prod_{g in D - S} b_g`` to ``v_x(S)``: a product game, whose Moebius
components are ``m(U) = value * prod_{g in U} c_g * prod_{g in D - U} b_g``
for ``U <= D`` with ``c_g = a_g - b_g``, and 0 for every other U.

An attribution with size weights w is then, per leaf, ``phi_k = c_k * sum_t
w(t + 1) e_t(D - {k})`` where ``e_t(E)`` is the coefficient of ``z**t`` in
``prod_{g in E} (b_g + c_g z)``; the sums of all k come from prefix products
of these polynomials and suffix sums of the weights in O(|D|**2), without
division. Interaction indices of order s <= 3 read ``e_t(D - S)`` the same
way. A leaf's numbers depend on the row through its pattern of a only, so
rows with the same pattern at a leaf share them (the per-leaf precomputation
of Yang, "Fast TreeSHAP", 2021, done for the patterns the rows meet).

Each tree is walked once for all rows together, keeping for every row the
path groups whose splits it does not follow, as in :mod:`._kernels`; groups
are numbered by their first split on the current path (path slots), so that
any number of groups is served. Each kernel sums the trees of one chunk
(tree ``t`` in chunk ``t % n_chunks``, chunks fixed by the model) into an
array of shape (width, n_rows) and releases the GIL; the caller runs the
chunks on threads and adds their sums in chunk order
(``skdecomp._numba.chunk_sums``), so that the result does not depend on the
number of threads.
"""

# SPDX-License-Identifier: BSD-3-Clause

import numpy as np
from numba import njit

from .._numba import zeros_1d, zeros_2d
from ._kernels import (
    MAX_PATH_GROUPS,
    _lower_bound,
    _tree_slot,
    _tree_split_goes,
    _tree_table,
)

#: Path slots up to which the distinct row patterns of a leaf are found by
#: direct indexing (a table of 2**slots entries); hashing above.
_DIRECT_SLOTS = 12


@njit(cache=True, inline="always")
def _pd_walk_buffers(n_rows, max_depth, n_groups):
    # stack_node, stack_level, stack_bit, goes, path, pnode, slot_of,
    # slot_group, level_new, state of _pd_next_leaf
    slot_of = np.empty(n_groups, dtype=np.int64)
    slot_of[:] = -1
    return (
        np.empty(max_depth + 2, dtype=np.int64),
        np.empty(max_depth + 2, dtype=np.int64),
        np.empty(max_depth + 2, dtype=np.int64),
        zeros_2d(max_depth + 2, n_rows, np.int64),
        zeros_2d(max_depth + 2, n_rows, np.int64),
        np.empty(max_depth + 2, dtype=np.int64),
        slot_of,
        np.empty(MAX_PATH_GROUPS, dtype=np.int64),
        np.empty(max_depth + 2, dtype=np.int64),
        zeros_1d(2, np.int64),
    )


@njit(cache=True, inline="always")
def _pd_walk_start(root, stack_node, stack_level, stack_bit):
    stack_node[0] = root
    stack_level[0] = 0
    stack_bit[0] = 0
    # an int64, not the literal 1: a literal argument would compile the
    # walk's next step once more, for that type
    return np.int64(1)


@njit(cache=True)
def _pd_next_leaf(cols, col_group, node_int, threshold, cat_bits,
                  stack_node, stack_level, stack_bit, top, goes, path, pnode,
                  slot_of, slot_group, level_new, state):
    # Pop the next subtree of the depth-first walk and descend to its first
    # leaf. path[d, r] holds the path slots whose splits row r does not
    # follow down to depth d; pnode[l] is the node at depth l of the current
    # path; slot_of[g] is the slot of group g (-1 off the path), slot_group
    # its inverse, level_new[l] the group the split at depth l gave a slot
    # (-1 if it had one), state = (slots in use, depth of the previous
    # leaf). Every stack entry but a root is the right child of the node one
    # level up, whose rows going left are still in goes[level - 1]. Returns
    # (leaf, depth, stack top), or (-1, 0, 0) past MAX_PATH_GROUPS slots.
    n_rows = cols.shape[1]
    top -= 1
    node = stack_node[top]
    d = stack_level[top]
    # the new path shares the splits above depth d with the previous one
    for lev in range(state[1] - 1, d - 1, -1):
        g = level_new[lev]
        if g >= 0:
            slot_of[g] = -1
            state[0] -= 1
    if d > 0:
        bit = stack_bit[top]
        for r in range(n_rows):
            path[d, r] = path[d - 1, r] | (bit * goes[d - 1, r])
    pnode[d] = node
    while node_int[node, 0] >= 0:
        f = node_int[node, 0]
        _tree_split_goes(node, cols[f], node_int, threshold, cat_bits, goes[d])
        g = col_group[f]
        if slot_of[g] < 0:
            if state[0] == MAX_PATH_GROUPS:
                return -1, 0, 0
            slot_of[g] = state[0]
            slot_group[state[0]] = g
            state[0] += 1
            level_new[d] = g
        else:
            level_new[d] = -1
        bit = np.int64(1) << slot_of[g]
        stack_node[top] = node_int[node, 2]
        stack_level[top] = d + 1
        stack_bit[top] = bit
        top += 1
        for r in range(n_rows):
            path[d + 1, r] = path[d, r] | (bit * (1 - goes[d, r]))
        node = node_int[node, 1]
        d += 1
        pnode[d] = node
    state[1] = d
    return node, d, top


@njit(cache=True, inline="always")
def _pd_leaf_shares(d, pnode, node_int, col_group, slot_of, frac, n_used, bq):
    # bq[s]: product of the cover shares of the path's children at the
    # splits on the group of slot s
    for s in range(n_used):
        bq[s] = 1.0
    for lev in range(d):
        nd = pnode[lev]
        s = slot_of[col_group[node_int[nd, 0]]]
        bq[s] *= frac[pnode[lev + 1]]


@njit(cache=True)
def _pd_classes(v, n_used, d_stamp, d_cls, h_stamp, h_key, h_cls, cur, row_cls,
                first):
    # Distinct patterns of v (the rows' patterns at a leaf of n_used path
    # slots): row_cls[r] is the class of row r, first[i] a row of class i.
    # Returns the number of classes. cur must be new for every leaf.
    n_cls = 0
    if n_used <= _DIRECT_SLOTS:
        for r in range(v.shape[0]):
            V = v[r]
            if d_stamp[V] != cur:
                d_stamp[V] = cur
                d_cls[V] = n_cls
                first[n_cls] = r
                n_cls += 1
            row_cls[r] = d_cls[V]
        return n_cls
    for r in range(v.shape[0]):
        h, new = _tree_slot(v[r], h_stamp, h_key, cur)
        if new:
            h_cls[h] = n_cls
            first[n_cls] = r
            n_cls += 1
        row_cls[r] = h_cls[h]
    return n_cls


@njit(cache=True, inline="always")
def _pd_class_tables(n_rows, cap):
    # pattern tables of _pd_classes
    n_direct = np.int64(1) << min(cap, _DIRECT_SLOTS)
    d_stamp = np.empty(n_direct, dtype=np.int64)
    d_stamp[:] = -1
    d_cls = np.empty(n_direct, dtype=np.int64)
    h_stamp, h_key, h_cls = _tree_table(n_rows, 0)
    row_cls = np.empty(n_rows, dtype=np.int64)
    first = np.empty(max(n_rows, 1), dtype=np.int64)
    return d_stamp, d_cls, h_stamp, h_key, h_cls, row_cls, first


@njit(cache=True)
def _pd_excluded_sums(bq, cq, n, wv, G, L, out):
    # out[k] = sum_t wv[t] e_t(all factors but k), k < n, for the factors
    # (bq[j] + cq[j] z): with L_k the product of the factors before k and
    # R_k of those after it, out[k] = sum_i L_k[i] G_k[i] where
    # G_k[i] = sum_j R_k[j] wv[i + j] (G_{k-1}[i] = b_k G_k[i] + c_k G_k[i+1]).
    if n == 0:
        return
    for i in range(n):
        G[n - 1, i] = wv[i]
    for k in range(n - 1, 0, -1):
        b = bq[k]
        c = cq[k]
        for i in range(k):
            G[k - 1, i] = b * G[k, i] + c * G[k, i + 1]
    L[0] = 1.0
    for k in range(n):
        total = 0.0
        for i in range(k + 1):
            total += L[i] * G[k, i]
        out[k] = total
        b = bq[k]
        c = cq[k]
        L[k + 1] = c * L[k]
        for i in range(k, 0, -1):
            L[i] = b * L[i] + c * L[i - 1]
        L[0] = b * L[0]


@njit(cache=True)
def _pd_all_sum(bq, cq, n, wv, L):
    # sum_t wv[t] e_t(all n factors)
    L[0] = 1.0
    for k in range(n):
        b = bq[k]
        c = cq[k]
        L[k + 1] = c * L[k]
        for i in range(k, 0, -1):
            L[i] = b * L[i] + c * L[i - 1]
        L[0] = b * L[0]
    total = 0.0
    for i in range(n + 1):
        total += L[i] * wv[i]
    return total


@njit(cache=True, inline="always")
def _pd_set_c(V, bq, cq, n_used):
    # c = a - b, a = 0 on the slots of the pattern V
    for j in range(n_used):
        cq[j] = (0.0 if (V >> j) & 1 else 1.0) - bq[j]


# -- attributions -------------------------------------------------------------------
@njit(cache=True, nogil=True)
def _pd_attributions_chunk(cols, col_group, roots, node_int, threshold, values,
                           cat_bits, frac, wtab, n_groups, max_depth, c, n_chunks):
    # the attributions of the trees of chunk c summed in acc_c (n_groups *
    # n_methods * n_outputs, n_rows); False when a path met more than
    # MAX_PATH_GROUPS groups
    n_rows = cols.shape[1]
    n_out = values.shape[1]
    n_methods = wtab.shape[0]
    per_k = n_methods * n_out
    n_trees = roots.shape[0]
    cap = max(1, min(max_depth, MAX_PATH_GROUPS))
    n_cls_max = max(1, n_rows if cap >= 20 else min(n_rows, np.int64(1) << cap))
    (stack_node, stack_level, stack_bit, goes, path, pnode, slot_of,
     slot_group, level_new, state) = _pd_walk_buffers(n_rows, max_depth, n_groups)
    d_stamp, d_cls, h_stamp, h_key, h_cls, row_cls, first = _pd_class_tables(
        n_rows, cap)
    cls_val = np.empty((cap * per_k, n_cls_max), dtype=np.float64)
    bq = np.empty(MAX_PATH_GROUPS, dtype=np.float64)
    cq = np.empty(MAX_PATH_GROUPS, dtype=np.float64)
    sh = np.empty(MAX_PATH_GROUPS, dtype=np.float64)
    G = np.empty((cap, cap), dtype=np.float64)
    L = np.empty(cap + 1, dtype=np.float64)
    cur = 0
    acc_c = zeros_2d(n_groups * per_k, n_rows, np.float64)
    for t in range(c, n_trees, n_chunks):
        top = _pd_walk_start(roots[t], stack_node, stack_level, stack_bit)
        while top > 0:
            leaf, d, top = _pd_next_leaf(
                cols, col_group, node_int, threshold, cat_bits,
                stack_node, stack_level, stack_bit, top, goes, path, pnode,
                slot_of, slot_group, level_new, state,
            )
            if leaf < 0:
                return acc_c, False
            n_used = state[0]
            if n_used == 0:
                continue  # a tree of one leaf: the expected value only
            _pd_leaf_shares(d, pnode, node_int, col_group, slot_of, frac, n_used, bq)
            v = path[d]
            cur += 1
            n_cls = _pd_classes(v, n_used, d_stamp, d_cls, h_stamp, h_key, h_cls, cur,
                                row_cls, first)
            for cls in range(n_cls):
                _pd_set_c(v[first[cls]], bq, cq, n_used)
                for m in range(n_methods):
                    _pd_excluded_sums(bq, cq, n_used, wtab[m], G, L, sh)
                    for k in range(n_used):
                        f = cq[k] * sh[k]
                        j0 = (k * n_methods + m) * n_out
                        for o in range(n_out):
                            cls_val[j0 + o, cls] = f * values[leaf, o]
            for k in range(n_used):
                j0 = slot_group[k] * per_k
                j1 = k * per_k
                for j in range(per_k):
                    dst = acc_c[j0 + j]
                    src = cls_val[j1 + j]
                    for r in range(n_rows):
                        dst[r] += src[row_cls[r]]
    return acc_c, True



# -- coalition values ---------------------------------------------------------------
@njit(cache=True, nogil=True)
def _pd_values_chunk(cols, col_group, roots, node_int, threshold, values, cat_bits,
                     frac, masks, max_depth, c, n_chunks):
    # v_x(S) of the trees of chunk c summed in acc_c (n_masks * n_outputs,
    # n_rows); False when a path met more than MAX_PATH_GROUPS groups
    n_rows = cols.shape[1]
    n_out = values.shape[1]
    n_masks = masks.shape[0]
    n_groups = masks.shape[1]
    (stack_node, stack_level, stack_bit, goes, path, pnode, slot_of,
     slot_group, level_new, state) = _pd_walk_buffers(n_rows, max_depth, n_groups)
    bq = np.empty(MAX_PATH_GROUPS, dtype=np.float64)
    local = np.empty(n_masks, dtype=np.int64)
    share = np.empty(n_masks, dtype=np.float64)
    acc_c = zeros_2d(masks.shape[0] * n_out, n_rows, np.float64)
    for t in range(c, roots.shape[0], n_chunks):
        top = _pd_walk_start(roots[t], stack_node, stack_level, stack_bit)
        while top > 0:
            leaf, d, top = _pd_next_leaf(
                cols, col_group, node_int, threshold, cat_bits,
                stack_node, stack_level, stack_bit, top, goes, path, pnode,
                slot_of, slot_group, level_new, state,
            )
            if leaf < 0:
                return acc_c, False
            n_used = state[0]
            _pd_leaf_shares(d, pnode, node_int, col_group, slot_of, frac, n_used, bq)
            # per coalition: its path slots, and the shares of the others
            for i in range(n_masks):
                loc = np.int64(0)
                f = 1.0
                for k in range(n_used):
                    if masks[i, slot_group[k]]:
                        loc |= np.int64(1) << k
                    else:
                        f *= bq[k]
                local[i] = loc
                share[i] = f
            v = path[d]
            for i in range(n_masks):
                loc = local[i]
                for o in range(n_out):
                    f = share[i] * values[leaf, o]
                    dst = acc_c[i * n_out + o]
                    for r in range(n_rows):
                        if not v[r] & loc:
                            dst[r] += f
    return acc_c, True



# -- Moebius components -------------------------------------------------------------
@njit(cache=True, nogil=True)
def _pd_components_chunk(cols, col_group, roots, node_int, threshold, values,
                         cat_bits, frac, n_groups, max_depth, c, n_chunks):
    # the components of the trees of chunk c summed in acc_c (2**n_groups *
    # n_outputs, n_rows), n_groups <= MAX_PATH_GROUPS
    n_rows = cols.shape[1]
    n_out = values.shape[1]
    cap = max(1, min(max_depth, n_groups))
    n_local = np.int64(1) << cap
    n_cls_max = max(1, min(n_rows, n_local))
    (stack_node, stack_level, stack_bit, goes, path, pnode, slot_of,
     slot_group, level_new, state) = _pd_walk_buffers(n_rows, max_depth, n_groups)
    d_stamp, d_cls, h_stamp, h_key, h_cls, row_cls, first = _pd_class_tables(
        n_rows, cap)
    cls_comp = np.empty((n_local, n_cls_max), dtype=np.float64)
    gmask = np.empty(n_local, dtype=np.int64)
    bq = np.empty(MAX_PATH_GROUPS, dtype=np.float64)
    cq = np.empty(MAX_PATH_GROUPS, dtype=np.float64)
    cur = 0
    acc_c = zeros_2d((np.int64(1) << n_groups) * n_out, n_rows, np.float64)
    for t in range(c, roots.shape[0], n_chunks):
        top = _pd_walk_start(roots[t], stack_node, stack_level, stack_bit)
        while top > 0:
            leaf, d, top = _pd_next_leaf(
                cols, col_group, node_int, threshold, cat_bits,
                stack_node, stack_level, stack_bit, top, goes, path, pnode,
                slot_of, slot_group, level_new, state,
            )
            n_used = state[0]
            _pd_leaf_shares(d, pnode, node_int, col_group, slot_of, frac, n_used, bq)
            # the mask over the groups of every subset of the path slots
            gmask[0] = 0
            for k in range(n_used):
                step = np.int64(1) << k
                gbit = np.int64(1) << slot_group[k]
                for U in range(step):
                    gmask[U + step] = gmask[U] | gbit
            n_sub = np.int64(1) << n_used
            v = path[d]
            cur += 1
            n_cls = _pd_classes(v, n_used, d_stamp, d_cls, h_stamp, h_key, h_cls, cur,
                                row_cls, first)
            for cls in range(n_cls):
                _pd_set_c(v[first[cls]], bq, cq, n_used)
                cls_comp[0, cls] = 1.0
                for k in range(n_used):
                    step = np.int64(1) << k
                    for U in range(step):
                        x = cls_comp[U, cls]
                        cls_comp[U + step, cls] = x * cq[k]
                        cls_comp[U, cls] = x * bq[k]
            for U in range(n_sub):
                src = cls_comp[U]
                for o in range(n_out):
                    dst = acc_c[gmask[U] * n_out + o]
                    val = values[leaf, o]
                    for r in range(n_rows):
                        dst[r] += src[row_cls[r]] * val
    return acc_c, True



# -- interaction indices ------------------------------------------------------------
@njit(cache=True, inline="always")
def _pd_key3(size, g0, g1, g2, n_groups):
    # the key of a term of `size` sorted groups (as _index_kernels.term_key)
    m = np.int64(n_groups)
    return ((np.int64(size) * m + g0) * m + g1) * m + g2


@njit(cache=True, inline="always")
def _pd_sort3(a, b, c):
    if a > b:
        a, b = b, a
    if b > c:
        b, c = c, b
    if a > b:
        a, b = b, a
    return a, b, c


@njit(cache=True)
def _pd_index_coefficients(bq, cq, n, wtab, order, G, L, sh, rb, rc, coef):
    # coef[rank] = the value of each local term per unit of leaf value, for
    # the local subsets ranked 0 (empty), 1 + a, off2 + C(b, 2) + a and
    # off3 + C(c, 3) + C(b, 2) + a (slots a < b < c), off2 = 1 + n and
    # off3 = off2 + C(n, 2); wtab[s, t] = c(s, t, order).
    coef[0] = _pd_all_sum(bq, cq, n, wtab[0], L)
    if order >= 1:
        _pd_excluded_sums(bq, cq, n, wtab[1, 1:], G, L, sh)
        for a in range(n):
            coef[1 + a] = cq[a] * sh[a]
    off2 = 1 + n
    if order >= 2:
        for a in range(n):
            m = 0
            for j in range(n):
                if j != a:
                    rb[m] = bq[j]
                    rc[m] = cq[j]
                    m += 1
            _pd_excluded_sums(rb, rc, np.int64(m), wtab[2, 2:], G, L, sh)
            for b in range(a + 1, n):
                coef[off2 + b * (b - 1) // 2 + a] = cq[a] * cq[b] * sh[b - 1]
    off3 = off2 + n * (n - 1) // 2
    if order >= 3:
        for a in range(n):
            for b in range(a + 1, n):
                m = 0
                for j in range(n):
                    if j != a and j != b:
                        rb[m] = bq[j]
                        rc[m] = cq[j]
                        m += 1
                _pd_excluded_sums(rb, rc, np.int64(m), wtab[3, 3:], G, L, sh)
                cab = cq[a] * cq[b]
                for c in range(b + 1, n):
                    rank = off3 + c * (c - 1) * (c - 2) // 6 + b * (b - 1) // 2 + a
                    coef[rank] = cab * cq[c] * sh[c - 2]


@njit(cache=True, inline="always")
def _pd_n_local(n, order):
    total = 1
    if order >= 1:
        total += n
    if order >= 2:
        total += n * (n - 1) // 2
    if order >= 3:
        total += n * (n - 1) * (n - 2) // 6
    return total


@njit(cache=True, nogil=True)
def _pd_index_chunk(cols, col_group, roots, node_int, threshold, values, cat_bits,
                    frac, wtab, term_keys, n_groups, max_depth, c, n_chunks):
    # the index values of the trees of chunk c summed in acc_c (n_terms *
    # n_outputs, n_rows); False when a path met more than MAX_PATH_GROUPS
    # groups
    n_rows = cols.shape[1]
    n_out = values.shape[1]
    order = wtab.shape[0] - 1
    cap = max(1, min(max_depth, MAX_PATH_GROUPS))
    n_sub = _pd_n_local(cap, order)
    n_cls_max = max(1, n_rows if cap >= 20 else min(n_rows, np.int64(1) << cap))
    (stack_node, stack_level, stack_bit, goes, path, pnode, slot_of,
     slot_group, level_new, state) = _pd_walk_buffers(n_rows, max_depth, n_groups)
    d_stamp, d_cls, h_stamp, h_key, h_cls, row_cls, first = _pd_class_tables(
        n_rows, cap)
    cls_coef = np.empty((n_sub, n_cls_max), dtype=np.float64)
    term_of = np.empty(n_sub, dtype=np.int64)
    bq = np.empty(MAX_PATH_GROUPS, dtype=np.float64)
    cq = np.empty(MAX_PATH_GROUPS, dtype=np.float64)
    rb = np.empty(MAX_PATH_GROUPS, dtype=np.float64)
    rc = np.empty(MAX_PATH_GROUPS, dtype=np.float64)
    sh = np.empty(MAX_PATH_GROUPS, dtype=np.float64)
    G = np.empty((cap, cap), dtype=np.float64)
    L = np.empty(cap + 1, dtype=np.float64)
    cur = 0
    acc_c = zeros_2d(term_keys.shape[0] * n_out, n_rows, np.float64)
    for t in range(c, roots.shape[0], n_chunks):
        top = _pd_walk_start(roots[t], stack_node, stack_level, stack_bit)
        while top > 0:
            leaf, d, top = _pd_next_leaf(
                cols, col_group, node_int, threshold, cat_bits,
                stack_node, stack_level, stack_bit, top, goes, path, pnode,
                slot_of, slot_group, level_new, state,
            )
            if leaf < 0:
                return acc_c, False
            n_used = state[0]
            _pd_leaf_shares(d, pnode, node_int, col_group, slot_of, frac, n_used, bq)
            # the reported term of every local subset of the path slots
            n_loc = _pd_n_local(n_used, order)
            term_of[0] = 0
            off2 = 1 + n_used
            off3 = off2 + n_used * (n_used - 1) // 2
            for a in range(n_used if order >= 1 else 0):
                key = _pd_key3(1, slot_group[a], 0, 0, n_groups)
                term_of[1 + a] = _lower_bound(term_keys, key)
            for b in range(n_used if order >= 2 else 0):
                for a in range(b):
                    g0, g1, g2 = _pd_sort3(-1, slot_group[a], slot_group[b])
                    key = _pd_key3(2, g1, g2, 0, n_groups)
                    term_of[off2 + b * (b - 1) // 2 + a] = _lower_bound(term_keys, key)
            for c3 in range(n_used if order >= 3 else 0):
                for b in range(c3):
                    for a in range(b):
                        g0, g1, g2 = _pd_sort3(slot_group[a], slot_group[b],
                                               slot_group[c3])
                        key = _pd_key3(3, g0, g1, g2, n_groups)
                        rank = (off3 + c3 * (c3 - 1) * (c3 - 2) // 6
                                + b * (b - 1) // 2 + a)
                        term_of[rank] = _lower_bound(term_keys, key)
            v = path[d]
            cur += 1
            n_cls = _pd_classes(v, n_used, d_stamp, d_cls, h_stamp, h_key, h_cls, cur,
                                row_cls, first)
            for cls in range(n_cls):
                _pd_set_c(v[first[cls]], bq, cq, n_used)
                _pd_index_coefficients(bq, cq, n_used, wtab, order, G, L, sh, rb, rc,
                                       cls_coef[:, cls])
            for i in range(n_loc):
                src = cls_coef[i]
                for o in range(n_out):
                    dst = acc_c[term_of[i] * n_out + o]
                    val = values[leaf, o]
                    for r in range(n_rows):
                        dst[r] += src[row_cls[r]] * val
    return acc_c, True
