"""Numba kernels of hierarchical (Owen and Winter) values of tree ensembles.

Per leaf of value ``val``, the game of an explained row x and a background
row z is ``val * 1[P <= S] * 1[S & B == {}]``, with P = V(z) the path groups
whose splits z does not follow (x must supply them) and B = V(x) those x
does not follow (z must supply them), as in :mod:`._kernels`; the leaf is
unreachable when P and B meet.

The hierarchical value of such a game, under the random orders in which the
players of every node of the hierarchy arrive one after the other, is for a
group i of P the probability that every other group of P arrives before i
and every group of B after it, and minus the same probability (with every
group of P before and every other group of B after) for i in B. The order
of the children of every node is uniform and independent of the other
nodes, so the probability is a product over the ancestors a of i: with p
children of a (other than the one holding i) meeting P only, q meeting B
only and none meeting both (else 0), the factor is ``p! q! / (p + q + 1)!``.
Only the nodes where the leaf's groups branch (two or more children holding
them) give factors other than 1; they form the leaf's local hierarchy, built
once per leaf.

The marginal game averages over background rows: per leaf, the distinct
background patterns P and their counts, and the distinct explained patterns
B, each compatible pair once. The path-dependent game is the same game with
z replaced by independent coin flips: group j is in P with probability
``1 - b_j``, ``b_j`` the product of the cover shares of the path's splits on
j. The factors of the ancestors of i then depend on disjoint sets of groups,
so the expectation of their product is the product of their expectations;
at each ancestor the count of children meeting P is a sum of independent
Bernoulli variables, whose law is built child by child.

The walk over the trees, the path slots that number the groups of the
current path and the grouping of rows with equal patterns are those of
:mod:`._pathdep_kernels` and :mod:`._kernels`. Each kernel sums the trees of
one chunk (tree ``t`` in chunk ``t % n_chunks``, chunks fixed by the model)
and releases the GIL; the caller runs the chunks on threads and adds their
sums in chunk order (``skdecomp._numba.chunk_sums``), so that the result does
not depend on the number of threads.
"""

# SPDX-License-Identifier: BSD-3-Clause

import numpy as np
from numba import njit

from .._numba import zeros_1d, zeros_2d
from ._kernels import (
    MAX_PATH_GROUPS,
    _tree_background_patterns,
    _tree_table,
)
from ._pathdep_kernels import (
    _pd_class_tables,
    _pd_classes,
    _pd_leaf_shares,
    _pd_next_leaf,
    _pd_walk_buffers,
    _pd_walk_start,
)


@njit(cache=True)
def _owen_local(n_used, slot_group, h_parent, h_stamp, h_mask, h_local, cur,
                anc_l, anc_c, n_anc, cmask, n_child):
    # The local hierarchy of a leaf's n_used path slots (slot s is the
    # player slot_group[s]): the hierarchy nodes where the slots branch,
    # numbered 0 .. n_loc - 1, with the slot masks of their children that
    # hold slots (cmask[l, :n_child[l]]); for every slot its branching
    # ancestors anc_l[s, :n_anc[s]] and the child of each holding it
    # (anc_c). h_stamp, h_mask and h_local are scratch arrays over the
    # hierarchy's nodes, valid where h_stamp == cur. Returns n_loc.
    for s in range(n_used):
        bit = np.int64(1) << s
        a = h_parent[slot_group[s]]
        while a >= 0:
            if h_stamp[a] != cur:
                h_stamp[a] = cur
                h_mask[a] = 0
                h_local[a] = -1
            h_mask[a] |= bit
            a = h_parent[a]
    n_loc = 0
    for s in range(n_used):
        cm = np.int64(1) << s
        a = h_parent[slot_group[s]]
        k = 0
        while a >= 0:
            am = h_mask[a]
            if am != cm:
                if h_local[a] < 0:
                    h_local[a] = n_loc
                    n_child[n_loc] = 0
                    n_loc += 1
                lo = h_local[a]
                ci = -1
                for t in range(n_child[lo]):
                    if cmask[lo, t] == cm:
                        ci = t
                        break
                if ci < 0:
                    ci = n_child[lo]
                    cmask[lo, ci] = cm
                    n_child[lo] += 1
                anc_l[s, k] = lo
                anc_c[s, k] = ci
                k += 1
            cm = am
            a = h_parent[a]
        n_anc[s] = k
    return n_loc


@njit(cache=True)
def _owen_pair(P, B, w, n_loc, n_child, cmask, n_anc, anc_l, anc_c, gtab,
               st, cnt, contrib):
    # contrib[i] += w * (hierarchical value of i in the game 1[P <= S, S & B
    # == {}]), for the groups i of P | B (slots); P & B must be empty.
    for lo in range(n_loc):
        n_p = 0
        n_b = 0
        n_pb = 0
        for t in range(n_child[lo]):
            cm = cmask[lo, t]
            s = 0
            if cm & P:
                s = 1
            if cm & B:
                s += 2
            st[lo, t] = s
            if s == 1:
                n_p += 1
            elif s == 2:
                n_b += 1
            elif s == 3:
                n_pb += 1
        cnt[lo, 0] = n_p
        cnt[lo, 1] = n_b
        cnt[lo, 2] = n_pb
    T = P | B
    i = 0
    while T:
        if T & 1:
            f = w
            for k in range(n_anc[i]):
                lo = anc_l[i, k]
                s = st[lo, anc_c[i, k]]
                n_pb = cnt[lo, 2]
                if s == 3:
                    n_pb -= 1
                if n_pb > 0:
                    f = 0.0
                    break
                n_p = cnt[lo, 0]
                n_b = cnt[lo, 1]
                if s == 1:
                    n_p -= 1
                elif s == 2:
                    n_b -= 1
                f *= gtab[n_p, n_b]
            if (P >> i) & 1:
                contrib[i] += f
            else:
                contrib[i] -= f
        T >>= 1
        i += 1


@njit(cache=True)
def _owen_local_buffers(n_nodes, h_depth):
    # scratch of _owen_local and _owen_pair
    n = MAX_PATH_GROUPS
    h_stamp = np.empty(max(n_nodes, 1), dtype=np.int64)
    h_stamp[:] = -1
    return (
        h_stamp,
        np.empty(max(n_nodes, 1), dtype=np.int64),
        np.empty(max(n_nodes, 1), dtype=np.int64),
        np.empty((n, max(h_depth, 1)), dtype=np.int64),
        np.empty((n, max(h_depth, 1)), dtype=np.int64),
        np.empty(n, dtype=np.int64),
        np.empty((n, n), dtype=np.int64),
        np.empty(n, dtype=np.int64),
        np.empty((n, n), dtype=np.int64),
        np.empty((n, 3), dtype=np.int64),
        np.empty(n, dtype=np.float64),
    )


@njit(cache=True, nogil=True)
def _owen_marginal_chunk(cols, n_bg, col_group, roots, node_int, threshold, values,
                         cat_bits, h_parent, h_depth, gtab, n_groups, max_depth, c,
                         n_chunks):
    # the hierarchical values of the trees of chunk c, summed over the
    # background rows, summed in acc_c (n_groups * n_outputs, n_rows); False
    # when a path met more than MAX_PATH_GROUPS groups
    n_all = cols.shape[1]
    n_rows = n_all - n_bg
    n_out = values.shape[1]
    n_trees = roots.shape[0]
    cap = max(1, min(max_depth, MAX_PATH_GROUPS))
    n_cls_max = max(1, n_rows if cap >= 20 else min(n_rows, np.int64(1) << cap))
    (stack_node, stack_level, stack_bit, goes, path, pnode, slot_of,
     slot_group, level_new, state) = _pd_walk_buffers(n_all, max_depth, n_groups)
    d_stamp, d_cls, h_stamp, h_key, h_cls, row_cls, first = _pd_class_tables(
        n_rows, cap)
    p_stamp, p_key, p_slot = _tree_table(0, n_bg)
    p_pat = np.empty(max(n_bg, 1), dtype=np.int64)
    p_w = np.empty(max(n_bg, 1), dtype=np.float64)
    (n_stamp, n_mask, n_local, anc_l, anc_c, n_anc, cmask, n_child, st, cnt,
     contrib) = _owen_local_buffers(h_parent.shape[0], h_depth)
    cls_val = np.empty((cap * n_out, n_cls_max), dtype=np.float64)
    cur = 0
    acc_c = zeros_2d(n_groups * n_out, n_rows, np.float64)
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
            v = path[d]
            cur += 1
            n_pat = _tree_background_patterns(v, n_bg, p_stamp, p_key, p_slot, cur,
                                              p_pat, p_w)
            n_cls = _pd_classes(v[n_bg:], n_used, d_stamp, d_cls, h_stamp, h_key,
                                h_cls, cur, row_cls, first)
            n_loc = _owen_local(n_used, slot_group, h_parent, n_stamp, n_mask,
                                n_local, cur, anc_l, anc_c, n_anc, cmask, n_child)
            for cls in range(n_cls):
                B = v[n_bg + first[cls]]
                for k in range(n_used):
                    contrib[k] = 0.0
                for p in range(n_pat):
                    P = p_pat[p]
                    if (P & B) != 0 or (P | B) == 0:
                        continue
                    _owen_pair(P, B, p_w[p], n_loc, n_child, cmask, n_anc, anc_l,
                               anc_c, gtab, st, cnt, contrib)
                for k in range(n_used):
                    for o in range(n_out):
                        cls_val[k * n_out + o, cls] = contrib[k] * values[leaf, o]
            for k in range(n_used):
                j0 = slot_group[k] * n_out
                j1 = k * n_out
                for j in range(n_out):
                    dst = acc_c[j0 + j]
                    src = cls_val[j1 + j]
                    for r in range(n_rows):
                        dst[r] += src[row_cls[r]]
    return acc_c, True



@njit(cache=True)
def _owen_expected(B, bq, n_used, n_loc, n_child, cmask, n_anc, anc_l, anc_c, gtab,
                   pi, has_b, ev, dist, contrib):
    # contrib[i] = the expected hierarchical value of slot i in the game
    # 1[P <= S, S & B == {}] times 1[P & B == {}], slot j in P independently
    # with probability 1 - bq[j]
    for lo in range(n_loc):
        m = n_child[lo]
        for t in range(m):
            cm = cmask[lo, t]
            has_b[t] = (cm & B) != 0
            prod = 1.0
            j = 0
            while cm:
                if (cm & 1) and not ((B >> j) & 1):
                    prod *= bq[j]
                cm >>= 1
                j += 1
            pi[t] = prod
        for ci in range(m):
            # the other children: those holding B come after i only when
            # they hold no group of P (probability pi); the others are
            # before i (1 - pi) or hold none of P | B (pi)
            scale = 1.0
            q = 0
            n_free = 0
            dist[0] = 1.0
            for t in range(m):
                if t == ci:
                    continue
                if has_b[t]:
                    scale *= pi[t]
                    q += 1
                else:
                    r = 1.0 - pi[t]
                    dist[n_free + 1] = dist[n_free] * r
                    for u in range(n_free, 0, -1):
                        dist[u] = dist[u] * pi[t] + dist[u - 1] * r
                    dist[0] *= pi[t]
                    n_free += 1
            e = 0.0
            if scale != 0.0:
                for u in range(n_free + 1):
                    e += dist[u] * gtab[u, q]
            ev[lo, ci] = scale * e
    # z must follow the splits on B, else the leaf is not reached
    reach = 1.0
    for j in range(n_used):
        if (B >> j) & 1:
            reach *= bq[j]
    for i in range(n_used):
        f = reach
        for k in range(n_anc[i]):
            f *= ev[anc_l[i, k], anc_c[i, k]]
        if (B >> i) & 1:
            contrib[i] = -f
        else:
            contrib[i] = (1.0 - bq[i]) * f


@njit(cache=True, nogil=True)
def _owen_pd_chunk(cols, col_group, roots, node_int, threshold, values, cat_bits,
                   frac, h_parent, h_depth, gtab, n_groups, max_depth, c, n_chunks):
    # the hierarchical values of the path-dependent game of the trees of
    # chunk c summed in acc_c (n_groups * n_outputs, n_rows); False when a
    # path met more than MAX_PATH_GROUPS groups
    n_rows = cols.shape[1]
    n_out = values.shape[1]
    n_trees = roots.shape[0]
    cap = max(1, min(max_depth, MAX_PATH_GROUPS))
    n_cls_max = max(1, n_rows if cap >= 20 else min(n_rows, np.int64(1) << cap))
    (stack_node, stack_level, stack_bit, goes, path, pnode, slot_of,
     slot_group, level_new, state) = _pd_walk_buffers(n_rows, max_depth, n_groups)
    d_stamp, d_cls, h_stamp, h_key, h_cls, row_cls, first = _pd_class_tables(
        n_rows, cap)
    (n_stamp, n_mask, n_local, anc_l, anc_c, n_anc, cmask, n_child, st, cnt,
     contrib) = _owen_local_buffers(h_parent.shape[0], h_depth)
    n = MAX_PATH_GROUPS
    bq = np.empty(n, dtype=np.float64)
    pi = np.empty(n, dtype=np.float64)
    has_b = np.empty(n, dtype=np.bool_)
    ev = np.empty((n, n), dtype=np.float64)
    dist = zeros_1d(n + 1, np.float64)
    cls_val = np.empty((cap * n_out, n_cls_max), dtype=np.float64)
    cur = 0
    acc_c = zeros_2d(n_groups * n_out, n_rows, np.float64)
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
                continue
            _pd_leaf_shares(d, pnode, node_int, col_group, slot_of, frac, n_used, bq)
            v = path[d]
            cur += 1
            n_cls = _pd_classes(v, n_used, d_stamp, d_cls, h_stamp, h_key, h_cls,
                                cur, row_cls, first)
            n_loc = _owen_local(n_used, slot_group, h_parent, n_stamp, n_mask,
                                n_local, cur, anc_l, anc_c, n_anc, cmask, n_child)
            for cls in range(n_cls):
                _owen_expected(v[first[cls]], bq, n_used, n_loc, n_child, cmask,
                               n_anc, anc_l, anc_c, gtab, pi, has_b, ev, dist,
                               contrib)
                for k in range(n_used):
                    for o in range(n_out):
                        cls_val[k * n_out + o, cls] = contrib[k] * values[leaf, o]
            for k in range(n_used):
                j0 = slot_group[k] * n_out
                j1 = k * n_out
                for j in range(n_out):
                    dst = acc_c[j0 + j]
                    src = cls_val[j1 + j]
                    for r in range(n_rows):
                        dst[r] += src[row_cls[r]]
    return acc_c, True
