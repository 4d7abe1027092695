"""Numba kernels of skdecomp.

Every kernel takes arrays, allocates and returns its output and never writes
into its inputs (read-only inputs are fine). Coalitions of K groups are encoded
as integer bitmasks: bit k of mask S is set when group k is in S, and a table
over all subsets has 2**K entries indexed by mask.

This module imports nothing from the package.
"""

# SPDX-License-Identifier: BSD-3-Clause

import numpy as np
from numba import njit, prange

__all__ = [
    "moebius_transform",
    "inverse_moebius_transform",
    "size_weighted_attributions",
    "popcounts",
    "mean_over_background",
    "anchored_means",
    "interaction_potentials",
    "pair_interaction_strengths",
]


@njit(cache=True)
def popcounts(n_groups):
    """Number of set bits of every mask in ``range(2**n_groups)``."""
    n_masks = 1 << n_groups
    out = np.zeros(n_masks, dtype=np.int64)
    for mask in range(1, n_masks):
        out[mask] = out[mask >> 1] + (mask & 1)
    return out


def _moebius_body(values, sign):
    # Subset butterfly, O(K 2^K) per row (paper-spec §1.2 "Cost"):
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


_moebius_serial = njit(_moebius_body, cache=True)
_moebius_parallel = njit(_moebius_body, cache=True, parallel=True)


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
    # phi_k = sum_{U contains k} w(|U|) F_U  (paper-spec §2.1)
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


_weighted_serial = njit(_weighted_body, cache=True)
_weighted_parallel = njit(_weighted_body, cache=True, parallel=True)


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


@njit(cache=True)
def mean_over_background(predictions, n_background):
    """Average consecutive blocks of ``n_background`` rows.

    Parameters
    ----------
    predictions : ndarray of shape (n_pairs * n_background, n_outputs)

    Returns
    -------
    means : ndarray of shape (n_pairs, n_outputs)
    """
    n_rows, n_outputs = predictions.shape
    n_pairs = n_rows // n_background
    out = np.zeros((n_pairs, n_outputs), dtype=np.float64)
    for p in range(n_pairs):
        base = p * n_background
        for m in range(n_background):
            for o in range(n_outputs):
                out[p, o] += predictions[base + m, o]
        for o in range(n_outputs):
            out[p, o] /= n_background
    return out


@njit(cache=True)
def anchored_means(values, anchor_values):
    """Row and column means of anchored N x N matrices (paper-spec §1.2, §4.2).

    The matrix of coalition ``k`` and output ``o`` is
    ``G[n, m] = values[n, k, m, o] - anchor_values[m, o]``, i.e.
    ``f(x^n_{G_S}, z^m_{-G_S}) - f(z^m)``.

    Parameters
    ----------
    values : ndarray of shape (n_rows, n_masks, n_anchors, n_outputs)
        Anchored model outputs.
    anchor_values : ndarray of shape (n_anchors, n_outputs)
        Model output at every anchor row, f(z^m).

    Returns
    -------
    rows : ndarray of shape (n_masks, n_outputs, n_rows)
        Mean over anchors, the pure (PDP) effect at every row.
    cols : ndarray of shape (n_masks, n_outputs, n_anchors)
        Mean over rows, minus the full (PFI) effect at every anchor.
    """
    n_rows, n_masks, n_anchors, n_outputs = values.shape
    rows = np.zeros((n_masks, n_outputs, n_rows), dtype=np.float64)
    cols = np.zeros((n_masks, n_outputs, n_anchors), dtype=np.float64)
    anchor_mean = np.zeros(n_outputs, dtype=np.float64)
    for m in range(n_anchors):
        for o in range(n_outputs):
            anchor_mean[o] += anchor_values[m, o]
    for o in range(n_outputs):
        anchor_mean[o] /= n_anchors
    for n in range(n_rows):
        for k in range(n_masks):
            for m in range(n_anchors):
                for o in range(n_outputs):
                    v = values[n, k, m, o]
                    rows[k, o, n] += v
                    cols[k, o, m] += v
    for k in range(n_masks):
        for o in range(n_outputs):
            for n in range(n_rows):
                rows[k, o, n] = rows[k, o, n] / n_anchors - anchor_mean[o]
            for m in range(n_anchors):
                cols[k, o, m] = cols[k, o, m] / n_rows - anchor_values[m, o]
    return rows, cols


@njit(cache=True)
def interaction_potentials(rows, cols):
    """Interaction potentials Psi from row and column means (paper-spec §2.5).

    ``Psi[k] = sum_o mean_n (rows[k, o, n] + cols[k, o, n]) ** 2``, the mean
    squared gap between the PDP and PFI effects of group k.

    Parameters
    ----------
    rows, cols : ndarray of shape (n_groups, n_outputs, n_samples)

    Returns
    -------
    potentials : ndarray of shape (n_groups,)
    """
    n_groups, n_outputs, n_samples = rows.shape
    out = np.zeros(n_groups, dtype=np.float64)
    for k in range(n_groups):
        acc = 0.0
        for o in range(n_outputs):
            for n in range(n_samples):
                gap = rows[k, o, n] + cols[k, o, n]
                acc += gap * gap
        out[k] = acc / n_samples
    return out


@njit(cache=True)
def pair_interaction_strengths(rows, cols, pair_rows, pair_cols, pairs):
    """Pairwise interaction strengths from anchored row and column means.

    For a pair p = (i, j) the anchored interaction matrix is
    ``I = G_{i u j} - G_i - G_j`` (paper-spec §4.2). Its row means are the
    pure pair components F_ij(x^n) and its column means the full ones
    ``sum_{V contains i, j} F_V(x^m)`` (paper-spec §1.2 duality).

    Parameters
    ----------
    rows, cols : ndarray of shape (n_groups, n_outputs, n_samples)
        Row and column means of the single-group matrices G_k.
    pair_rows, pair_cols : ndarray of shape (n_pairs, n_outputs, n_samples)
        Row and column means of the matrices of each pair's union.
    pairs : ndarray of shape (n_pairs, 2), int64

    Returns
    -------
    pure, full, joint : ndarray of shape (n_pairs,)
        Mean over samples, summed over outputs, of the squared row mean of
        I, the squared column mean of I, and the squared row mean of
        G_{i u j} (the centred joint partial dependence).
    """
    n_pairs = pairs.shape[0]
    n_outputs = rows.shape[1]
    n_samples = rows.shape[2]
    pure = np.zeros(n_pairs, dtype=np.float64)
    full = np.zeros(n_pairs, dtype=np.float64)
    joint = np.zeros(n_pairs, dtype=np.float64)
    for p in range(n_pairs):
        i = pairs[p, 0]
        j = pairs[p, 1]
        for o in range(n_outputs):
            for n in range(n_samples):
                r = pair_rows[p, o, n] - rows[i, o, n] - rows[j, o, n]
                c = pair_cols[p, o, n] - cols[i, o, n] - cols[j, o, n]
                pure[p] += r * r
                full[p] += c * c
                joint[p] += pair_rows[p, o, n] * pair_rows[p, o, n]
        pure[p] /= n_samples
        full[p] /= n_samples
        joint[p] /= n_samples
    return pure, full, joint
