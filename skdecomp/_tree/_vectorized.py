"""Tree ensembles evaluated with numpy alone, for problems too small to compile for.

The Numba kernels of :mod:`._kernels` compile for seconds on the first call
of a process; the functions here compute the same numbers with numpy array
operations, so that small problems are served at once. The Numba kernels
stay faster on large problems; :func:`vectorized_work` estimates the cost
of a call, for a dispatcher to compare with a threshold.

They read the flat node arrays of a :class:`~._treemodel.TreeModel` (the
format is described at the top of :mod:`._kernels`) and follow the same
rules: ``x <= threshold`` goes left, NaN goes the missing-value way, and a
categorical split sends category ``c`` left when bit ``c & 31`` of word
``c >> 5`` of ``cat_bits[cat_row]`` is set, right when that bit of
``cat_bits[known_row]`` is set, and the missing-value way otherwise
(codes below 0 or from 256 on too).

Attributions are leaf-wise. On the path from the root to a leaf, the
distinct groups of the splits get local slots 0..S-1 in the order the path
meets them, and ``V(r)`` is the bitmask of the slots whose splits row ``r``
does not follow. The hybrid of an explained row x and a background row z
reaches the leaf iff ``P = V(z)`` and ``B = V(x)`` are disjoint; the pair
then adds ``values[leaf] * coef_a[|P|, |B|]`` to every group of P and
``values[leaf] * coef_b[|P|, |B|]`` to every group of B (one table per
method), and the sums are divided by the number of background rows. Each
leaf keeps the group of each of its slots, so any number of groups works as
long as no path meets more than 62 of them.

``V`` is computed for all rows at once, one tree level at a time
(``V(child) = V(parent) | bit`` where a row does not go the child's way),
for chunks of trees. Per leaf, equal background patterns are taken once
with their count, and so are equal explained patterns (a class); the
compatible (pattern, class) pairs of all leaves of a chunk are found in one
broadcast AND, and their sums go to the rows through ``np.bincount``. Every
chunk is bounded by :func:`skdecomp._config.kernel_block_cells`; the sums
are the same up to rounding whatever the chunks.
"""

# SPDX-License-Identifier: BSD-3-Clause

import numpy as np

from .._config import kernel_block_cells

__all__ = [
    "MAX_PATH_GROUPS",
    "predict_vectorized",
    "attributions_vectorized",
    "anchored_sums_vectorized",
    "background_leaves_vectorized",
    "vectorized_work",
]

#: Most distinct groups on one root-to-leaf path (one int64 bitmask of slots).
MAX_PATH_GROUPS = 62

# Work units of one (background, explained) pair and slot, for vectorized_work
_PAIR_SHARE = 100

_BYTE_BITS = np.array([bin(i).count("1") for i in range(256)], dtype=np.uint8)


def _popcount(a):
    """Set bits of every entry of a non-negative integer array, as int64."""
    a = np.ascontiguousarray(a)
    if hasattr(np, "bitwise_count"):
        return np.bitwise_count(a).astype(np.int64)
    bytes_ = a.view(np.uint8).reshape(a.shape + (a.dtype.itemsize,))
    return _BYTE_BITS[bytes_].sum(axis=-1, dtype=np.int64)


def _goes_left(node, value, node_int, threshold, cat_bits):
    """Whether ``value`` goes left at ``node``; arrays broadcast together.

    The rule of ``_tree_goes_left`` in :mod:`._kernels`, elementwise.
    """
    value = np.asarray(value, dtype=np.float64)
    node = np.asarray(node, dtype=np.int64)
    shape = np.broadcast_shapes(node.shape, value.shape)
    miss = node_int[node, 3] != 0
    with np.errstate(invalid="ignore"):
        left = np.where(np.isnan(value), miss, value <= threshold[node])
    left = np.broadcast_to(left, shape).copy()
    cat_row = node_int[node, 4]
    is_cat = np.broadcast_to(cat_row >= 0, shape)
    if is_cat.any():
        nd = np.broadcast_to(node, shape)[is_cat]
        v = np.broadcast_to(value, shape)[is_cat]
        m = node_int[nd, 3] != 0
        # NaN fails both comparisons
        valid = (v >= 0.0) & (v < 256.0)
        code = np.where(valid, v, 0.0).astype(np.int64)
        word = code >> 5
        bit = code & 31
        in_left = (cat_bits[node_int[nd, 4], word] >> bit) & 1
        in_known = (cat_bits[np.maximum(node_int[nd, 5], 0), word] >> bit) & 1
        left[is_cat] = np.where(valid & (in_left != 0), True,
                                np.where(valid & (in_known != 0), False, m))
    return left


def predict_vectorized(roots, node_int, threshold, values, cat_bits, Xm):
    """Sum over trees of the leaf values reached by each row (no offset).

    All (row, tree) pairs descend together, one vectorized step per level.

    Parameters
    ----------
    roots, node_int, threshold, values, cat_bits : ndarray
        Flat trees of a :class:`~._treemodel.TreeModel`.
    Xm : ndarray of shape (n_rows, n_columns)
        Prepared rows (``TreeModel.prepare``).

    Returns
    -------
    out : ndarray of shape (n_rows, n_outputs)
    """
    Xm = np.asarray(Xm, dtype=np.float64)
    n_rows = Xm.shape[0]
    n_trees = roots.shape[0]
    n_out = values.shape[1]
    out = np.zeros((n_rows, n_out), dtype=np.float64)
    # rows per block: the (row, tree) nodes and their leaf values
    block = max(1, kernel_block_cells() // max(1, n_trees * (n_out + 2)))
    for r0 in range(0, n_rows, block):
        X = Xm[r0:r0 + block]
        nb = X.shape[0]
        node = np.repeat(roots[None, :], nb, axis=0).ravel()
        row = np.repeat(np.arange(nb), n_trees)
        live = np.flatnonzero(node_int[node, 0] >= 0)
        while live.size:
            nd = node[live]
            left = _goes_left(nd, X[row[live], node_int[nd, 0]], node_int, threshold,
                              cat_bits)
            nd = np.where(left, node_int[nd, 1], node_int[nd, 2])
            node[live] = nd
            live = live[node_int[nd, 0] >= 0]
        out[r0:r0 + nb] = values[node].reshape(nb, n_trees, n_out).sum(axis=1)
    return out


# -- tree levels ------------------------------------------------------------------
class _Level:
    """The nodes of one depth over all trees, in tree order.

    Attributes
    ----------
    node, tree : ndarray of shape (n,)
        Node ids and their trees; the nodes of the next level are the
        children of ``inner``, left and right in turn.
    inner : ndarray of shape (n_inner,)
        Positions of the split nodes.
    bit : ndarray of shape (n_inner,)
        Slot bit of each split's group on its path.
    leaf : ndarray of shape (n_leaf,)
        Positions of the leaves.
    leaf_groups : ndarray of shape (n_leaf, n_slots)
        Group of each slot of each leaf's path, -1 past its slots.
    """

    __slots__ = ("node", "tree", "inner", "bit", "leaf", "leaf_groups")


def _tree_levels(roots, node_int, col_group):
    """Levels of the trees with the path-local slots of every split.

    Returns the list of :class:`_Level` and the most slots of a path.

    Raises
    ------
    ValueError
        When a root-to-leaf path meets more than ``MAX_PATH_GROUPS`` groups.
    """
    levels = []
    node = np.asarray(roots, dtype=np.int64)
    tree = np.arange(node.shape[0])
    groups = np.empty((node.shape[0], 0), dtype=np.int64)  # slot -> group
    n_slots = np.zeros(node.shape[0], dtype=np.int64)
    while node.size:
        lev = _Level()
        lev.node = node
        lev.tree = tree
        feature = node_int[node, 0]
        lev.inner = np.flatnonzero(feature >= 0)
        lev.leaf = np.flatnonzero(feature < 0)
        lev.leaf_groups = groups[lev.leaf]
        levels.append(lev)
        inner = lev.inner
        if not inner.size:
            break
        g = col_group[feature[inner]]
        gi = groups[inner]
        ni = n_slots[inner]
        match = gi == g[:, None]
        seen = match.any(axis=1)
        slot = np.where(seen, match.argmax(axis=1) if gi.shape[1] else 0, ni)
        ni = ni + ~seen
        if ni.max() > MAX_PATH_GROUPS:
            raise ValueError(
                f"A tree path meets more than {MAX_PATH_GROUPS} distinct groups."
            )
        if ni.max() > gi.shape[1]:
            gi = np.concatenate([gi, np.full((inner.size, 1), -1, dtype=np.int64)],
                                axis=1)
        gi[np.arange(inner.size), slot] = g
        lev.bit = np.left_shift(np.int64(1), slot)
        node = np.stack([node_int[node[inner], 1], node_int[node[inner], 2]],
                        axis=1).ravel()
        tree = np.repeat(tree[inner], 2)
        groups = np.repeat(gi, 2, axis=0)
        n_slots = np.repeat(ni, 2)
    # every leaf's slot -> group map padded to the most slots of a path
    n_max = groups.shape[1]
    for lev in levels:
        pad = np.full((lev.leaf.shape[0], n_max), -1, dtype=np.int64)
        pad[:, :lev.leaf_groups.shape[1]] = lev.leaf_groups
        lev.leaf_groups = pad
    return levels, n_max


def _mask_dtype(n_slots):
    """Smallest unsigned dtype holding ``n_slots`` slot bits and two marker bits.

    At least 16 bits: numpy sorts 8-bit integers about ten times slower.
    """
    for dtype in (np.uint16, np.uint32, np.uint64):
        if n_slots + 2 <= 8 * np.dtype(dtype).itemsize:
            return np.dtype(dtype)
    raise ValueError(f"{n_slots} slots do not fit a 64-bit mask.")


def _tree_chunks(roots, n_nodes, n_all):
    """Bounds of consecutive trees whose nodes times ``n_all`` fit a block.

    A quarter of the kernel block: the patterns of a chunk's leaves are
    sorted and marked in a few arrays of their size.
    """
    sizes = np.diff(np.append(roots, n_nodes))
    budget = max(1, kernel_block_cells() // (4 * max(1, n_all)))
    bounds = [0]
    total = 0
    for t, s in enumerate(sizes):
        if total and total + s > budget:
            bounds.append(t)
            total = 0
        total += s
    bounds.append(sizes.shape[0])
    return list(zip(bounds[:-1], bounds[1:]))


def _goes_left_rows(nodes, cols, nan_cols, node_int, threshold, cat_bits):
    """Whether each row goes left at each node: (n_nodes, n_rows).

    ``cols`` holds the rows column by column; ``nan_cols`` flags the columns
    with a NaN, so that only their splits pay for the missing-value rule.
    """
    f = node_int[nodes, 0]
    vals = cols[f]
    left = vals <= threshold[nodes][:, None]
    nan = np.flatnonzero(nan_cols[f])
    if nan.size:
        left[nan] |= np.isnan(vals[nan]) & (node_int[nodes[nan], 3] != 0)[:, None]
    cat = np.flatnonzero(node_int[nodes, 4] >= 0)
    if cat.size:
        left[cat] = _goes_left(nodes[cat][:, None], vals[cat], node_int, threshold,
                               cat_bits)
    return left


def _leaf_patterns(levels, t0, t1, cols, node_int, threshold, cat_bits, dtype):
    """V of every row at the leaves of trees t0..t1-1.

    Parameters
    ----------
    levels : list of _Level
    t0, t1 : int
    cols : ndarray of shape (n_columns, n_all)
        The rows column by column.
    node_int, threshold, cat_bits : ndarray
    dtype : dtype
        Unsigned dtype of the masks.

    Returns
    -------
    leaf : ndarray of shape (n_leaves,)
        Leaf ids, in level order.
    V : ndarray of shape (n_leaves, n_all)
    groups : ndarray of shape (n_leaves, n_slots)
        Group of each slot of each leaf's path, -1 past its slots.
    """
    n_all = cols.shape[1]
    nan_cols = np.isnan(cols).any(axis=1)
    whole = t0 == 0 and t1 == levels[0].node.shape[0]
    leaves, pats, groups = [], [], []
    V = np.zeros((t1 - t0, n_all), dtype=dtype)
    for lev in levels:
        # the nodes of trees t0..t1-1 in this level, its leaves and splits
        if whole:
            a, la, lb, ia, ib = 0, 0, lev.leaf.shape[0], 0, lev.inner.shape[0]
        else:
            a, b = np.searchsorted(lev.tree, [t0, t1])
            la, lb = np.searchsorted(lev.leaf, [a, b])
            ia, ib = np.searchsorted(lev.inner, [a, b])
        if lb > la:
            pos = lev.leaf[la:lb]
            leaves.append(lev.node[pos])
            pats.append(V[pos - a])
            groups.append(lev.leaf_groups[la:lb])
        if ib == ia:
            break
        pos = lev.inner[ia:ib]
        goes = _goes_left_rows(lev.node[pos], cols, nan_cols, node_int, threshold,
                               cat_bits)
        Vi = V[pos - a]
        bit = lev.bit[ia:ib, None].astype(dtype)
        # the split's bit where a row does not go the child's way
        gb = np.multiply(goes, bit)
        V = np.empty((2 * (ib - ia), n_all), dtype=dtype)
        np.bitwise_or(Vi, gb, out=V[1::2])
        np.bitwise_xor(gb, bit, out=gb)
        np.bitwise_or(Vi, gb, out=V[0::2])
    return np.concatenate(leaves), np.concatenate(pats), np.concatenate(groups)


# -- pairs of patterns -----------------------------------------------------------
def _bit_slots(masks):
    """(entry, slot) of every set bit of the unsigned integer ``masks``.

    One pass per bit rank: the lowest set bit of every mask still non-zero
    is taken off, so the work follows the number of set bits.
    """
    entry = np.flatnonzero(masks)
    m = masks[entry]
    entries, slots = [], []
    while entry.size:
        low = m & (~m + m.dtype.type(1))
        entries.append(entry)
        slots.append(_popcount(low - m.dtype.type(1)))
        m = m ^ low
        more = m != 0
        entry = entry[more]
        m = m[more]
    if not entries:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    return np.concatenate(entries), np.concatenate(slots)


def _ragged(counts):
    """(owner, rank) of the ``counts[i]`` items of every owner i, owners in order."""
    owner = np.repeat(np.arange(counts.shape[0]), counts)
    start = np.cumsum(counts) - counts
    return owner, np.arange(owner.shape[0]) - start[owner]


def _sum_by_key(keys, weights, n_keys):
    """Sums of the rows of ``weights`` (n, w) by ``keys`` in 0..n_keys-1.

    Returns the keys present, increasing, and their sums (n_present, w):
    through a dense bincount when ``n_keys`` is small next to ``n``, through
    a sort otherwise.
    """
    w = weights.shape[1]
    if n_keys <= 4 * keys.shape[0] + 1024:
        present = np.flatnonzero(np.bincount(keys, minlength=n_keys))
    else:
        present, keys = np.unique(keys, return_inverse=True)
        keys = keys.ravel()
        n_keys = present.shape[0]
    if w > 1:
        keys = (keys[:, None] * w + np.arange(w)).ravel()
    sums = np.bincount(keys, weights=weights.ravel(), minlength=n_keys * w)
    sums = sums.reshape(n_keys, w)
    return present, (sums if n_keys == present.shape[0] else sums[present])


def _mark_background(P, lo, hi):
    """Distinct background patterns of each leaf, marked, and their counts.

    Row i of the result holds the distinct patterns of row i of P OR-ed with
    ``lo``, increasing, then repeats marked ``P | lo | hi``. Also returns
    how many rows hold each distinct pattern (same layout, 0 at repeats) and
    the number of distinct patterns of each row.
    """
    m = P.shape[1]
    Ps = np.sort(P, axis=1)
    new = np.empty(Ps.shape, dtype=bool)
    new[:, 0] = True
    np.not_equal(Ps[:, 1:], Ps[:, :-1], out=new[:, 1:])
    marked = Ps | lo
    marked |= (~new).astype(P.dtype) * hi
    # the repeats carry hi, the top bit: sorting moves them last
    marked.sort(axis=1)
    n_distinct = np.count_nonzero(new, axis=1)
    first = np.flatnonzero(new)
    row = first // m
    rank = np.arange(first.shape[0]) - (np.cumsum(n_distinct) - n_distinct)[row]
    count = np.zeros(P.shape, dtype=np.int32)
    count.ravel()[row * m + rank] = np.diff(np.append(first, P.size))
    return marked, count, n_distinct


def _row_classes(B, hi, filler):
    """Distinct patterns (classes) of the explained rows at each leaf.

    Returns the classes of each leaf first, increasing and OR-ed with ``hi``,
    then ``filler``; the number of classes of each leaf; and the class of
    each row. When most rows of a leaf have a pattern of their own, every
    row is its own class instead (``B | hi``, ``n_rows`` classes per leaf,
    and None for the classes of the rows).
    """
    n, m = B.shape
    Bs = np.sort(B, axis=1)
    new = np.empty(Bs.shape, dtype=bool)
    new[:, 0] = True
    np.not_equal(Bs[:, 1:], Bs[:, :-1], out=new[:, 1:])
    if 2 * np.count_nonzero(new) > B.size:
        return B | hi, np.full(n, m), None
    # the radix sort of kind="stable" wins on long rows only
    order = np.argsort(B, axis=1, kind="stable" if m > 32 else None)
    rank = np.cumsum(new, axis=1) - 1
    first = np.flatnonzero(new)
    C = np.full(B.shape, filler, dtype=B.dtype)
    C.ravel()[first - first % m + rank.ravel()[first]] = Bs.ravel()[first] | hi
    cls = np.empty(B.shape, dtype=np.int64)
    np.put_along_axis(cls, order, rank, axis=1)
    return C, rank[:, -1] + 1, cls


def _chunk_sums(Pc, count, Bc, cls, vals, groups, coef_a, coef_b, n_groups, mask):
    """Attributions (not averaged) of a chunk of leaves.

    Parameters
    ----------
    Pc, count : ndarray of shape (n_leaves, n_p)
        Distinct background patterns of each leaf, marked (see
        :func:`_leaf_sums`), and how many background rows have each.
    Bc : ndarray of shape (n_leaves, n_c)
        Distinct patterns of the explained rows (their classes), marked.
    cls : ndarray of shape (n_leaves, n_rows) or None
        Class of each explained row at each leaf; None when class c is row c.
    vals : ndarray of shape (n_leaves, n_outputs)
    groups : ndarray of shape (n_leaves, n_slots)
        Group of each slot, -1 past a leaf's slots.
    coef_a, coef_b : ndarray of shape (n_methods, n_groups + 1, n_groups + 1)
    n_groups : int
    mask : int
        The slot bits of a pattern (without the marks).

    Returns
    -------
    out : ndarray of shape (n_rows * n_methods * n_outputs * n_groups,)
        Flat in the order of the output axes (row, method, output, group).
    """
    n_leaves, n_p = Pc.shape
    n_c = Bc.shape[1]
    n_rows = n_c if cls is None else cls.shape[1]
    n_methods = coef_a.shape[0]
    n_mo = n_methods * vals.shape[1]
    n_slots = max(1, groups.shape[1])
    n_cells = n_rows * n_mo * n_groups
    # the compatible (pattern, class) pairs of each leaf; the marks make
    # repeats and fillers incompatible with everything
    hit = np.flatnonzero((Bc[:, :, None] & Pc[:, None, :]) == 0)
    if not hit.size:
        return np.zeros(n_cells)
    ck, p = np.divmod(hit, n_p)  # class key: leaf * n_c + class
    leaf, c = np.divmod(ck, n_c)
    pat = Pc[leaf, p] & mask
    size_a = _popcount(pat)
    size_b = _popcount(Bc[leaf, c] & mask)
    n_pat = count[leaf, p][:, None]
    # per pair and method, the weight of the groups of P and of B
    wa = coef_a[:, size_a, size_b].T * n_pat
    wb = coef_b[:, size_a, size_b].T * n_pat
    mo = np.arange(n_mo, dtype=np.int64) * n_groups
    width = n_mo * n_groups  # cells of one row
    e, s = _bit_slots(pat)
    # the classes with a compatible pattern and the sums of their B weights
    live, sb = _sum_by_key(ck, wb, n_leaves * n_c)
    e_b, s_b = _bit_slots(Bc.ravel()[live] & mask)
    if cls is None:
        # every row is its own class: the groups of P, then those of B
        l_a = leaf[e]
        l_b, x_b = np.divmod(live[e_b], n_c)
        idx = np.concatenate([c[e] * width + groups[l_a, s],
                              x_b * width + groups[l_b, s_b]])[:, None] + mo
        w = np.concatenate([wa[e][:, :, None] * vals[l_a][:, None, :],
                            sb[e_b][:, :, None] * vals[l_b][:, None, :]])
        return np.bincount(idx.ravel(), weights=w.ravel(), minlength=n_cells)
    # sums per (class, slot): the groups of P, then those of B
    entry, h = _sum_by_key(
        np.concatenate([ck[e] * n_slots + s, live[e_b] * n_slots + s_b]),
        np.concatenate([wa[e], sb[e_b]]), n_leaves * n_c * n_slots,
    )
    e_ck, e_slot = np.divmod(entry, n_slots)
    e_leaf = e_ck // n_c
    # entry values per (method, output), and the group each goes to
    h = (h[:, :, None] * vals[e_leaf][:, None, :]).reshape(entry.shape[0], n_mo)
    e_group = groups[e_leaf, e_slot]
    # every entry of a class to each explained row of the class
    per_ck = np.bincount(e_ck, minlength=n_leaves * n_c)
    row_ck = (np.arange(n_leaves)[:, None] * n_c + cls).ravel()
    i, rank = _ragged(per_ck[row_ck])
    ent = (np.cumsum(per_ck) - per_ck)[row_ck[i]] + rank
    idx = ((i % n_rows) * width + e_group[ent])[:, None] + mo
    return np.bincount(idx.ravel(), weights=h[ent].ravel(), minlength=n_cells)


def _leaf_sums(V, n_bg, vals, groups, coef_a, coef_b, n_groups, budget):
    """Attributions (not averaged) of the leaves of a chunk of trees.

    At each leaf, background rows with the same pattern are taken once (with
    their count), and so are explained rows with the same pattern (a class):
    the compatible (pattern, class) pairs give each class its sums per slot,
    which then go to every explained row of the class. The classes come
    first in each leaf's row, so that a chunk of leaves pairs only as many
    columns as its leaves have classes; leaves are taken in the order of
    their number of classes and chunked to ``budget`` cells.

    Patterns carry two marks above the slot bits, HI and LO: background
    patterns are ``P | LO`` (``P | LO | HI`` when repeated), classes
    ``B | HI`` and fillers ``HI | LO``. Then ``P & B == 0`` is unchanged for
    patterns and classes, and every pair with a repeat or a filler is
    incompatible.
    """
    n_leaves = V.shape[0]
    n_rows = V.shape[1] - n_bg
    dtype = V.dtype
    bits = 8 * dtype.itemsize
    hi = dtype.type(1 << (bits - 1))
    lo = dtype.type(1 << (bits - 2))
    mask = dtype.type(int(lo) - 1)
    Pm, count, n_p = _mark_background(V[:, :n_bg], lo, hi)
    Bc, n_c, cls = _row_classes(V[:, n_bg:], hi, hi | lo)
    order = np.argsort(n_p * n_c, kind="stable")
    # per leaf: its pairs and the expansion of its entries to the rows
    per_leaf = n_rows * max(1, groups.shape[1])
    out = np.zeros(n_rows * coef_a.shape[0] * vals.shape[1] * n_groups)
    start = 0
    while start < n_leaves:
        rest = order[start:]
        cost = np.arange(1, rest.shape[0] + 1) * (
            np.maximum.accumulate(n_p[rest]) * np.maximum.accumulate(n_c[rest])
            + per_leaf)
        stop = max(1, int(np.searchsorted(cost, budget, side="right")))
        sel = rest[:stop]
        up, uc = int(n_p[sel].max()), int(n_c[sel].max())
        out += _chunk_sums(Pm[sel, :up], count[sel, :up], Bc[sel, :uc],
                           None if cls is None else cls[sel], vals[sel], groups[sel],
                           coef_a, coef_b, n_groups, mask)
        start += stop
    return out


def attributions_vectorized(Xm, Zm, col_group, roots, node_int, threshold, values,
                            cat_bits, coef_a, coef_b, n_groups, max_depth=None):
    """Exact leaf-wise attributions of every explained row, with numpy.

    Equal, up to rounding, to ``_tree_attributions_leaf_chunk`` and
    ``_tree_attributions_pairwise`` of :mod:`._kernels`, for any number of
    groups (at most 62 distinct on a root-to-leaf path).

    Parameters
    ----------
    Xm, Zm : ndarray of shape (n_rows, n_columns) and (n_background, n_columns)
        Prepared explained and background rows (``TreeModel.prepare``).
    col_group : ndarray of shape (n_columns,)
        Group of each column (``TreeModel.column_groups``).
    roots, node_int, threshold, values, cat_bits : ndarray
        Flat trees of a :class:`~._treemodel.TreeModel`.
    coef_a, coef_b : ndarray of shape (n_methods, n_groups + 1, n_groups + 1)
        Tables of ``leaf_coefficients`` of every method; only entries with
        ``a + b`` at most the distinct groups of a path are read.
    n_groups : int
    max_depth : int or None
        Not needed (the depth is read from the trees); accepted for the
        kernels' signature.

    Returns
    -------
    attributions : ndarray of shape (n_rows, n_methods, n_outputs, n_groups)
        Averaged over the background.

    Raises
    ------
    ValueError
        When a root-to-leaf path meets more than 62 distinct groups.
    """
    Xm = np.asarray(Xm, dtype=np.float64)
    Zm = np.asarray(Zm, dtype=np.float64)
    col_group = np.asarray(col_group, dtype=np.int64)
    coef_a = np.asarray(coef_a, dtype=np.float64)
    coef_b = np.asarray(coef_b, dtype=np.float64)
    n_groups = int(n_groups)
    n_rows, n_bg = Xm.shape[0], Zm.shape[0]
    n_methods = coef_a.shape[0]
    n_out = values.shape[1]
    levels, n_slots = _tree_levels(roots, node_int, col_group)
    dtype = _mask_dtype(n_slots)
    out = np.zeros((n_rows, n_methods, n_out, n_groups), dtype=np.float64)
    if n_rows == 0 or n_bg == 0:
        return out
    # cells of the pairs of one chunk of leaves, with their per-pair arrays
    budget = max(1, kernel_block_cells() // (8 + 4 * n_methods * n_out))
    # explained rows per block: the pairs of one leaf must fit
    row_block = max(1, budget // (n_bg + max(1, n_slots)))
    for r0 in range(0, n_rows, row_block):
        X = Xm[r0:r0 + row_block]
        nb = X.shape[0]
        # [Z; X] column by column
        cols = np.ascontiguousarray(np.concatenate([Zm, X]).T)
        acc = np.zeros(nb * n_methods * n_out * n_groups)
        for t0, t1 in _tree_chunks(roots, node_int.shape[0], n_bg + nb):
            leaf, V, groups = _leaf_patterns(levels, t0, t1, cols, node_int,
                                             threshold, cat_bits, dtype)
            vals = values[leaf]
            # leaves that no row leaves the path of, or of zero value, add nothing
            keep = V.any(axis=1) & vals.any(axis=1)
            if not keep.all():
                V, vals, groups = V[keep], vals[keep], groups[keep]
            if V.shape[0]:
                acc += _leaf_sums(V, n_bg, vals, groups, coef_a, coef_b, n_groups,
                                  budget)
        out[r0:r0 + nb] = acc.reshape(nb, n_methods, n_out, n_groups)
    out /= n_bg
    return out


def vectorized_work(n_nodes, n_leaves, n_rows, n_background, max_path_groups,
                    n_methods=1, n_outputs=1):
    """Cost estimate of :func:`attributions_vectorized`, for a dispatcher.

    ``n_nodes * (n_rows + n_background)`` for the walk of all rows down the
    trees, plus ``n_leaves * n_rows * n_background * S * (1 + n_methods *
    n_outputs) / 100`` for the (background, explained) pairs of every leaf
    and the slots they add to, with S = ``max(1, max_path_groups)``; only
    compatible pairs cost, a small share of them on real data, hence the
    divisor. Fitted to ``benchmarks/bench_tree_vectorized.py``: a call takes
    about 1.5 ms plus 15 ns per unit (serial), within a factor of 2 in about
    nine cases out of ten.

    Parameters
    ----------
    n_nodes : int
        Nodes over all trees (``node_int.shape[0]``).
    n_leaves : int
        Leaves over all trees (``(node_int[:, 0] < 0).sum()``).
    n_rows, n_background : int
    max_path_groups : int
        Most distinct groups on a root-to-leaf path; ``min(max_depth,
        n_groups)`` bounds it without walking the trees.
    n_methods, n_outputs : int, default=1

    Returns
    -------
    work : float
    """
    walk = float(n_nodes) * (n_rows + n_background)
    pairs = (float(n_leaves) * n_rows * n_background * max(1, int(max_path_groups))
             * (1 + n_methods * n_outputs) / _PAIR_SHARE)
    return walk + pairs


# -- anchored sums ------------------------------------------------------------------
def anchored_sums_vectorized(Xm, Zm, col_group, roots, node_int, threshold, values,
                             cat_bits, masks, same=False):
    """Row and column sums of the output at every hybrid, with numpy.

    The same numbers as ``_tree_anchored_sums_chunk`` of :mod:`._kernels`:
    the hybrid of x and z reaches a leaf iff ``V(x) & S == 0`` and
    ``V(z) <= S``, so a leaf adds ``value * #{z: V(z) <= S}`` to every such x
    and ``value * #{x: V(x) & S == 0}`` to every such z. Masks are over at
    most 62 groups; on each leaf they are read in its path slots.

    Parameters
    ----------
    Xm, Zm : ndarray of shape (n_rows, n_columns) and (n_background, n_columns)
        Prepared rows; with ``same``, Zm is Xm and its rows are walked once.
    col_group : ndarray of shape (n_columns,)
    roots, node_int, threshold, values, cat_bits : ndarray
        Flat trees of a :class:`~._treemodel.TreeModel`.
    masks : ndarray of shape (n_masks,), int64
        Coalitions S as bitmasks over groups.
    same : bool, default=False

    Returns
    -------
    row_sums : ndarray of shape (n_masks, n_outputs, n_rows)
        Sum over background rows (no offset).
    col_sums : ndarray of shape (n_masks, n_outputs, n_background)
        Sum over explained rows (no offset).
    """
    Xm = np.asarray(Xm, dtype=np.float64)
    masks = np.asarray(masks, dtype=np.int64)
    n_rows = Xm.shape[0]
    n_bg = n_rows if same else Zm.shape[0]
    x_off = 0 if same else n_bg
    n_out = values.shape[1]
    n_masks = masks.shape[0]
    rows = np.zeros((n_masks, n_out, n_rows))
    cols_out = np.zeros((n_masks, n_out, n_bg))
    if n_masks == 0 or n_rows == 0 or n_bg == 0:
        return rows, cols_out
    table = Xm if same else np.concatenate([np.asarray(Zm, dtype=np.float64), Xm])
    cols = np.ascontiguousarray(table.T)
    levels, n_slots = _tree_levels(roots, node_int, np.asarray(col_group, dtype=np.int64))
    dtype = _mask_dtype(n_slots)
    n_all = cols.shape[1]
    for t0, t1 in _tree_chunks(roots, node_int.shape[0], n_all):
        leaf, V, groups = _leaf_patterns(levels, t0, t1, cols, node_int, threshold,
                                         cat_bits, dtype)
        vals = values[leaf]
        Vx, Vz = V[:, x_off:], V[:, :n_bg]
        shift = np.maximum(groups, 0)[None]
        used = (groups >= 0)[None]
        bits = np.left_shift(np.ones(groups.shape[1], dtype=dtype),
                             np.arange(groups.shape[1], dtype=dtype))
        # masks per chunk so that the (masks, leaves, rows) tests fit a block
        step = max(1, kernel_block_cells() // max(1, 4 * V.size))
        for i0 in range(0, n_masks, step):
            S = masks[i0:i0 + step]
            # each mask in every leaf's path slots
            inside = ((S[:, None, None] >> shift) & 1) & used
            S_local = (inside.astype(dtype) * bits).sum(axis=2, dtype=dtype)
            ok_x = (Vx[None] & S_local[:, :, None]) == 0
            ok_z = (Vz[None] & ~S_local[:, :, None]) == 0
            n_x = ok_x.sum(axis=2)
            n_z = ok_z.sum(axis=2)
            # (masks, leaves, outputs) weights, summed over the leaves per row
            rows[i0:i0 + step] += np.einsum("mlo,mlr->mor", n_z[:, :, None] * vals[None],
                                            ok_x)
            cols_out[i0:i0 + step] += np.einsum("mlo,mlq->moq",
                                                n_x[:, :, None] * vals[None], ok_z)
    return rows, cols_out


def anchored_work(n_nodes, n_leaves, n_rows, n_background, n_masks):
    """Cost estimate of :func:`anchored_sums_vectorized` (same units as
    :func:`vectorized_work`): the walk of all rows down the trees and, per
    mask, two tests and sums over every leaf and row."""
    n_all = n_rows + n_background
    return float(n_nodes) * n_all + 0.25 * float(n_leaves) * n_all * max(1, n_masks)


# -- background summary -----------------------------------------------------------
def background_leaves_vectorized(Zm, col_group, roots, node_int, threshold, cat_bits,
                                 n_groups):
    """Distinct background patterns and their counts at every leaf, by node.

    The pattern of a background row at a leaf is the bitmask over the groups
    (bit ``col_group[f]``) of the splits on its path that the row does not
    follow. Leaf node ``i`` holds ``pats[ptr[i]:ptr[i + 1]]``, in increasing
    order, with their counts; other nodes hold none.

    Returns
    -------
    ptr : ndarray of int64, shape (n_nodes + 1,)
    pats : ndarray of int16
    counts : ndarray of int32
    """
    n_nodes = node_int.shape[0]
    Zm = np.asarray(Zm, dtype=np.float64)
    n_bg = Zm.shape[0]
    cols = np.ascontiguousarray(Zm.T)
    nan_cols = np.isnan(cols).any(axis=1)
    group_bit = np.left_shift(np.int64(1), np.asarray(col_group, dtype=np.int64))
    keys = []
    for t0, t1 in _tree_chunks(roots, n_nodes, n_bg):
        node = np.asarray(roots[t0:t1], dtype=np.int64)
        V = np.zeros((node.shape[0], n_bg), dtype=np.int64)
        while node.size:
            feature = node_int[node, 0]
            leaf = feature < 0
            if leaf.any():
                keys.append(((node[leaf][:, None] << n_groups) | V[leaf]).ravel())
            inner = ~leaf
            if not inner.any():
                break
            nd = node[inner]
            goes = _goes_left_rows(nd, cols, nan_cols, node_int, threshold, cat_bits)
            bit = group_bit[feature[inner]][:, None]
            Vi = V[inner]
            # left child: the rows going right miss its split; right: the others
            V = np.concatenate([Vi | np.where(goes, 0, bit), Vi | np.where(goes, bit, 0)])
            node = np.concatenate([node_int[nd, 1], node_int[nd, 2]])
    keys, counts = np.unique(np.concatenate(keys) if keys else np.zeros(0, np.int64),
                             return_counts=True)
    leaf = keys >> n_groups
    ptr = np.zeros(n_nodes + 1, dtype=np.int64)
    np.cumsum(np.bincount(leaf, minlength=n_nodes), out=ptr[1:])
    pats = (keys & ((np.int64(1) << n_groups) - 1)).astype(np.int16)
    return ptr, pats, counts.astype(np.int32)
