"""Numba kernels of the decomposition: Möbius transforms and size-weighted sums."""

# SPDX-License-Identifier: BSD-3-Clause

import numpy as np
from numba import njit

from .._numba import kernel_threads, popcounts, row_parts

__all__ = [
    "moebius_transform",
    "inverse_moebius_transform",
    "size_weighted_attributions",
    "popcounts",
]


@njit(cache=True, nogil=True)
def _moebius(values, sign):
    # Subset butterfly, O(K 2^K) per row:
    # for each bit j, F[S] -= F[S without j] for S containing j.
    n_rows, n_masks = values.shape
    out = np.empty((n_rows, n_masks), dtype=np.float64)
    n_groups = 0
    while (1 << n_groups) < n_masks:
        n_groups += 1
    for r in range(n_rows):
        buf = np.empty(n_masks, dtype=np.float64)
        for s in range(n_masks):
            buf[s] = values[r, s]
        for j in range(n_groups):
            bit = 1 << j
            for s in range(n_masks):
                if s & bit:
                    buf[s] += sign * buf[s ^ bit]
        for s in range(n_masks):
            out[r, s] = buf[s]
    return out



def _check_table(values):
    values = np.ascontiguousarray(values, dtype=np.float64)
    if values.ndim != 2:
        raise ValueError("values must be 2-D (n_rows, 2**n_groups).")
    n_masks = values.shape[1]
    if n_masks < 1 or n_masks & (n_masks - 1):
        raise ValueError(
            f"values has {n_masks} columns; a table over all subsets of K "
            "groups has 2**K columns."
        )
    return values


def _by_rows(kernel, table, arg, n_jobs):
    """``kernel(table, arg)`` on parts of the rows, on ``n_jobs`` threads."""
    with kernel_threads(n_jobs) as threads:
        return row_parts(lambda r0, r1: kernel(table[r0:r1], arg), table.shape[0],
                         threads)


def moebius_transform(values, n_jobs=None):
    """Möbius transform of set functions given as tables over all subsets.

    ``F[r, U] = sum_{S subset of U} (-1)**(|U| - |S|) values[r, S]``.

    Parameters
    ----------
    values : ndarray of shape (n_rows, 2**K)
        Coalition values v(S), one set function per row.
    n_jobs : int or None, default=None
        Threads over the rows (None or 1: serial); the result is the same.

    Returns
    -------
    components : ndarray of shape (n_rows, 2**K)
    """
    return _by_rows(_moebius, _check_table(values), -1.0, n_jobs)


def inverse_moebius_transform(components, n_jobs=None):
    """Zeta transform: ``v[r, S] = sum_{U subset of S} F[r, U]``."""
    return _by_rows(_moebius, _check_table(components), 1.0, n_jobs)


@njit(cache=True, nogil=True)
def _weighted(components, size_weights):
    # phi_k = sum_{U contains k} w(|U|) F_U  (user guide, "explainers_as_weights")
    n_rows, n_masks = components.shape
    n_groups = 0
    while (1 << n_groups) < n_masks:
        n_groups += 1
    sizes = np.zeros(n_masks, dtype=np.int64)
    for mask in range(1, n_masks):
        sizes[mask] = sizes[mask >> 1] + (mask & 1)
    out = np.zeros((n_rows, n_groups), dtype=np.float64)
    for r in range(n_rows):
        for s in range(1, n_masks):
            w = size_weights[sizes[s]]
            if w == 0.0:
                continue
            term = w * components[r, s]
            for k in range(n_groups):
                if s & (1 << k):
                    out[r, k] += term
    return out



def size_weighted_attributions(components, size_weights, n_jobs=None):
    """Attributions as weighted sums of components.

    ``phi[r, k] = sum_{U contains k} size_weights[|U|] * components[r, U]``.

    Parameters
    ----------
    components : ndarray of shape (n_rows, 2**K)
    size_weights : ndarray of shape (K + 1,)
        Weight of a component by the size of its subset (entry 0 unused).
    n_jobs : int or None, default=None
        Threads over the rows (None or 1: serial); the result is the same.

    Returns
    -------
    attributions : ndarray of shape (n_rows, K)
    """
    components = _check_table(components)
    size_weights = np.ascontiguousarray(size_weights, dtype=np.float64)
    n_groups = components.shape[1].bit_length() - 1
    if size_weights.shape != (n_groups + 1,):
        raise ValueError(
            f"size_weights must have shape ({n_groups + 1},), got "
            f"{size_weights.shape}."
        )
    return _by_rows(_weighted, components, size_weights, n_jobs)
