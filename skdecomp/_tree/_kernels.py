"""Numba kernels that walk flattened tree ensembles."""

# SPDX-License-Identifier: BSD-3-Clause

import numpy as np
from numba import njit
from numba.cpython.unsafe.numbers import trailing_zeros
from numba.extending import overload

from .._numba import zeros_1d, zeros_2d


# A tree ensemble is given as flat node arrays over all trees:
#   node_int[i] = (feature, left, right, missing_left, cat_row, known_row)
#     feature < 0 marks a leaf; missing_left is 1 when NaN goes left;
#     cat_row >= 0 marks a categorical split: category c goes left when bit c
#     of cat_bits[cat_row] is set, right when bit c of cat_bits[known_row] is
#     set, and the missing-value way otherwise (unknown or negative codes).
#   threshold[i]: numerical split ``x <= threshold`` goes left.
#   values[i]: output vector of leaf i, already scaled (e.g. by 1/n_trees).
#   roots[t]: root node of tree t.
# col_group[j] is the group of column j of the model's input.
#
# For an explained row x and a background row z, the hybrid (x_{G_S},
# z_{-G_S}) reaches a leaf exactly when S contains the groups A whose splits
# sent the path x's way (where x and z part) and avoids the groups B that sent
# it z's way. The leaf's value then enters the Möbius component F_U for
# A <= U <= A | B with sign (-1)**(|U| - |A|), by Möbius inversion of the
# interventional coalition values (Laberge et al., AISTATS 2024).
#
# Every kernel that callers may run on several threads is compiled serially
# with nogil=True: the kernels over explained rows take any contiguous part
# of them, and the leaf-wise kernels sum the trees of one chunk (tree t in
# chunk t % n_chunks) into an array the caller zeroed. The caller runs parts
# or chunks on threads and adds chunk sums in chunk order
# (skdecomp._numba.chunk_sums), so every result is bit-identical for any
# number of threads; no kernel is compiled a second time with parallel=True.


@njit(cache=True)
def _bit_count(mask):
    count = 0
    while mask:
        mask &= mask - 1
        count += 1
    return count


@njit(cache=True)
def _tree_goes_left(node, value, node_int, threshold, cat_bits):
    if np.isnan(value):
        return node_int[node, 3] != 0
    cat_row = node_int[node, 4]
    if cat_row < 0:
        return value <= threshold[node]
    if value < 0.0 or value >= 256.0:
        return node_int[node, 3] != 0
    code = np.int64(value)
    word = code >> 5
    bit = code & 31
    if (cat_bits[cat_row, word] >> bit) & 1:
        return True
    if (cat_bits[node_int[node, 5], word] >> bit) & 1:
        return False
    return node_int[node, 3] != 0


@njit(cache=True)
def _lower_bound(keys, key):
    # np.searchsorted(keys, key) of the sorted int64 array keys (a plain
    # loop: Numba's searchsorted compiles for about 0.4 s on a first call)
    lo = 0
    hi = keys.shape[0]
    while lo < hi:
        mid = (lo + hi) >> 1
        if keys[mid] < key:
            lo = mid + 1
        else:
            hi = mid
    return lo


@njit(cache=True)
def _find_mask(masks, mask):
    # index of mask in the sorted array masks, -1 when absent
    lo = _lower_bound(masks, mask)
    if lo < masks.shape[0] and masks[lo] == mask:
        return lo
    return -1


@njit(cache=True)
def _tree_max_nodes(roots, n_nodes):
    # nodes of the largest tree (a bound on its leaves)
    largest = 0
    for t in range(roots.shape[0]):
        stop = roots[t + 1] if t + 1 < roots.shape[0] else n_nodes
        largest = max(largest, stop - roots[t])
    return largest


@njit(cache=True)
def _tree_pair_buffers(max_depth, max_leaves):
    # st_node, st_a, st_b, leaf, a_set, b_set of _tree_pair_leaves
    return (
        np.empty(max_depth + 2, dtype=np.int64),
        np.empty(max_depth + 2, dtype=np.int64),
        np.empty(max_depth + 2, dtype=np.int64),
        np.empty(max_leaves, dtype=np.int64),
        np.empty(max_leaves, dtype=np.int64),
        np.empty(max_leaves, dtype=np.int64),
    )


@njit(cache=True)
def _tree_pair_leaves(x, z, root, col_group, node_int, threshold, cat_bits,
                      st_node, st_a, st_b, leaf, a_set, b_set):
    # Leaves of the tree at root reached by hybrids of the rows x and z, with
    # the groups A that must come from x and B that must come from z; fills
    # leaf, a_set, b_set and returns their number.
    n = 0
    st_node[0] = root
    st_a[0] = 0
    st_b[0] = 0
    top = 1
    while top > 0:
        top -= 1
        node = st_node[top]
        A = st_a[top]
        B = st_b[top]
        while node_int[node, 0] >= 0:
            f = node_int[node, 0]
            x_left = _tree_goes_left(node, x[f], node_int, threshold, cat_bits)
            z_left = _tree_goes_left(node, z[f], node_int, threshold, cat_bits)
            if x_left == z_left:
                node = node_int[node, 1] if x_left else node_int[node, 2]
                continue
            x_child = node_int[node, 1] if x_left else node_int[node, 2]
            z_child = node_int[node, 2] if x_left else node_int[node, 1]
            bit = np.int64(1) << col_group[f]
            if A & bit:
                node = x_child
            elif B & bit:
                node = z_child
            else:
                st_node[top] = z_child
                st_a[top] = A
                st_b[top] = B | bit
                top += 1
                node = x_child
                A = A | bit
        leaf[n] = node
        a_set[n] = A
        b_set[n] = B
        n += 1
    return n


@njit(cache=True, nogil=True)
def _tree_components_pairwise(
    X, Z, col_group, roots, node_int, threshold, values, cat_bits,
    masks, dense, max_order, max_depth,
):
    n_rows = X.shape[0]
    n_bg = Z.shape[0]
    n_out = values.shape[1]
    n_cols = masks.shape[0]
    max_leaves = _tree_max_nodes(roots, node_int.shape[0])
    out = np.zeros((n_rows, n_out, n_cols), dtype=np.float64)
    for r in range(n_rows):
        buf = zeros_2d(n_cols, n_out, np.float64)
        st_node, st_a, st_b, leaf, a_set, b_set = _tree_pair_buffers(max_depth, max_leaves)
        for q in range(n_bg):
            for t in range(roots.shape[0]):
                n_leaves = _tree_pair_leaves(X[r], Z[q], roots[t], col_group, node_int,
                                             threshold, cat_bits, st_node, st_a, st_b,
                                             leaf, a_set, b_set)
                for i in range(n_leaves):
                    node = leaf[i]
                    A = a_set[i]
                    B = b_set[i]
                    n_a = _bit_count(A)
                    if n_a > max_order:
                        continue
                    T = B
                    while True:
                        n_t = _bit_count(T)
                        if n_a + n_t <= max_order:
                            col = (A | T) if dense else _find_mask(masks, A | T)
                            if col >= 0:
                                sign = -1.0 if n_t & 1 else 1.0
                                for o in range(n_out):
                                    buf[col, o] += sign * values[node, o]
                        if T == 0:
                            break
                        T = (T - 1) & B
        for o in range(n_out):
            for c in range(n_cols):
                out[r, o, c] = buf[c, o] / n_bg
    return out



@njit(cache=True, nogil=True)
def _tree_attributions_pairwise(
    X, Z, col_group, roots, node_int, threshold, values, cat_bits,
    coef_a, coef_b, n_groups, max_depth,
):
    # phi_k = sum over leaves of value * coef_a[|A|, |B|] when k in A,
    # value * coef_b[|A|, |B|] when k in B (one table per method).
    n_rows = X.shape[0]
    n_bg = Z.shape[0]
    n_out = values.shape[1]
    n_methods = coef_a.shape[0]
    max_leaves = _tree_max_nodes(roots, node_int.shape[0])
    out = np.zeros((n_rows, n_methods, n_out, n_groups), dtype=np.float64)
    for r in range(n_rows):
        buf = np.zeros((n_methods, n_groups, n_out), dtype=np.float64)
        st_node, st_a, st_b, leaf, a_set, b_set = _tree_pair_buffers(max_depth, max_leaves)
        for q in range(n_bg):
            for t in range(roots.shape[0]):
                n_leaves = _tree_pair_leaves(X[r], Z[q], roots[t], col_group, node_int,
                                             threshold, cat_bits, st_node, st_a, st_b,
                                             leaf, a_set, b_set)
                for i in range(n_leaves):
                    node = leaf[i]
                    A = a_set[i]
                    B = b_set[i]
                    if A == 0 and B == 0:
                        continue
                    n_a = _bit_count(A)
                    n_b = _bit_count(B)
                    for m in range(n_methods):
                        ca = coef_a[m, n_a, n_b]
                        cb = coef_b[m, n_a, n_b]
                        k = 0
                        M = A | B
                        while M:
                            if M & 1:
                                c = ca if (A >> k) & 1 else cb
                                if c != 0.0:
                                    for o in range(n_out):
                                        buf[m, k, o] += c * values[node, o]
                            M >>= 1
                            k += 1
        for m in range(n_methods):
            for o in range(n_out):
                for k in range(n_groups):
                    out[r, m, o, k] = buf[m, k, o] / n_bg
    return out



@njit(cache=True, nogil=True)
def _tree_predict(X, roots, node_int, threshold, values, cat_bits):
    n_rows = X.shape[0]
    n_out = values.shape[1]
    out = zeros_2d(n_rows, n_out, np.float64)
    for r in range(n_rows):
        for t in range(roots.shape[0]):
            node = roots[t]
            while node_int[node, 0] >= 0:
                if _tree_goes_left(node, X[r, node_int[node, 0]], node_int, threshold, cat_bits):
                    node = node_int[node, 1]
                else:
                    node = node_int[node, 2]
            for o in range(n_out):
                out[r, o] += values[node, o]
    return out


# -- leaf-wise tree kernels ------------------------------------------------------
# For a leaf, let V(r) be the groups whose splits on the path row r does not
# follow. The hybrid of x and z reaches the leaf iff V(x) & V(z) == 0, with
# A = V(z) and B = V(x). Each tree is walked once, depth first, for all rows
# together: ``path[d]`` holds V of every row (background rows first) at the
# node of depth d on the current path, so reaching a leaf gives V of every row
# there. Rows with equal V are then handled once per leaf.


@njit(cache=True, inline="always")
def _tree_columns(X, Z):
    # [Z; X] column by column: (n_columns, n_background + n_rows)
    n_bg = Z.shape[0]
    out = np.empty((X.shape[1], n_bg + X.shape[0]), dtype=np.float64)
    for j in range(X.shape[1]):
        for q in range(n_bg):
            out[j, q] = Z[q, j]
        for r in range(X.shape[0]):
            out[j, n_bg + r] = X[r, j]
    return out


@njit(cache=True, inline="always")
def _tree_split_goes(node, col, node_int, threshold, cat_bits, goes):
    # goes[r] = 1 when row r (its value col[r]) goes left at the split node
    if node_int[node, 4] < 0:
        thr = threshold[node]
        nan_left = node_int[node, 3] != 0
        for r in range(col.shape[0]):
            v = col[r]
            goes[r] = (v <= thr) | (nan_left & np.isnan(v))
    else:
        for r in range(col.shape[0]):
            goes[r] = _tree_goes_left(node, col[r], node_int, threshold, cat_bits)


@njit(cache=True)
def _tree_next_leaf(cols, col_group, node_int, threshold, cat_bits,
                    stack_node, stack_level, stack_bit, top, goes, path):
    # Pop the next subtree of the depth-first walk and descend to its first
    # leaf; returns (leaf, its depth, new stack top). Every entry but the root
    # is the right child of the node one level up, whose rows going left are
    # still in goes[level - 1]; stack_bit is that node's group bit.
    n_all = cols.shape[1]
    top -= 1
    node = stack_node[top]
    d = stack_level[top]
    if d > 0:
        bit = stack_bit[top]
        for r in range(n_all):
            path[d, r] = path[d - 1, r] | (bit * goes[d - 1, r])
    while node_int[node, 0] >= 0:
        f = node_int[node, 0]
        _tree_split_goes(node, cols[f], node_int, threshold, cat_bits, goes[d])
        bit = np.int64(1) << col_group[f]
        stack_node[top] = node_int[node, 2]
        stack_level[top] = d + 1
        stack_bit[top] = bit
        top += 1
        for r in range(n_all):
            path[d + 1, r] = path[d, r] | (bit * (1 - goes[d, r]))
        node = node_int[node, 1]
        d += 1
    return node, d, top


@njit(cache=True)
def _tree_slot(key, stamp, slot_key, cur):
    # Slot of key in an open-addressing table (size a power of two) whose
    # live slots carry stamp == cur; a new key claims a free slot. Returns
    # (slot, whether the key is new). Bumping cur empties the table.
    size_mask = stamp.shape[0] - 1
    h = (key ^ (key >> 9) ^ (key >> 18) ^ (key >> 27) ^ (key >> 36)
         ^ (key >> 45) ^ (key >> 54)) & size_mask
    while True:
        if stamp[h] != cur:
            stamp[h] = cur
            slot_key[h] = key
            return h, True
        if slot_key[h] == key:
            return h, False
        h = (h + 1) & size_mask


@njit(cache=True)
def _tree_background_patterns(v, n_bg, stamp, slot_key, slot_id, cur, pats, weights):
    # Distinct values of v[:n_bg] as pats[:n] with their counts; returns n.
    n = 0
    for q in range(n_bg):
        h, new = _tree_slot(v[q], stamp, slot_key, cur)
        if new:
            slot_id[h] = n
            pats[n] = v[q]
            weights[n] = 0.0
            n += 1
        weights[slot_id[h]] += 1.0
    return n


@njit(cache=True)
def _tree_table(n_rows, n_bg):
    # stamp, key and id arrays of an empty table with room for max(n_rows, n_bg) keys
    size = 2
    while size < 2 * max(n_bg, n_rows, 1):
        size *= 2
    return (np.full(size, -1, dtype=np.int64), np.empty(size, dtype=np.int64),
            np.empty(size, dtype=np.int64))


@njit(cache=True, inline="always")
def _tree_walk_buffers(n_all, max_depth):
    # stack_node, stack_level, stack_bit, goes, path of _tree_next_leaf
    return (
        np.empty(max_depth + 2, dtype=np.int64),
        np.empty(max_depth + 2, dtype=np.int64),
        np.empty(max_depth + 2, dtype=np.int64),
        zeros_2d(max_depth + 2, n_all, np.int64),
        zeros_2d(max_depth + 2, n_all, np.int64),
    )


@njit(cache=True, inline="always")
def _tree_walk_start(root, stack_node, stack_level, stack_bit):
    # push the root of one tree for _tree_next_leaf; returns the stack top
    stack_node[0] = root
    stack_level[0] = 0
    stack_bit[0] = 0
    # an int64, not the literal 1: a literal argument would compile the
    # walk's next step once more, for that type
    return np.int64(1)


#: Most distinct groups on one root-to-leaf path of the kernels that number
#: the groups of the current path (bits 0..61 of an int64).
MAX_PATH_GROUPS = 62


@njit(cache=True)
def _tree_next_leaf_local(cols, col_group, node_int, threshold, cat_bits,
                          stack_node, stack_level, stack_bit, top, goes, path,
                          slot_of, slot_group, level_new, state):
    # _tree_next_leaf with the groups of the current path numbered 0, 1, ...
    # in the order the path meets them, so that V is a bitmask over at most
    # MAX_PATH_GROUPS path slots for any number of groups: slot_of[g] is the
    # slot of group g on the path (-1 off it), slot_group[s] its inverse,
    # level_new[l] the group that the split at depth l gave a slot (-1 when
    # it had one), state = (slots in use, depth of the previous leaf).
    # Returns (leaf, its depth, new stack top), or (-1, 0, 0) when a path
    # meets more than MAX_PATH_GROUPS groups.
    n_all = cols.shape[1]
    top -= 1
    node = stack_node[top]
    d = stack_level[top]
    # the new path shares the splits at depths < d with the previous one
    for lev in range(state[1] - 1, d - 1, -1):
        g = level_new[lev]
        if g >= 0:
            slot_of[g] = -1
            state[0] -= 1
    if d > 0:
        bit = stack_bit[top]
        for r in range(n_all):
            path[d, r] = path[d - 1, r] | (bit * goes[d - 1, r])
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
        for r in range(n_all):
            path[d + 1, r] = path[d, r] | (bit * (1 - goes[d, r]))
        node = node_int[node, 1]
        d += 1
    state[1] = d
    return node, d, top


@njit(cache=True, nogil=True)
def _tree_attributions_leaf_chunk(
    cols, n_bg, col_group, roots, node_int, threshold, values, cat_bits,
    coef_a, coef_b, n_groups, max_depth, c, n_chunks,
):
    # Leaf-wise form of _tree_attributions_pairwise for any number of groups,
    # summed over the trees of chunk c in acc_c (n_rows, n_groups *
    # n_methods * n_outputs; entry (k * n_methods + m) * n_out + o), not
    # divided by the background rows. cols holds the background rows, then
    # the explained ones, column by column.
    # Per leaf and distinct row pattern B, the attribution of group k is the
    # sum over compatible background patterns P (P & B == 0, weight = their
    # count) of coef_a[|P|, |B|] when k in P and coef_b[|P|, |B|] when k in B.
    # Patterns are over the path slots of _tree_next_leaf_local (slot s is
    # group slot_group[s]); the patterns P holding slot k form the bitset
    # p_bits[k] (62 patterns a word), so the compatible P of B are those in
    # no p_bits[k], k in B. coef_a and coef_b need entries for |P| + |B| up
    # to the most groups on one path. Returns False when a path met more than
    # MAX_PATH_GROUPS groups.
    n_all = cols.shape[1]
    n_rows = n_all - n_bg
    n_out = values.shape[1]
    n_methods = coef_a.shape[0]
    n_trees = roots.shape[0]
    per_k = n_methods * n_out
    n_local = MAX_PATH_GROUPS
    stack_node, stack_level, stack_bit, goes, path = _tree_walk_buffers(
        n_all, max_depth)
    p_stamp, p_key, p_slot = _tree_table(n_rows, n_bg)
    b_stamp, b_key, b_slot = _tree_table(n_rows, n_bg)
    p_pat = np.empty(n_bg, dtype=np.int64)
    p_w = np.empty(n_bg, dtype=np.float64)
    p_size = np.empty(n_bg, dtype=np.int64)
    p_bits = np.zeros((n_local, (n_bg + 61) // 62), dtype=np.int64)
    slot_of = np.full(n_groups, -1, dtype=np.int64)
    slot_group = np.empty(n_local, dtype=np.int64)
    level_new = np.empty(max_depth + 2, dtype=np.int64)
    state = zeros_1d(2, np.int64)
    # index of the bit 2**i from (2**i) % 67, i < 62
    bit_index = zeros_1d(67, np.int64)
    for i in range(62):
        bit_index[(np.int64(1) << i) % 67] = i
    contrib = zeros_2d(n_local, n_methods, np.float64)
    sb = zeros_1d(n_methods, np.float64)
    # per distinct row pattern of the leaf: its path slots lo..hi-1
    lo = np.empty(n_rows, dtype=np.int64)
    hi = np.empty(n_rows, dtype=np.int64)
    cv = np.empty((n_rows, n_local * per_k), dtype=np.float64)
    cur = 0
    acc_c = zeros_2d(n_rows, n_groups * per_k, np.float64)
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
            n_words = (n_pat + 61) // 62
            p_union = np.int64(0)
            for p in range(n_pat):
                P = p_pat[p]
                p_size[p] = _bit_count(P)
                p_union |= P
                bit = np.int64(1) << (p % 62)
                k = 0
                while P:
                    if P & 1:
                        p_bits[k, p // 62] |= bit
                    P >>= 1
                    k += 1
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
                    size_b = _bit_count(B)
                    touched = np.int64(0)
                    for word in range(n_words):
                        hit = np.int64(0)
                        M = B & p_union
                        k = 0
                        while M:
                            if M & 1:
                                hit |= p_bits[k, word]
                            M >>= 1
                            k += 1
                        n_in = min(62, n_pat - 62 * word)
                        free = ~hit & ((np.int64(1) << n_in) - 1)
                        while free:
                            low = free & -free
                            free ^= low
                            p = 62 * word + bit_index[low % 67]
                            P = p_pat[p]
                            size_a = p_size[p]
                            w = p_w[p]
                            touched |= P | B
                            for m in range(n_methods):
                                sb[m] += w * coef_b[m, size_a, size_b]
                            k = 0
                            while P:
                                if P & 1:
                                    for m in range(n_methods):
                                        contrib[k, m] += (
                                            w * coef_a[m, size_a, size_b])
                                P >>= 1
                                k += 1
                    # touched groups k_lo..k_hi-1 (none without a compatible P)
                    k_lo = 0
                    k_hi = 0
                    if touched:
                        k = 0
                        M = B
                        while M:
                            if M & 1:
                                for m in range(n_methods):
                                    contrib[k, m] += sb[m]
                            M >>= 1
                            k += 1
                        while not (touched >> k_lo) & 1:
                            k_lo += 1
                        k_hi = k_lo
                        while touched >> k_hi:
                            k_hi += 1
                    for m in range(n_methods):
                        sb[m] = 0.0
                    lo[cls] = k_lo
                    hi[cls] = k_hi
                    for k in range(k_lo, k_hi):
                        for m in range(n_methods):
                            for o in range(n_out):
                                cv[cls, (k * n_methods + m) * n_out + o] = (
                                    contrib[k, m] * values[leaf, o])
                            contrib[k, m] = 0.0
                for k in range(lo[cls], hi[cls]):
                    j0 = slot_group[k] * per_k
                    j1 = k * per_k
                    for j in range(per_k):
                        acc_c[r, j0 + j] += cv[cls, j1 + j]
            k = 0
            while p_union:
                if p_union & 1:
                    for word in range(n_words):
                        p_bits[k, word] = 0
                p_union >>= 1
                k += 1
    return acc_c, True


@njit(cache=True, inline="always")
def _leaf_background(leaf, ptr, pats, counts, down, p_pat, p_count, alive):
    # Background patterns P of leaf node `leaf` of a background summary
    # into p_pat, their counts into p_count, and into alive the row patterns
    # B that meet some P (P & B == 0: the union of the downsets of ~P).
    # Returns the number of patterns.
    full = down.shape[0] - 1
    p0 = ptr[leaf]
    n_pat = ptr[leaf + 1] - p0
    for w in range(alive.shape[0]):
        alive[w] = 0
    for p in range(n_pat):
        P = np.int64(pats[p0 + p])
        p_pat[p] = P
        p_count[p] = np.float64(counts[p0 + p])
        M = full & ~P
        for w in range(alive.shape[0]):
            alive[w] |= down[M, w]
    return n_pat


@njit(cache=True, nogil=True)
def _tree_ternary_chunk(cols, n_bg, col_group, roots, node_int, threshold, values,
                        cat_bits, ptr, pats, counts, tern, down, max_depth, c,
                        n_chunks):
    # Leaf-wise walk for small K, over the trees of chunk c (t % n_chunks ==
    # c) and the explained rows cols (column by column). Every reachable
    # (A, B) = (V(z), V(x)) adds the leaf value, per explained row, at the
    # ternary index tern[A] + 2 * tern[B] of acc, of shape (n_out, 3**K,
    # n_rows): summed over the background, not yet averaged. Components and
    # attributions are read off this table afterwards. Per leaf: the
    # distinct background patterns P with their counts (the summary ptr,
    # pats, counts); the rows with at least one compatible P (a bitset over
    # all B); those rows sorted by their pattern B, so that each distinct B
    # is paired with the P once and its entries are added to a contiguous
    # run of rows.
    n_rows = cols.shape[1]
    n_out = values.shape[1]
    n_trees = roots.shape[0]
    n_masks = down.shape[0]
    n_words = down.shape[1]
    stack_node, stack_level, stack_bit, goes, path = _tree_walk_buffers(
        n_rows, max_depth)
    p_pat = np.empty(n_bg, dtype=np.int64)
    p_tern = np.empty(n_bg, dtype=np.int64)
    p_w = np.empty(n_bg, dtype=np.float64)
    alive = zeros_1d(n_words, np.uint64)
    stamp = np.full(n_masks, -1, dtype=np.int64)
    cls_of = np.empty(n_masks, dtype=np.int64)
    c_pat = np.empty(n_rows, dtype=np.int64)
    c_end = np.empty(n_rows + 1, dtype=np.int64)
    live = np.empty(n_rows, dtype=np.int64)
    row_cls = np.empty(n_rows, dtype=np.int64)
    order = np.empty(n_rows, dtype=np.int64)
    e_idx = np.empty(n_bg, dtype=np.int64)
    e_w = np.empty(n_bg, dtype=np.float64)
    cur = 0
    acc = zeros_2d(n_out, (2 * tern[n_masks - 1] + 1) * n_rows, np.float64).reshape(
        (n_out, 2 * tern[n_masks - 1] + 1, n_rows))
    for t in range(c, n_trees, n_chunks):
        top = _tree_walk_start(roots[t], stack_node, stack_level, stack_bit)
        while top > 0:
            leaf, d, top = _tree_next_leaf(
                cols, col_group, node_int, threshold, cat_bits,
                stack_node, stack_level, stack_bit, top, goes, path,
            )
            v = path[d]
            cur += 1
            # background patterns of the leaf and the row patterns they admit
            n_pat = _leaf_background(leaf, ptr, pats, counts, down, p_pat, p_w, alive)
            for p in range(n_pat):
                p_tern[p] = tern[p_pat[p]]
            # rows that reach the leaf with some background row
            n_live = 0
            for r in range(n_rows):
                B = v[r]
                live[n_live] = r
                n_live += np.int64((alive[B >> 6] >> np.uint64(B & 63)) & np.uint64(1))
            if n_live == 0:
                continue
            # counting sort of the live rows by pattern
            n_cls = 0
            for j in range(n_live):
                B = v[live[j]]
                if stamp[B] != cur:
                    stamp[B] = cur
                    cls_of[B] = n_cls
                    c_pat[n_cls] = B
                    c_end[n_cls + 1] = 0
                    n_cls += 1
                k = cls_of[B]
                row_cls[j] = k
                c_end[k + 1] += 1
            c_end[0] = 0
            for k in range(n_cls):
                c_end[k + 1] += c_end[k]
            for j in range(n_live):
                k = row_cls[j]
                order[c_end[k]] = live[j]
                c_end[k] += 1
            start = 0
            for k in range(n_cls):
                stop = c_end[k]
                B = c_pat[k]
                tb = 2 * tern[B]
                n_e = 0
                for p in range(n_pat):
                    e_idx[n_e] = p_tern[p] + tb
                    e_w[n_e] = p_w[p]
                    n_e += np.int64((p_pat[p] & B) == 0)
                for o in range(n_out):
                    val = values[leaf, o]
                    for e in range(n_e):
                        i = e_idx[e]
                        w = e_w[e] * val
                        for j in range(start, stop):
                            acc[o, i, order[j]] += w
                start = stop
    return acc, True


@njit(cache=True)
def _ternary_masks(n_groups):
    # (A, B) masks of every ternary index: digit 1 puts group k in A, 2 in B
    n_tern = 1
    for _ in range(n_groups):
        n_tern *= 3
    a_mask = zeros_1d(n_tern, np.int64)
    b_mask = zeros_1d(n_tern, np.int64)
    for i in range(n_tern):
        rest = i
        for k in range(n_groups):
            digit = rest % 3
            rest //= 3
            if digit == 1:
                a_mask[i] |= np.int64(1) << k
            elif digit == 2:
                b_mask[i] |= np.int64(1) << k
    return a_mask, b_mask


@njit(cache=True, nogil=True)
def _ternary_components(table, n_groups, n_bg):
    # F_U = sum over (A, B) with A <= U <= A | B of (-1)**|U - A| table[A, B],
    # divided by n_bg; table of shape (n_out, 3**K, n_rows)
    n_out = table.shape[0]
    n_tern = table.shape[1]
    n_rows = table.shape[2]
    a_mask, b_mask = _ternary_masks(n_groups)
    n_masks = np.int64(1) << n_groups
    out = np.zeros((n_rows, n_out, n_masks), dtype=np.float64)
    for r in range(n_rows):
        for o in range(n_out):
            for i in range(n_tern):
                w = table[o, i, r]
                if w == 0.0:
                    continue
                A = a_mask[i]
                B = b_mask[i]
                T = B
                while True:
                    sign = -1.0 if _bit_count(T) & 1 else 1.0
                    out[r, o, A | T] += sign * w
                    if T == 0:
                        break
                    T = (T - 1) & B
            for s in range(n_masks):
                out[r, o, s] /= n_bg
    return out



@njit(cache=True, nogil=True)
def _ternary_attributions(table, coef_a, coef_b, n_groups, n_bg):
    # phi_k = sum over (A, B) of table[A, B] * coef_a[|A|, |B|] for k in A and
    # * coef_b[|A|, |B|] for k in B, divided by n_bg (one table per method)
    n_out = table.shape[0]
    n_tern = table.shape[1]
    n_rows = table.shape[2]
    n_methods = coef_a.shape[0]
    a_mask, b_mask = _ternary_masks(n_groups)
    out = np.zeros((n_rows, n_methods, n_out, n_groups), dtype=np.float64)
    for r in range(n_rows):
        for o in range(n_out):
            for i in range(n_tern):
                w = table[o, i, r]
                if w == 0.0:
                    continue
                A = a_mask[i]
                B = b_mask[i]
                n_a = _bit_count(A)
                n_b = _bit_count(B)
                for m in range(n_methods):
                    ca = coef_a[m, n_a, n_b] * w
                    cb = coef_b[m, n_a, n_b] * w
                    M = A | B
                    k = 0
                    while M:
                        if M & 1:
                            out[r, m, o, k] += ca if (A >> k) & 1 else cb
                        M >>= 1
                        k += 1
        for m in range(n_methods):
            for o in range(n_out):
                for k in range(n_groups):
                    out[r, m, o, k] /= n_bg
    return out



def _low_bit(word):
    # index of the lowest set bit of a non-zero uint64 (plain Python without JIT)
    word = int(word)
    return (word & -word).bit_length() - 1


@overload(_low_bit)
def _low_bit_jit(word):
    def impl(word):
        return np.int64(trailing_zeros(word))
    return impl


@njit(cache=True, inline="always")
def _grow(a, n):
    # a copy of a with room for at least n entries
    # an explicit loop: a slice assignment compiles Numba's shape-mismatch
    # error message, which costs about a second on the first call
    out = np.empty(max(n, 2 * a.shape[0]), dtype=a.dtype)
    for i in range(a.shape[0]):
        out[i] = a[i]
    return out


@njit(cache=True)
def _tree_background_leaves(Z, col_group, roots, node_int, threshold, cat_bits,
                            n_groups, max_depth):
    # Per leaf, in the order of the depth-first walk, the distinct patterns
    # P = V(z) of the background rows and their counts: the i-th leaf
    # reached, node leaf_ids[i], holds pats[ptr[i]:ptr[i + 1]].
    # The background counts go to two interleaved histograms, so that runs of
    # equal patterns do not wait on each other; distinct patterns come from a
    # bitset over all 2**K patterns, in increasing order.
    n_bg = Z.shape[0]
    n_trees = roots.shape[0]
    n_masks = np.int64(1) << n_groups
    n_words = max(1, n_masks >> 6)
    cols = _tree_columns(Z[:0], Z)
    stack_node, stack_level, stack_bit, goes, path = _tree_walk_buffers(n_bg, max_depth)
    count_even = zeros_1d(n_masks, np.float64)
    count_odd = zeros_1d(n_masks, np.float64)
    seen = zeros_1d(n_words, np.uint64)
    pats = np.empty(1024, dtype=np.int16)  # K <= 12 groups
    counts = np.empty(1024, dtype=np.int32)
    ptr = zeros_1d(1024, np.int64)
    leaf_ids = np.empty(1024, dtype=np.int64)
    n = 0
    n_leaves = 0
    for t in range(n_trees):
        top = _tree_walk_start(roots[t], stack_node, stack_level, stack_bit)
        while top > 0:
            leaf, d, top = _tree_next_leaf(
                cols, col_group, node_int, threshold, cat_bits,
                stack_node, stack_level, stack_bit, top, goes, path,
            )
            v = path[d]
            for w in range(n_words):
                seen[w] = 0
            for q in range(0, n_bg - 1, 2):
                P0 = v[q]
                P1 = v[q + 1]
                count_even[P0] += 1.0
                count_odd[P1] += 1.0
                seen[P0 >> 6] |= np.uint64(1) << np.uint64(P0 & 63)
                seen[P1 >> 6] |= np.uint64(1) << np.uint64(P1 & 63)
            if n_bg & 1:
                P0 = v[n_bg - 1]
                count_even[P0] += 1.0
                seen[P0 >> 6] |= np.uint64(1) << np.uint64(P0 & 63)
            if n + n_bg > pats.shape[0]:
                pats = _grow(pats, n + n_bg)
                counts = _grow(counts, n + n_bg)
            for w0 in range(n_words):
                word = seen[w0]
                while word:
                    P = (w0 << 6) + _low_bit(word)
                    word &= word - np.uint64(1)
                    pats[n] = np.int16(P)
                    counts[n] = np.int32(count_even[P] + count_odd[P])
                    count_even[P] = 0.0
                    count_odd[P] = 0.0
                    n += 1
            if n_leaves >= leaf_ids.shape[0]:
                leaf_ids = _grow(leaf_ids, n_leaves + 1)
            leaf_ids[n_leaves] = leaf
            n_leaves += 1
            if n_leaves >= ptr.shape[0]:
                ptr = _grow(ptr, n_leaves + 1)
            ptr[n_leaves] = n
    return (ptr[:n_leaves + 1].copy(), leaf_ids[:n_leaves].copy(), pats[:n].copy(),
            counts[:n].copy())


@njit(cache=True, nogil=True)
def _tree_class_attributions_chunk(cols, n_bg, col_group, roots, node_int, threshold,
                                   values, cat_bits, ptr, pats, counts, coef_a, coef_b,
                                   n_groups, max_depth, down, n_bits, bits, c, n_chunks):
    # Leaf-wise attributions for small K, without the 3**K table, over the
    # trees of chunk c and the explained rows cols (column by column), added
    # to acc_c (n_rows, n_methods * n_outputs * n_groups; entry (m * n_out +
    # o) * n_groups + k), not divided by the background rows. At a leaf,
    # every explained row with the same pattern B gets the same
    # attributions, sum over the compatible background patterns P (P & B ==
    # 0, weight = their count) of coef_a[|P|, |B|] for groups in P and
    # coef_b[|P|, |B|] for groups in B, times the leaf value. They are
    # computed once per distinct B (h[B]) and added to each row with that B.
    # Distinct row patterns are found with a bitset over all 2**K patterns,
    # which needs no sort. The background patterns of every leaf come from
    # the background summary (ptr, pats, counts), so only the explained rows
    # are walked. down[M] is the bitset of the subsets of M, n_bits[M] the
    # size of M and bits[M, k] whether group k is in M.
    n_rows = cols.shape[1]
    n_out = values.shape[1]
    n_methods = coef_a.shape[0]
    n_q = n_methods * n_out * n_groups
    n_trees = roots.shape[0]
    n_words = down.shape[1]
    n_masks = np.int64(1) << n_groups
    stack_node, stack_level, stack_bit, goes, path = _tree_walk_buffers(
        n_rows, max_depth)
    seen = zeros_1d(n_words, np.uint64)
    alive = zeros_1d(n_words, np.uint64)
    p_pat = np.empty(n_bg, dtype=np.int64)
    p_count = np.empty(n_bg, dtype=np.float64)
    compat = np.empty(n_bg, dtype=np.int64)
    live_pat = np.empty(n_rows, dtype=np.int64)
    live_row = np.empty(n_rows, dtype=np.int64)
    h = np.empty((n_masks, n_q), dtype=np.float64)
    h_m = np.empty((n_methods, n_groups), dtype=np.float64)
    s_b = np.empty(n_methods, dtype=np.float64)
    vals = np.empty(n_out, dtype=np.float64)
    acc_c = zeros_2d(n_rows, n_q, np.float64)
    for t in range(c, n_trees, n_chunks):
        top = _tree_walk_start(roots[t], stack_node, stack_level, stack_bit)
        while top > 0:
            leaf, d, top = _tree_next_leaf(
                cols, col_group, node_int, threshold, cat_bits,
                stack_node, stack_level, stack_bit, top, goes, path,
            )
            v = path[d]
            # background patterns P of the leaf, their counts, and the row
            # patterns they admit
            n_pat = _leaf_background(leaf, ptr, pats, counts, down, p_pat,
                                     p_count, alive)
            # rows that reach the leaf with some background row
            n_live = 0
            for r in range(n_rows):
                B = v[r]
                live_pat[n_live] = B
                live_row[n_live] = r
                n_live += np.int64(
                    (alive[B >> 6] >> np.uint64(B & 63)) & np.uint64(1))
            if n_live == 0:
                continue
            for o in range(n_out):
                vals[o] = values[leaf, o]
            for w in range(n_words):
                seen[w] = 0
            for j in range(n_live):
                B = live_pat[j]
                seen[B >> 6] |= np.uint64(1) << np.uint64(B & 63)
            # h[B] for every distinct live B
            for w0 in range(n_words):
                word = seen[w0]
                while word:
                    B = (w0 << 6) + _low_bit(word)
                    word &= word - np.uint64(1)
                    nb = n_bits[B]
                    n_c = 0
                    for p in range(n_pat):
                        compat[n_c] = p
                        n_c += np.int64((p_pat[p] & B) == 0)
                    if n_q == n_groups:
                        # one method and one output, the usual case: the
                        # same sums without the method and output loops,
                        # which cost ~15 % here
                        for k in range(n_groups):
                            h[B, k] = 0.0
                        sb = 0.0
                        for i in range(n_c):
                            p = compat[i]
                            P = p_pat[p]
                            na = n_bits[P]
                            cw = p_count[p] * vals[0]
                            ca = coef_a[0, na, nb] * cw
                            sb += coef_b[0, na, nb] * cw
                            for k in range(n_groups):
                                h[B, k] += ca * bits[P, k]
                        for k in range(n_groups):
                            h[B, k] += sb * bits[B, k]
                        continue
                    for m in range(n_methods):
                        for k in range(n_groups):
                            h_m[m, k] = 0.0
                        sb = 0.0
                        for i in range(n_c):
                            p = compat[i]
                            P = p_pat[p]
                            na = n_bits[P]
                            ca = coef_a[m, na, nb] * p_count[p]
                            sb += coef_b[m, na, nb] * p_count[p]
                            for k in range(n_groups):
                                h_m[m, k] += ca * bits[P, k]
                        s_b[m] = sb
                    q = 0
                    for m in range(n_methods):
                        for o in range(n_out):
                            for k in range(n_groups):
                                h[B, q] = ((h_m[m, k] + s_b[m] * bits[B, k])
                                           * vals[o])
                                q += 1
            for j in range(n_live):
                B = live_pat[j]
                r = live_row[j]
                for q in range(n_q):
                    acc_c[r, q] += h[B, q]
    return acc_c, True


@njit(cache=True, nogil=True)
def _tree_anchored_sums_chunk(cols, n_bg, x_off, col_group, roots, node_int, threshold,
                              values, cat_bits, masks, max_depth, c, n_chunks):
    # Sums over the background (rows) and over the explained rows (cols) of
    # f(x_{G_S}, z_{-G_S}) for every mask S, without the N x N values, over
    # the trees of chunk c. The hybrid of x and z reaches a leaf iff
    # V(x) & S == 0 and V(z) <= S; so a leaf adds value * #{z: V(z) <= S} to
    # every such x and value * #{x: V(x) & S == 0} to every such z. cols
    # holds the background rows (columns 0..n_bg-1) and the explained rows
    # from column x_off on (x_off = 0 when they are the same rows, walked
    # once). acc has shape (n_rows + n_bg, n_masks * n_out): the explained
    # rows' sums over the background, then the background rows' sums over
    # the explained rows (entry i * n_out + o for mask i and output o).
    n_rows = cols.shape[1] - x_off
    n_out = values.shape[1]
    n_masks = masks.shape[0]
    n_trees = roots.shape[0]
    width = n_masks * n_out
    acc = zeros_2d(n_rows + n_bg, width, np.float64)
    acc_rc = acc[:n_rows]
    acc_qc = acc[n_rows:]
    stack_node, stack_level, stack_bit, goes, path = _tree_walk_buffers(
        x_off + n_rows, max_depth)
    n_z = zeros_1d(n_masks, np.float64)
    n_x = zeros_1d(n_masks, np.float64)
    w_x = zeros_1d(width, np.float64)
    w_z = zeros_1d(width, np.float64)
    for t in range(c, n_trees, n_chunks):
        top = _tree_walk_start(roots[t], stack_node, stack_level, stack_bit)
        while top > 0:
            leaf, d, top = _tree_next_leaf(
                cols, col_group, node_int, threshold, cat_bits,
                stack_node, stack_level, stack_bit, top, goes, path,
            )
            v = path[d]
            for i in range(n_masks):
                n_z[i] = 0.0
                n_x[i] = 0.0
            for q in range(n_bg):
                P = v[q]
                for i in range(n_masks):
                    n_z[i] += (P & ~masks[i]) == 0
            for r in range(n_rows):
                B = v[x_off + r]
                for i in range(n_masks):
                    n_x[i] += (B & masks[i]) == 0
            reached = False
            for i in range(n_masks):
                if n_z[i] > 0.0 and n_x[i] > 0.0:
                    reached = True
                for o in range(n_out):
                    w_x[i * n_out + o] = n_z[i] * values[leaf, o]
                    w_z[i * n_out + o] = n_x[i] * values[leaf, o]
            if not reached:
                continue
            for r in range(n_rows):
                B = v[x_off + r]
                for i in range(n_masks):
                    if (B & masks[i]) == 0:
                        for o in range(n_out):
                            acc_rc[r, i * n_out + o] += w_x[i * n_out + o]
            for q in range(n_bg):
                P = v[q]
                for i in range(n_masks):
                    if (P & ~masks[i]) == 0:
                        for o in range(n_out):
                            acc_qc[q, i * n_out + o] += w_z[i * n_out + o]
    return acc, True
