"""Numba kernels of the coalition game: background means and anchored statistics."""

# SPDX-License-Identifier: BSD-3-Clause

import numpy as np
from numba import njit

__all__ = [
    "mean_over_background",
    "anchored_means",
    "interaction_potentials",
    "pair_interaction_strengths",
]


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
    """Row and column means of anchored N x N matrices.

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
    """Interaction potentials Psi from row and column means.

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
    ``I = G_{i u j} - G_i - G_j``. Its row means are the
    pure pair components F_ij(x^n) and its column means the full ones
    ``sum_{V contains i, j} F_V(x^m)``.

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
