"""Exact grouped decomposition of tree ensembles without model calls.

For an explained row x and a background row z, each tree of a
:class:`TreeModel` is walked along the union of the paths of x and z: a leaf
is reached by the hybrid (x_{G_S}, z_{-G_S}) exactly when S contains the
groups A whose splits sent the path x's way and avoids the groups B that sent
it z's way, and its value enters the interventional component F_U for
A <= U <= A | B with sign (-1)**(|U| - |A|) (the functional decomposition of
Laberge et al., AISTATS 2024, computed on trees as their FD-Trees do; the
same walk over x and z underlies interventional TreeSHAP, Lundberg et al.
2020). Averaged over the background this gives every grouped component, and
every exact attribution, at a cost set by the depth of the trees rather than
by 2**K model calls.

Equivalently, per leaf, let V(r) be the groups whose splits on the path row r
does not follow: the hybrid of x and z reaches the leaf iff V(x) and V(z) are
disjoint, with A = V(z) and B = V(x). The leaf-wise kernels walk each tree
once for all rows together, keeping V of every row along the current path,
and handle rows with equal V once per leaf, so their cost grows with
n_explained + n_background rather than with their product.

Several kernels compute the same numbers; :func:`_choose_kernel` picks one
from the thresholds in :data:`DISPATCH`, each set by
``benchmarks/bench_tree_dispatch.py``. Small problems (few explained rows,
or little work) are served by the numpy functions of :mod:`._vectorized`,
which need no compilation, so that the first call of a process does not
wait for Numba (``benchmarks/bench_tree_vectorized.py``); the choice depends
on the sizes alone.

Every function here gives bit-identical results for any ``n_jobs``. The
kernels are compiled once, serially, and release the GIL; ``n_jobs`` threads
run them on parts of the work. Kernels over explained rows take contiguous
parts of the rows, each row summed over the trees in their order. The
leaf-wise kernels share the trees between threads in chunks (tree ``t`` in
chunk ``t % n_chunks``), sum each chunk apart and add the chunk sums in chunk
order; the number of chunks depends on the model and the width of the
accumulators (:func:`_n_chunks`), never on the threads.
"""

# SPDX-License-Identifier: BSD-3-Clause

from collections.abc import Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache
from math import comb

import numpy as np

from .._config import MAX_MASK_GROUPS, cache_bytes, kernel_block_cells
from .._numba import SERIAL, chunk_sums, kernel_threads, row_parts
from ._vectorized import (
    _popcount,
    anchored_sums_vectorized,
    anchored_work,
    attributions_vectorized,
    background_leaves_vectorized,
    predict_vectorized,
    vectorized_work,
)
from ._kernels import (
    MAX_PATH_GROUPS,
    _ternary_attributions,
    _ternary_components,
    _tree_anchored_sums_chunk,
    _tree_attributions_leaf_chunk,
    _tree_attributions_pairwise,
    _tree_background_leaves,
    _tree_class_attributions_chunk,
    _tree_components_pairwise,
    _tree_predict,
    _tree_ternary_chunk,
)

__all__ = [
    "tree_predict",
    "tree_components",
    "tree_attributions",
    "anchored_sums_tree",
    "explainer_attributions",
    "MAX_TREE_GROUPS",
]

#: Largest number of groups the bitmask kernels accept (one int64 bitmask).
MAX_TREE_GROUPS = MAX_MASK_GROUPS
#: Largest number of groups of the kernels that read a background summary
#: over all 2**K patterns: patterns are int16, and a table of the subsets of
#: every pattern takes 2**(2K - 3) bytes (32 MB at 14 groups). A hard limit,
#: not a speed threshold; the dispatch stays well below it.
_MAX_SUMMARY_GROUPS = 14
# The largest background summary kept between calls (see _background_leaves)
# is skdecomp._config.cache_bytes(); the accumulators of one kernel call keep
# below skdecomp._config.kernel_block_cells() float64 cells, explained rows
# being sent in blocks.

#: Kernels, by the task they serve.
KERNELS = {
    "components": ("pairwise", "ternary"),
    "attributions": ("numpy", "pairwise", "patterns", "ternary", "hashed"),
}


# -- dispatch -------------------------------------------------------------------
@dataclass(frozen=True)
class DispatchThresholds:
    """Where the choice among equivalent kernels changes.

    The kernels (all in :mod:`._kernels`):

    ``pairwise``
        one walk of every tree per (explained, background) pair; the reference.
    ``ternary``
        one walk for all rows, summing leaf values into a table over the
        3**K pairs (A, B) per explained row; components and attributions are
        read off the table.
    ``patterns``
        attributions only: one walk for all rows; per leaf, the attributions
        of each distinct row pattern B, from bitset tables over all 2**K
        patterns.
    ``hashed``
        attributions only: one walk for all rows, per leaf and distinct row
        pattern, without tables over 2**K patterns (any K).
    ``numpy``
        attributions only: the leaf-wise sums of ``hashed`` in numpy array
        operations (:mod:`._vectorized`), which need no compilation; for
        small problems, so that the first call of a process does not wait
        for Numba.

    Every threshold is checked by ``benchmarks/bench_tree_dispatch.py``
    (serial; RandomForestRegressor of 200 trees of depth 10, 200 explained
    and 100 background rows); its docstring has the measured times.
    """

    #: Components: ``ternary`` up to this many groups, ``pairwise`` above.
    #: bench_tree_dispatch "ternary vs pairwise": ternary is 3-25x faster at
    #: K = 8..12, so the bound is memory. It was set when each thread kept
    #: its own 3**K table per explained row (65 tables at K = 10 with 64
    #: threads: 29 MB, and 88 MB at K = 11); the tables are now one per
    #: chunk of trees plus two (see _n_chunks: one chunk at K = 10 unless the
    #: model has about two million nodes), and the threshold was kept.
    ternary_max_groups: int = 10
    #: Attributions: ``patterns`` up to this many groups, ``hashed`` above.
    #: bench_tree_dispatch "patterns vs hashed": patterns is 4x faster at
    #: K = 10..12 and still 2-3x at 13-14; the bound is memory, as the
    #: pattern tables grow 4x per group (2 MB at 12, 32 MB at 14) and the
    #: sums of each chunk of trees 2x (2**K * K floats per method and output).
    patterns_max_groups: int = 12
    #: Attributions with few groups: ``patterns`` while n_methods * n_groups
    #: is at most this, ``ternary`` (whose table serves all methods) above.
    #: bench_tree_dispatch "patterns vs ternary" (times patterns / ternary):
    #: 0.56-1.01 with one method, mostly 1.1-1.8 from methods x K = 15, and
    #: 1.0-1.5 in between (8..12), a small gain on a loaded machine that did
    #: not justify moving the threshold down to 7.
    patterns_max_methods_x_groups: int = 12
    #: ... and ``patterns`` from this many groups on whatever the number of
    #: methods, as the 3**K table outgrows the per-method sums.
    #: bench_tree_dispatch "patterns vs ternary": at K = 8 patterns is
    #: faster with 1 to 4 methods (ratios 0.3-0.9); at K = 7 not always.
    patterns_min_groups: int = 8
    #: Attributions in numpy while :func:`._vectorized.vectorized_work` is at
    #: most this, for at most ``numpy_few_rows`` explained rows; the Numba
    #: kernels above. bench_tree_vectorized: one unit is about 15 ns, so
    #: numpy takes at most about 0.75 s here, where a first call would
    #: compile a kernel for 5-7 s; at a few explained rows warm kernels are
    #: only 1.5-2x faster (they gain from rows sharing a pattern at a leaf,
    #: up to 10x at hundreds of rows). The choice depends on the sizes
    #: alone, never on what is compiled, so a call gives the same numbers
    #: whatever ran before it.
    numpy_max_work: float = 5e7
    #: ... the explained rows of that bound.
    numpy_few_rows: int = 32
    #: ... and numpy for any number of rows while the work is at most this
    #: (about 30 ms).
    numpy_max_work_any: float = 2e6
    #: Anchored sums in numpy while :func:`._vectorized.anchored_work` is at
    #: most this.
    numpy_max_anchored: float = 5e7
    #: Predictions in numpy while rows x trees is at most this
    #: (bench_tree_vectorized: numpy takes 0.6-0.9x the kernel's time from
    #: 100 rows on; the bound keeps its per-level arrays small).
    numpy_max_predict: float = 5e6
    #: The background summary (patterns and counts per leaf) in numpy while
    #: leaves x background rows is at most this, the Numba kernel above.
    #: bench_first_call "summary": numpy sorts the (leaf, pattern) keys, about
    #: 0.05 us per key (0.5 s at the bound), where the kernel compiles for
    #: 2.4 s and then takes about 7 ns per key.
    numpy_max_summary: float = 1e7

    def __post_init__(self):
        limit = _MAX_SUMMARY_GROUPS
        if max(self.ternary_max_groups, self.patterns_max_groups) > limit:
            raise ValueError(f"The summary kernels take at most {limit} groups.")


#: The thresholds in use.
DISPATCH = DispatchThresholds()
#: Largest number of groups for the leaf-wise components (3**K per row).
MAX_LEAF_GROUPS = DISPATCH.ternary_max_groups
#: Largest number of groups of the attribution kernel that sums per distinct
#: row pattern (tables over all 2**K patterns).
MAX_CLASS_GROUPS = DISPATCH.patterns_max_groups


#: Whether small problems may be served in numpy (see :func:`numba_only`).
_NUMPY = {"enabled": True}


@contextmanager
def numba_only():
    """Serve every size with the Numba kernels (to compile them ahead of use)."""
    old = _NUMPY["enabled"]
    _NUMPY["enabled"] = False
    try:
        yield
    finally:
        _NUMPY["enabled"] = old


def _numpy_work(tree_model, n_rows, n_background, n_groups, n_methods=1):
    """The work estimate of the numpy attributions for these sizes."""
    n_leaves = tree_model.n_leaves
    per_path = min(tree_model.max_depth, n_groups)
    return vectorized_work(tree_model.node_int.shape[0], n_leaves, n_rows, n_background,
                           per_path, n_methods, tree_model.n_outputs)


def _choose_kernel(task, n_groups, n_methods=1, all_masks=True, pairwise=False,
                   thresholds=DISPATCH, work=None, n_rows=0):
    """The kernel for a task: one of ``KERNELS[task]``.

    Parameters
    ----------
    task : {"components", "attributions"}
    n_groups : int
    n_methods : int
        Distinct weight vectors asked for (attributions).
    all_masks : bool
        Whether all 2**K components are asked for (components).
    pairwise : bool
        Force the pairwise walk.
    thresholds : DispatchThresholds
    work : float or None
        The numpy work estimate of the attributions (:func:`_numpy_work`);
        None never picks numpy.
    n_rows : int
        Explained rows (attributions).
    """
    t = thresholds
    if pairwise:
        return "pairwise"
    if (task == "attributions" and work is not None and _NUMPY["enabled"]
            and (work <= t.numpy_max_work_any
                 or (n_rows <= t.numpy_few_rows and work <= t.numpy_max_work))):
        return "numpy"
    if task == "components":
        if all_masks and n_groups <= t.ternary_max_groups:
            return "ternary"
        return "pairwise"
    if task != "attributions":
        raise ValueError(f"Unknown task {task!r}.")
    if n_groups <= t.patterns_max_groups and (
        n_methods * n_groups <= t.patterns_max_methods_x_groups
        or n_groups >= t.patterns_min_groups
    ):
        return "patterns"
    if n_groups <= t.ternary_max_groups:
        return "ternary"
    return "hashed"


def _check_kernel(task, kernel):
    if kernel not in KERNELS[task]:
        raise ValueError(f"Unknown {task} kernel {kernel!r}; choose one of {KERNELS[task]}.")


# -- threads --------------------------------------------------------------------
#: Most chunks of trees whose sums the leaf-wise kernels keep apart.
_MAX_TREE_CHUNKS = 8
#: Fewest trees in one chunk.
_MIN_CHUNK_TREES = 4
#: Fewest tree nodes per cell of a row's table in one chunk of the ternary
#: kernel (see _n_chunks).
_NODES_PER_TABLE_CELL = 16


def _n_chunks(tree_model, table_cells=0):
    """Chunks of trees of the leaf-wise kernels; never depends on the threads.

    Tree ``t`` goes to chunk ``t % n_chunks``; each chunk is summed apart and
    the chunk sums are added in chunk order, serially and in parallel alike,
    so that the result does not depend on the number of threads. The number
    of chunks depends on the model alone: one per ``_MIN_CHUNK_TREES`` trees,
    at most ``_MAX_TREE_CHUNKS``. Each chunk clears its accumulators and adds
    them to the result, which costs little next to the walk of its trees
    when every leaf adds to a row about as many cells as the row holds
    (patterns, hashed, anchored sums). A row's ternary table of
    ``table_cells`` cells is far wider than what one leaf adds to it, so
    that kernel takes one chunk per ``_NODES_PER_TABLE_CELL * table_cells``
    tree nodes at most (serially, the walk costs 3-15 ns per node and row;
    clearing and adding a table about 1-2 ns per cell).
    """
    n_trees = tree_model.roots.shape[0]
    n = min(_MAX_TREE_CHUNKS, n_trees // _MIN_CHUNK_TREES)
    if table_cells:
        n_nodes = tree_model.node_int.shape[0]
        n = min(n, n_nodes // (_NODES_PER_TABLE_CELL * table_cells))
    return int(max(1, n))


#: Bytes of the per-row buffers that one call of a leaf-wise kernel walks at
#: every node or leaf (the rows' columns, path patterns and accumulators).
#: Explained rows go to the kernels in blocks that keep these within the
#: processor's caches (2 MB of L2 per core, a shared L3): above it every
#: split streams them from memory, and one call of 100,000 rows took
#: 1.25-1.4 times as long as the same rows in blocks of 4,000-32,000
#: (benchmarks/bench_first_call.py, "blocks"; 4 MB gives blocks of about
#: 9,000 rows of 10 columns).
_BLOCK_BYTES = 4 << 20
#: Fewest rows of such a block.
_MIN_BLOCK_ROWS = 256


def _cache_block_rows(n_columns, max_depth, acc_cells, n_slots):
    """Rows per kernel call that keep its per-row buffers within the caches.

    ``acc_cells`` is the number of float64 accumulator cells per row of one
    chunk of trees; each of the ``n_slots`` chunks walked at once keeps its
    own walk buffers and accumulators. The block does not change any
    result: every row is summed on its own.
    """
    per_row = 8 * (n_columns + acc_cells
                   + n_slots * (2 * (max_depth + 2) + 2 + acc_cells))
    return int(max(_MIN_BLOCK_ROWS, _BLOCK_BYTES // per_row))


def _n_slots(n_chunks, threads):
    """Chunks walked at once, each with its own accumulators.

    One serially; as many as there are threads in parallel (at most the
    number of chunks), whatever the number of threads, each chunk's sum
    is added in chunk order.
    """
    return max(1, min(n_chunks, threads.n_threads))


def _block_sums(tree_model, Xm, block, n_chunks, threads, call, background=None):
    """Chunk sums of a leaf-wise kernel for each block of the explained rows.

    ``call(cols, c)`` runs the kernel on chunk ``c`` of the trees for the
    block's rows column by column (after the rows of ``background`` when
    given) and returns its sums and whether no path met too many groups.
    Yields the rows and the summed chunks of every block, in order.
    """
    for i in range(0, Xm.shape[0], block):
        rows = Xm[i:i + block]
        both = rows if background is None else np.concatenate([background, rows])
        cols = np.ascontiguousarray(both.T)
        total = chunk_sums(lambda c: call(cols, c), n_chunks, threads)
        if total is None:
            raise _too_many_path_groups(tree_model)
        yield rows, total


# -- background summary -----------------------------------------------------------
def _background_leaves(tree_model, Zm, col_group, n_groups):
    """Distinct background patterns and counts at every leaf.

    Returns ``(ptr, pats, counts)``: leaf node ``i`` holds the patterns
    ``pats[ptr[i]:ptr[i + 1]]`` (the groups of the splits on its path that a
    background row does not follow), in increasing order, with their
    counts. Computed in numpy for small models and backgrounds (no
    compilation), by a Numba kernel above ``DISPATCH.numpy_max_summary``;
    both give the same arrays. The summary of the last background and
    partition is kept on the tree model (not pickled), so that repeated
    calls with them walk only the explained rows.
    """
    if n_groups > _MAX_SUMMARY_GROUPS:
        raise ValueError(f"At most {_MAX_SUMMARY_GROUPS} groups, got {n_groups}.")
    cached = tree_model.__dict__.get("_background_leaves")
    if (cached is not None and cached[2] == n_groups
            and np.array_equal(cached[1], col_group)
            and np.array_equal(cached[0], Zm, equal_nan=True)):
        return cached[3]
    arrays = (tree_model.roots, tree_model.node_int, tree_model.threshold,
              tree_model.cat_bits)
    if (_NUMPY["enabled"]
            and tree_model.n_leaves * Zm.shape[0] <= DISPATCH.numpy_max_summary):
        leaves = background_leaves_vectorized(Zm, col_group, *arrays, int(n_groups))
    else:
        ptr, leaf_ids, pats, counts = _tree_background_leaves(
            Zm, col_group, *arrays, int(n_groups), tree_model.max_depth)
        leaves = _by_node(ptr, leaf_ids, pats, counts, tree_model.node_int.shape[0])
    if sum(a.nbytes for a in leaves) <= cache_bytes():
        tree_model._background_leaves = (Zm.copy(), col_group.copy(), n_groups, leaves)
    return leaves


def _by_node(ptr, leaf_ids, pats, counts, n_nodes):
    """A summary in walk order (the i-th leaf is node ``leaf_ids[i]``), by node."""
    sizes = np.diff(ptr)
    order = np.argsort(leaf_ids, kind="stable")
    new_ptr = np.zeros(n_nodes + 1, dtype=np.int64)
    per_node = np.zeros(n_nodes, dtype=np.int64)
    per_node[leaf_ids] = sizes
    np.cumsum(per_node, out=new_ptr[1:])
    # positions in walk order of the entries, leaf by leaf in node order
    starts = np.repeat(ptr[:-1][order] - new_ptr[leaf_ids[order]], sizes[order])
    take = starts + np.arange(starts.shape[0])
    return new_ptr, pats[take], counts[take]


@lru_cache(maxsize=_MAX_SUMMARY_GROUPS + 1)
def _subset_tables(n_groups):
    """Tables of the summary kernels over all 2**K masks (read-only, kept).

    ``down[M]``: the bitset (64 masks a word) of the subsets of M;
    ``n_bits[M]``: the size of M; ``bits[M, k]``: 1.0 when group k is in M.
    """
    n_masks = 1 << n_groups
    masks = np.arange(n_masks, dtype=np.int64)
    # subset[M, B] = B <= M: the K-th Kronecker power of [[1, 0], [1, 1]]
    subset = np.ones((1, 1), dtype=np.uint8)
    for _ in range(n_groups):
        subset = np.kron(np.array([[1, 0], [1, 1]], dtype=np.uint8), subset)
    if n_masks < 64:
        subset = np.pad(subset, ((0, 0), (0, 64 - n_masks)))
    down = np.packbits(subset, axis=1, bitorder="little")
    down = np.ascontiguousarray(down).view("<u8").astype(np.uint64)
    n_bits = _popcount(masks)
    bits = ((masks[:, None] >> np.arange(n_groups)) & 1).astype(np.float64)
    for table in (down, n_bits, bits):
        table.flags.writeable = False
    return down, n_bits, bits


# -- evaluation -----------------------------------------------------------------
def _check_groups(col_group):
    n_groups = int(col_group.max(initial=-1)) + 1
    if n_groups > MAX_TREE_GROUPS:
        raise ValueError(
            f"{n_groups} groups are more than the tree path's bitmasks hold "
            f"(at most {MAX_TREE_GROUPS}); merge columns into fewer groups."
        )
    return n_groups


def tree_predict(tree_model, X, n_jobs=None):
    """Model output recomputed from the flat trees: (n_rows, n_outputs).

    Each row sums the trees in their order, so the result is bit-identical
    for any ``n_jobs``.
    """
    Xm = tree_model.prepare(X)
    if (_NUMPY["enabled"]
            and Xm.shape[0] * tree_model.roots.shape[0] <= DISPATCH.numpy_max_predict):
        out = predict_vectorized(tree_model.roots, tree_model.node_int,
                                 tree_model.threshold, tree_model.values,
                                 tree_model.cat_bits, Xm)
        return out + tree_model.offset[None, :]
    arrays = tree_model.arrays()
    with kernel_threads(n_jobs) as threads:
        out = row_parts(lambda r0, r1: _tree_predict(Xm[r0:r1], *arrays),
                        Xm.shape[0], threads)
    return out + tree_model.offset[None, :]


def tree_components(tree_model, X, Z, labels, n_groups, masks=None, n_jobs=None,
                    pairwise=False, kernel=None):
    """Grouped interventional components F_U(x) from the trees.

    Parameters
    ----------
    tree_model : TreeModel
    X, Z : array-like or DataFrame
        Explained rows and background rows, in the model's input format.
    labels : ndarray of shape (n_features,)
        Group of each input column.
    n_groups : int
    masks : ndarray of int or None
        Subsets U to return (bitmasks). None returns all ``2**n_groups``
        subsets in mask order.
    n_jobs : int or None
        Threads (None or 1: serial). The result is bit-identical for any
        value.
    pairwise : bool, default=False
        Walk the trees once per (explained, background) pair (same result;
        kept as a reference). Same as ``kernel="pairwise"``.
    kernel : {"pairwise", "ternary"} or None, default=None
        Force a kernel (benchmarks and tests); None lets
        :func:`_choose_kernel` pick it. "ternary" needs ``masks=None``.

    Returns
    -------
    components : ndarray of shape (n_rows, n_outputs, n_masks)
        ``F_U(x)`` averaged over the background; ``F_{}`` is the mean output
        over the background.
    """
    col_group = tree_model.column_groups(labels)
    if n_groups > MAX_TREE_GROUPS:
        _check_groups(np.array([n_groups - 1]))
    if masks is None:
        masks = np.arange(1 << n_groups, dtype=np.int64)
        dense = True
    else:
        masks = np.asarray(masks, dtype=np.int64)
        order = np.argsort(masks, kind="stable")
        dense = False
    if kernel is None:
        kernel = _choose_kernel("components", n_groups, all_masks=dense, pairwise=pairwise)
    _check_kernel("components", kernel)
    if kernel == "ternary" and not dense:
        raise ValueError("The ternary kernel returns all 2**n_groups components; pass masks=None.")
    max_order = int(max((int(m).bit_count() for m in masks), default=0))
    Xm, Zm = tree_model.prepare(X), tree_model.prepare(Z)
    sorted_masks = masks if dense else masks[order]
    arrays = tree_model.arrays()
    with kernel_threads(n_jobs) as threads:
        if kernel == "ternary":
            F = _ternary(tree_model, Xm, Zm, col_group, n_groups, threads,
                         lambda table: _ternary_components(table, int(n_groups),
                                                           Zm.shape[0]))
        else:
            F = row_parts(lambda r0, r1: _tree_components_pairwise(
                Xm[r0:r1], Zm, col_group, *arrays, sorted_masks, dense, max_order,
                tree_model.max_depth), Xm.shape[0], threads)
    if not dense:
        out = np.empty_like(F)
        out[:, :, order] = F
        F = out
    empty = masks == 0
    if empty.any():
        F[:, :, empty] += tree_model.offset[None, :, None]
    return F


def _ternary(tree_model, Xm, Zm, col_group, n_groups, threads, read):
    """``read(table)`` of the leaf values summed by (V(z), V(x)), by rows.

    The table of a part of the explained rows has shape (n_outputs,
    3**n_groups, n_part_rows) and comes from the leaf-wise kernel; ``read``
    turns it into one result per row (components or attributions), and the
    results are joined. Blocks of rows keep the tables, with those of the
    chunks walked at once, below ``kernel_block_cells()``. With fewer chunks
    than threads the threads share the rows instead, each part summed over
    the chunks in chunk order and read on its thread; either way every sum
    is the same.
    """
    tern = np.zeros(1 << n_groups, dtype=np.int64)
    for k in range(n_groups):
        tern[1 << k:2 << k] = tern[: 1 << k] + 3**k
    cells = 3**n_groups * tree_model.n_outputs
    n_chunks = _n_chunks(tree_model, cells)
    by_rows = n_chunks < threads.n_threads
    n_slots = threads.n_threads if by_rows else _n_slots(n_chunks, threads)
    # the output table of a block and two tables per chunk walked at once
    block = max(1, kernel_block_cells() // ((2 * n_slots + 1) * cells))
    ptr, pats, counts = _background_leaves(tree_model, Zm, col_group, n_groups)
    down, _, _ = _subset_tables(n_groups)
    arrays = tree_model.arrays()
    n_bg = Zm.shape[0]

    def table(rows, chunk_threads):
        cols = np.ascontiguousarray(rows.T)
        return chunk_sums(
            lambda c: _tree_ternary_chunk(
                cols, n_bg, col_group, *arrays, ptr, pats, counts, tern, down,
                tree_model.max_depth, c, n_chunks),
            n_chunks, chunk_threads)

    parts = []
    for i in range(0, Xm.shape[0], block):
        rows = Xm[i:i + block]
        if by_rows:
            parts.append(row_parts(lambda r0, r1: read(table(rows[r0:r1], SERIAL)),
                                   rows.shape[0], threads))
        else:
            whole = table(rows, threads)
            parts.append(row_parts(lambda r0, r1: read(whole[:, :, r0:r1]),
                                   rows.shape[0], threads))
    if not parts:
        return read(np.zeros((tree_model.n_outputs, 3**n_groups, 0)))
    return np.concatenate(parts)


def _exact(w):
    f = Fraction(float(w))
    g = f.limit_denominator(1 << 20)
    return g if abs(float(g) - float(w)) <= 1e-15 * abs(float(w)) else f


def leaf_coefficients(weights, n_groups, max_size=None):
    """Tables turning a leaf (A, B) into attributions for size weights w.

    ``coef_a[a, b] = sum_t C(b, t) (-1)**t w(a + t)`` for members of A and
    ``coef_b[a, b] = sum_{t>=1} C(b-1, t-1) (-1)**t w(a + t)`` for members of
    B, computed in exact rational arithmetic, for ``a + b`` up to
    ``max_size`` (default ``n_groups``; the tables have shape
    ``(max_size + 1, max_size + 1)``). A leaf at depth d meets at most d
    groups, so the tree's depth bounds what is read.
    """
    size = n_groups if max_size is None else min(int(max_size), n_groups)
    w = [_exact(x) for x in np.asarray(weights, dtype=np.float64)[: size + 1]]
    coef_a = np.zeros((size + 1, size + 1))
    coef_b = np.zeros((size + 1, size + 1))
    for a in range(size + 1):
        for nb in range(size + 1 - a):
            ca = sum(
                (comb(nb, t) * (-1) ** t * w[a + t] for t in range(nb + 1) if a + t >= 1),
                Fraction(0),
            )
            cb = sum(
                (comb(nb - 1, t - 1) * (-1) ** t * w[a + t] for t in range(1, nb + 1)),
                Fraction(0),
            )
            coef_a[a, nb] = float(ca)
            coef_b[a, nb] = float(cb)
    return coef_a, coef_b


def _check_weights(weights, n_groups):
    """The size weights as a dict name -> float64 array of shape (n_groups + 1,)."""
    if not isinstance(weights, Mapping):
        raise TypeError(
            "weights must map each method's name to its size weights w(|U|), "
            f"an array of shape (n_groups + 1,); got {type(weights).__name__}."
        )
    out = {}
    for name, w in weights.items():
        w = np.asarray(w, dtype=np.float64)
        if w.shape != (n_groups + 1,):
            raise ValueError(
                f"The size weights of {name!r} have shape {w.shape}; expected "
                f"({n_groups + 1},), one weight per subset size 0..{n_groups}."
            )
        out[name] = w
    return out


def _too_many_path_groups(tree_model):
    return ValueError(
        f"A root-to-leaf path of {tree_model.description} splits on more than "
        f"{MAX_PATH_GROUPS} groups, more than the tree path handles; merge columns "
        "into fewer groups or limit the depth of the trees (max_depth)."
    )


def tree_attributions(tree_model, X, Z, labels, n_groups, weights, n_jobs=None,
                      pairwise=False, kernel=None):
    """Exact attributions from the trees, without the 2**K components.

    An exact attribution is ``phi_k = sum over U containing k of w(|U|) F_U``
    for size weights w (for example w(s) = 1/s for Shapley values).

    Parameters
    ----------
    tree_model : TreeModel
    X, Z : array-like or DataFrame
        Explained rows and background rows, in the model's input format.
    labels : ndarray of shape (n_features,)
        Group of each input column.
    n_groups : int
    weights : dict
        Name -> ndarray of shape (n_groups + 1,): the weight w(s) of a
        component of s groups, for s = 0..n_groups (w(0) is not used). Each
        entry is computed as given: callers merge aliases of one method.
    n_jobs : int or None
        Threads (None or 1: serial). The result is bit-identical for any
        value.
    pairwise : bool, default=False
        Walk the trees once per (explained, background) pair instead of once
        for all rows, with equal violation patterns merged per leaf (same
        result; kept as a reference). Same as ``kernel="pairwise"``.
    kernel : {"numpy", "pairwise", "patterns", "ternary", "hashed"} or None, \
            default=None
        Force a kernel (benchmarks and tests); None lets
        :func:`_choose_kernel` pick it.

    Returns
    -------
    attributions : dict
        Name -> ndarray of shape (n_rows, n_outputs, n_groups).
    """
    col_group = tree_model.column_groups(labels)
    weights = _check_weights(weights, n_groups)
    names = list(weights)
    n_methods = len(names)
    Xm, Zm = tree_model.prepare(X), tree_model.prepare(Z)
    if kernel is None:
        work = _numpy_work(tree_model, Xm.shape[0], Zm.shape[0], n_groups, n_methods)
        kernel = _choose_kernel("attributions", n_groups, n_methods=n_methods,
                                pairwise=pairwise, work=work, n_rows=Xm.shape[0])
    _check_kernel("attributions", kernel)
    local = kernel in ("hashed", "numpy")
    if not local and n_groups > MAX_TREE_GROUPS:
        _check_groups(np.array([n_groups - 1]))
    # the leaf-wise sums read a leaf's groups only: at most one per split
    max_size = min(tree_model.max_depth, MAX_PATH_GROUPS) if local else None
    tables = [leaf_coefficients(weights[m], n_groups, max_size) for m in names]
    coef_a = np.ascontiguousarray(np.stack([t[0] for t in tables]))
    coef_b = np.ascontiguousarray(np.stack([t[1] for t in tables]))
    if kernel == "numpy":
        try:
            phi = attributions_vectorized(Xm, Zm, col_group, *tree_model.arrays(),
                                          coef_a, coef_b, int(n_groups))
        except ValueError:
            # a path with more groups than the path slots hold (the same
            # bound as the hashed kernel's)
            raise _too_many_path_groups(tree_model) from None
        return {m: phi[:, i] for i, m in enumerate(names)}
    arrays = tree_model.arrays()
    n_bg = Zm.shape[0]
    n_out = tree_model.n_outputs
    depth = tree_model.max_depth
    with kernel_threads(n_jobs) as threads:
        if kernel == "pairwise":
            phi = row_parts(lambda r0, r1: _tree_attributions_pairwise(
                Xm[r0:r1], Zm, col_group, *arrays, coef_a, coef_b, int(n_groups), depth),
                Xm.shape[0], threads)
        elif kernel == "patterns":
            phi = _patterns_attributions(tree_model, Xm, Zm, col_group, n_groups,
                                         coef_a, coef_b, threads)
        elif kernel == "ternary":
            phi = _ternary(tree_model, Xm, Zm, col_group, n_groups, threads,
                           lambda table: _ternary_attributions(
                               table, coef_a, coef_b, int(n_groups), n_bg))
        else:
            n_chunks = _n_chunks(tree_model)
            n_slots = _n_slots(n_chunks, threads)
            # rows per kernel call, bounding the per-row accumulators and the
            # per-chunk tables and walk buffers
            width = n_groups * n_methods * n_out
            per_row = ((2 * n_slots + 1) * width + 2 * n_slots * (depth + 2))
            block = max(1, min(kernel_block_cells() // per_row, _cache_block_rows(
                Xm.shape[1], depth, width, n_slots)))
            parts = [
                total.reshape(rows.shape[0], n_groups, n_methods, n_out)
                .transpose(0, 2, 3, 1) / n_bg
                for rows, total in _block_sums(
                    tree_model, Xm, block, n_chunks, threads,
                    lambda cols, c: _tree_attributions_leaf_chunk(
                        cols, n_bg, col_group, *arrays, coef_a, coef_b, int(n_groups),
                        depth, c, n_chunks),
                    background=Zm)
            ]
            phi = (np.concatenate(parts) if parts
                   else np.zeros((0, n_methods, n_out, n_groups)))
    return {m: phi[:, i] for i, m in enumerate(names)}


def _patterns_attributions(tree_model, Xm, Zm, col_group, n_groups, coef_a, coef_b,
                           threads):
    """Attributions of the ``patterns`` kernel: (n_rows, n_methods, n_outputs, n_groups)."""
    n_methods = coef_a.shape[0]
    n_out = tree_model.n_outputs
    n_chunks = _n_chunks(tree_model)
    n_slots = _n_slots(n_chunks, threads)
    n_q = n_groups * n_methods * n_out
    block = max(1, min(kernel_block_cells() // ((n_slots + 1) * n_q), _cache_block_rows(
        Xm.shape[1], tree_model.max_depth, n_q, n_slots)))
    ptr, pats, counts = _background_leaves(tree_model, Zm, col_group, n_groups)
    down, n_bits, bits = _subset_tables(n_groups)
    arrays = tree_model.arrays()
    n_bg = Zm.shape[0]
    parts = [
        (total / n_bg).reshape(rows.shape[0], n_methods, n_out, n_groups)
        for rows, total in _block_sums(
            tree_model, Xm, block, n_chunks, threads,
            lambda cols, c: _tree_class_attributions_chunk(
                cols, n_bg, col_group, *arrays, ptr, pats, counts, coef_a, coef_b,
                int(n_groups), tree_model.max_depth, down, n_bits, bits, c, n_chunks))
    ]
    if not parts:
        return np.zeros((0, n_methods, n_out, n_groups))
    return np.concatenate(parts)


def anchored_sums_tree(tree_model, X, Z, labels, masks, n_jobs=None):
    """Row and column sums of the model output at every hybrid, from the trees.

    For every mask S, the sums over background rows and over explained rows
    of ``f(x^n_{G_S}, z^m_{-G_S})`` (the tree-path counterpart of summing
    ``coalition_values(..., average=False)`` over each axis). Every tree is
    walked once for all rows; the N x N hybrid values are never formed, so
    memory is O(n_masks * (n_rows + n_background)).

    Parameters
    ----------
    tree_model : TreeModel
    X, Z : array-like, DataFrame or Table
        Explained rows and background rows, in the model's input format.
    labels : ndarray of shape (n_features,)
        Group of each input column.
    masks : ndarray of int
        Coalitions S as bitmasks over groups.
    n_jobs : int or None
        Threads (None or 1: serial). The result is bit-identical for any
        value.

    Returns
    -------
    row_sums : ndarray of shape (n_masks, n_outputs, n_rows)
        Sum over background rows of ``f(x^n_{G_S}, z^m_{-G_S})``.
    col_sums : ndarray of shape (n_masks, n_outputs, n_background)
        Sum over explained rows.
    """
    col_group = tree_model.column_groups(labels)
    _check_groups(np.asarray(labels, dtype=np.int64))
    masks = np.ascontiguousarray(masks, dtype=np.int64)
    same = X is Z
    Xm = tree_model.prepare(X)
    Zm = Xm if same else tree_model.prepare(Z)
    work = anchored_work(tree_model.node_int.shape[0], tree_model.n_leaves, Xm.shape[0],
                         0 if same else Zm.shape[0], masks.shape[0])
    if _NUMPY["enabled"] and work <= DISPATCH.numpy_max_anchored:
        rows, cols = anchored_sums_vectorized(Xm, Zm, col_group, *tree_model.arrays(),
                                              masks, same=same)
        rows += Zm.shape[0] * tree_model.offset[None, :, None]
        cols += Xm.shape[0] * tree_model.offset[None, :, None]
        return rows, cols
    n_rows, n_bg = Xm.shape[0], Zm.shape[0]
    x_off = 0 if same else n_bg
    cols = np.ascontiguousarray((Xm if same else np.concatenate([Zm, Xm])).T)
    n_chunks = _n_chunks(tree_model)
    n_out = tree_model.n_outputs
    n_masks = masks.shape[0]
    arrays = tree_model.arrays()
    with kernel_threads(n_jobs) as threads:
        total = chunk_sums(
            lambda c: _tree_anchored_sums_chunk(
                cols, n_bg, x_off, col_group, *arrays, masks, tree_model.max_depth, c,
                n_chunks),
            n_chunks, threads)
    total = total.reshape(n_rows + n_bg, n_masks, n_out).transpose(1, 2, 0)
    rows = np.ascontiguousarray(total[:, :, :n_rows])
    cols = np.ascontiguousarray(total[:, :, n_rows:])
    rows += Zm.shape[0] * tree_model.offset[None, :, None]
    cols += Xm.shape[0] * tree_model.offset[None, :, None]
    return rows, cols


def explainer_attributions(tree_model, X, background, labels, n_groups, weights,
                           n_jobs=None):
    """:func:`tree_attributions` in the Explainer's layout.

    Parameters
    ----------
    weights : dict
        Name -> size weights of shape (n_groups + 1,), as for
        :func:`tree_attributions`.

    Returns
    -------
    attributions : dict
        Name -> ndarray of shape (n_rows, n_groups), or
        (n_rows, n_groups, n_outputs) for several outputs.
    """
    phi = tree_attributions(tree_model, X, background, labels, n_groups, weights, n_jobs)
    out = {}
    for m, p in phi.items():
        p = np.moveaxis(p, 1, -1)
        out[m] = p[..., 0] if p.shape[-1] == 1 else p
    return out
