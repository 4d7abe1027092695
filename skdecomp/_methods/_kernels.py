"""Numba kernels of the sampled explainers: hybrids, least squares, permutations.

Coalitions are boolean arrays of shape (n_coalitions, n_columns) here, so the
number of groups is not limited by the width of an integer bitmask.
"""

# SPDX-License-Identifier: BSD-3-Clause

import numpy as np
from numba import njit

__all__ = [
    "hybrid_rows",
    "coalition_gram",
    "coalition_moments",
    "cholesky_solve",
    "constrained_least_squares",
    "permutation_attributions",
]


@njit(cache=True)
def _active_columns(design, m, active):
    """Write the columns set in row m of ``design`` into ``active``; return their count."""
    n_act = 0
    for k in range(design.shape[1]):
        if design[m, k]:
            active[n_act] = k
            n_act += 1
    return n_act


@njit(cache=True)
def coalition_gram(design, weights):
    """Weighted Gram matrix of a 0/1 design: ``sum_m w_m d_m d_m^T``.

    Parameters
    ----------
    design : ndarray of shape (n_coalitions, n_columns), bool
    weights : ndarray of shape (n_coalitions,)

    Returns
    -------
    gram : ndarray of shape (n_columns, n_columns)
    """
    n_coal, n_cols = design.shape
    gram = np.zeros((n_cols, n_cols), dtype=np.float64)
    active = np.empty(n_cols, dtype=np.int64)
    for m in range(n_coal):
        w = weights[m]
        if w == 0.0:
            continue
        n_act = _active_columns(design, m, active)
        for a in range(n_act):
            i = active[a]
            for b in range(n_act):
                gram[i, active[b]] += w
    return gram


@njit(cache=True)
def coalition_moments(design, weights, values):
    """Weighted moments of values on a 0/1 design: ``sum_m w_m values[r, m] d_m``.

    Parameters
    ----------
    design : ndarray of shape (n_coalitions, n_columns), bool
    weights : ndarray of shape (n_coalitions,)
    values : ndarray of shape (n_rows, n_coalitions)

    Returns
    -------
    moments : ndarray of shape (n_rows, n_columns)
    """
    n_coal, n_cols = design.shape
    n_rows = values.shape[0]
    out = np.zeros((n_rows, n_cols), dtype=np.float64)
    active = np.empty(n_cols, dtype=np.int64)
    for m in range(n_coal):
        w = weights[m]
        if w == 0.0:
            continue
        n_act = _active_columns(design, m, active)
        for r in range(n_rows):
            wy = w * values[r, m]
            for a in range(n_act):
                out[r, active[a]] += wy
    return out


@njit(cache=True)
def cholesky_solve(matrix, rhs):
    """Solve ``matrix @ x = rhs[r]`` for every row r, for a symmetric positive definite matrix.

    Returns
    -------
    solution : ndarray of shape (n_rhs, n)
    ok : bool
        False when the matrix is singular or not positive definite (a pivot
        below 1e-10 times the largest diagonal entry); the solution is then
        all zeros.
    """
    n = matrix.shape[0]
    n_rhs = rhs.shape[0]
    sol = np.zeros((n_rhs, n), dtype=np.float64)
    scale = 0.0
    for j in range(n):
        if matrix[j, j] > scale:
            scale = matrix[j, j]
    tol = 1e-10 * scale
    low = np.zeros((n, n), dtype=np.float64)
    for j in range(n):
        s = matrix[j, j]
        for k in range(j):
            s -= low[j, k] * low[j, k]
        if not s > tol:
            return sol, False
        low[j, j] = np.sqrt(s)
        for i in range(j + 1, n):
            s = matrix[i, j]
            for k in range(j):
                s -= low[i, k] * low[j, k]
            low[i, j] = s / low[j, j]
    buf = np.empty(n, dtype=np.float64)
    for r in range(n_rhs):
        for i in range(n):
            s = rhs[r, i]
            for k in range(i):
                s -= low[i, k] * buf[k]
            buf[i] = s / low[i, i]
        for i in range(n - 1, -1, -1):
            s = buf[i]
            for k in range(i + 1, n):
                s -= low[k, i] * sol[r, k]
            sol[r, i] = s / low[i, i]
    return sol, True


@njit(cache=True)
def constrained_least_squares(gram, moments, totals):
    """Weighted least squares with coefficients summing to a given total.

    Minimises ``sum_m w_m (y_m - z_m . phi)**2`` subject to
    ``sum_k phi_k = total`` for every row, from ``gram = Z^T W Z`` and
    ``moments[r] = Z^T W y_r`` (the KernelSHAP regression with the
    efficiency constraint; Lundberg & Lee, NeurIPS 2017).

    Returns
    -------
    phi : ndarray of shape (n_rows, n_groups)
    ok : bool
        False when ``gram`` is singular.
    """
    n_rows, n = moments.shape
    rhs = np.empty((n_rows + 1, n), dtype=np.float64)
    for r in range(n_rows):
        for k in range(n):
            rhs[r, k] = moments[r, k]
    for k in range(n):
        rhs[n_rows, k] = 1.0
    sol, ok = cholesky_solve(gram, rhs)
    phi = np.zeros((n_rows, n), dtype=np.float64)
    if not ok:
        return phi, False
    denom = 0.0
    for k in range(n):
        denom += sol[n_rows, k]
    for r in range(n_rows):
        acc = 0.0
        for k in range(n):
            acc += sol[r, k]
        lam = (acc - totals[r]) / denom
        for k in range(n):
            phi[r, k] = sol[r, k] - lam * sol[n_rows, k]
    return phi, True


@njit(cache=True)
def permutation_attributions(orders, prefix_index, values):
    """Mean marginal contributions along permutations of the groups.

    Parameters
    ----------
    orders : ndarray of shape (n_permutations, n_groups), int64
        Group at each position of every permutation.
    prefix_index : ndarray of shape (n_permutations, n_groups + 1), int64
        Column of ``values`` holding the value of the first j groups of the
        permutation (j = 0 is the empty coalition, j = n_groups the full one).
    values : ndarray of shape (n_rows, n_values)

    Returns
    -------
    phi : ndarray of shape (n_rows, n_groups)
        ``phi[r, k] = mean_p (v(prefix before k and k) - v(prefix before k))``.
    """
    n_perm, n_groups = orders.shape
    n_rows = values.shape[0]
    out = np.zeros((n_rows, n_groups), dtype=np.float64)
    for p in range(n_perm):
        for j in range(n_groups):
            k = orders[p, j]
            before = prefix_index[p, j]
            after = prefix_index[p, j + 1]
            for r in range(n_rows):
                out[r, k] += values[r, after] - values[r, before]
    for r in range(n_rows):
        for k in range(n_groups):
            out[r, k] /= n_perm
    return out


@njit(cache=True)
def hybrid_rows(x, z, design, labels, positions, rows, bg_rows, starts, counts,
                all_background, out):
    """Hybrid rows of runs of coalitions, each run for one explained row.

    Run r holds the coalitions ``design[starts[r] : starts[r] + counts[r]]``;
    column j of the hybrid comes from ``x[rows[r]]`` when
    ``design[c, positions[r, labels[j]]]`` is set, else from the background
    row ``z[bg_rows[r]]`` (or from every background row in turn, when
    ``all_background``).

    Unlike the other kernels, this one writes into ``out``, of shape
    (n_coalitions * n_z, n_columns), run-major, then coalition-major, then
    background row: allocated by NumPy, a large output is backed by huge
    pages and fills several times faster.
    """
    n_runs = rows.shape[0]
    d = x.shape[1]
    n_z = z.shape[0] if all_background else 1
    where = np.empty(d, dtype=np.int64)
    mask = np.empty(d, dtype=np.bool_)
    o = 0
    for r in range(n_runs):
        for j in range(d):
            where[j] = positions[r, labels[j]]
        xr = x[rows[r]]
        for t in range(counts[r]):
            c = starts[r] + t
            for j in range(d):
                mask[j] = design[c, where[j]]
            for b in range(n_z):
                zr = z[b] if all_background else z[bg_rows[r]]
                row = out[o]
                for j in range(d):
                    row[j] = xr[j] if mask[j] else zr[j]
                o += 1
