"""Numba kernels of the decomposition: Möbius transforms and size-weighted sums."""

# SPDX-License-Identifier: BSD-3-Clause

import numpy as np
from numba import njit, prange

from .._numba import popcounts, serial_and_parallel as _serial_and_parallel

__all__ = [
    "moebius_transform",
    "inverse_moebius_transform",
    "size_weighted_attributions",
    "popcounts",
]


def _moebius_body(values, sign):
    # Subset butterfly, O(K 2^K) per row:
    # for each bit j, F[S] -= F[S without j] for S containing j.
    n_rows, n_masks = values.shape
    out = np.empty((n_rows, n_masks), dtype=np.float64)
    n_groups = 0
    while (1 << n_groups) < n_masks:
        n_groups += 1
    for r in prange(n_rows):
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


_moebius_serial, _moebius_parallel = _serial_and_parallel(_moebius_body)


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


def moebius_transform(values, parallel=False):
    """Möbius transform of set functions given as tables over all subsets.

    ``F[r, U] = sum_{S subset of U} (-1)**(|U| - |S|) values[r, S]``.

    Parameters
    ----------
    values : ndarray of shape (n_rows, 2**K)
        Coalition values v(S), one set function per row.
    parallel : bool, default=False
        Use the multi-threaded variant (over rows).

    Returns
    -------
    components : ndarray of shape (n_rows, 2**K)
    """
    values = _check_table(values)
    kernel = _moebius_parallel if parallel else _moebius_serial
    return kernel(values, -1.0)


def inverse_moebius_transform(components, parallel=False):
    """Zeta transform: ``v[r, S] = sum_{U subset of S} F[r, U]``."""
    components = _check_table(components)
    kernel = _moebius_parallel if parallel else _moebius_serial
    return kernel(components, 1.0)


def _weighted_body(components, size_weights):
    # phi_k = sum_{U contains k} w(|U|) F_U  (user guide, "explainers_as_weights")
    n_rows, n_masks = components.shape
    n_groups = 0
    while (1 << n_groups) < n_masks:
        n_groups += 1
    sizes = np.zeros(n_masks, dtype=np.int64)
    for mask in range(1, n_masks):
        sizes[mask] = sizes[mask >> 1] + (mask & 1)
    out = np.zeros((n_rows, n_groups), dtype=np.float64)
    for r in prange(n_rows):
        for s in range(1, n_masks):
            w = size_weights[sizes[s]]
            if w == 0.0:
                continue
            term = w * components[r, s]
            for k in range(n_groups):
                if s & (1 << k):
                    out[r, k] += term
    return out


_weighted_serial, _weighted_parallel = _serial_and_parallel(_weighted_body)


def size_weighted_attributions(components, size_weights, parallel=False):
    """Attributions as weighted sums of components.

    ``phi[r, k] = sum_{U contains k} size_weights[|U|] * components[r, U]``.

    Parameters
    ----------
    components : ndarray of shape (n_rows, 2**K)
    size_weights : ndarray of shape (K + 1,)
        Weight of a component by the size of its subset (entry 0 unused).
    parallel : bool, default=False

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
    kernel = _weighted_parallel if parallel else _weighted_serial
    return kernel(components, size_weights)
