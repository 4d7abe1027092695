"""Groups on which an explained row equals background rows.

A group is a *dummy* for an explained row x when x equals every background
row on all of the group's columns: no coalition then changes the model
input, every component F_U with U containing the group is zero, and
Shapley, Banzhaf, Occlusion, Arch, KernelSHAP, permutation SHAP, LIME and
Integrated Gradients all give the group 0. Equality is exact (NaN equals
NaN), on the raw input columns.

For one background row z, the groups on which x and z differ are the
players of the anchored game ``f(x_{G_S}, z_{-G_S})``: the others never
change its value.
"""

# SPDX-License-Identifier: BSD-3-Clause

import numpy as np
import pandas as pd

__all__ = ["differing_groups", "dummy_groups", "zero_dummy_groups"]

# elements compared at once (explained rows x background rows x columns)
_CHUNK = 1 << 22


def _columns(game, X):
    """(x columns, z columns) as lists of 1-D arrays, or (x array, z array)."""
    table, background = game.tables(X)
    if table.is_frame:
        return table.data, background.data
    return table.array, background.array


_MISSING = object()


def _equal(a, b):
    """Elementwise a == b, broadcast, with missing values equal to each other."""
    kind = np.result_type(a.dtype, b.dtype).kind if a.dtype != object and (
        b.dtype != object
    ) else "O"
    if kind in "biu":
        return a == b
    if kind in "fc":
        return (a == b) | (np.isnan(a) & np.isnan(b))
    # object columns (pandas nullable dtypes) may hold pd.NA, which cannot be
    # compared to a bool: missing values are swapped for a marker first, and a
    # missing value equals only a missing value
    missing_a = np.asarray(pd.isna(a), dtype=bool)
    missing_b = np.asarray(pd.isna(b), dtype=bool)
    eq = np.asarray(
        np.where(missing_a, _MISSING, a) == np.where(missing_b, _MISSING, b), dtype=bool
    )
    return (eq & ~missing_a & ~missing_b) | (missing_a & missing_b)


def _group_starts(labels):
    order = np.argsort(labels, kind="stable")
    # each group's first position in that order, from the counts (no
    # temporaries of the columns' number: an image has millions)
    counts = np.bincount(labels)
    starts = (np.cumsum(counts) - counts)[counts > 0]
    return order, starts


def differing_groups(game, X):
    """Whether explained and background rows differ on each group.

    Parameters
    ----------
    game : CoalitionGame
    X : ndarray or DataFrame of shape (n_rows, n_features)
        Checked rows in the model's input form.

    Returns
    -------
    differ : ndarray of shape (n_rows, n_background, n_groups), bool
        True where row i and background row j differ on some column of
        group k.
    """
    xs, zs = _columns(game, X)
    order, starts = _group_starts(game.labels)
    n = X.shape[0]
    m = game.background.shape[0]
    d = game.n_features
    out = np.empty((n, m, game.n_groups), dtype=bool)
    step = max(1, _CHUNK // max(1, m * d))
    for lo in range(0, n, step):
        hi = min(n, lo + step)
        if isinstance(xs, list):
            diff = np.empty((hi - lo, m, d), dtype=bool)
            for j in range(d):
                diff[:, :, j] = ~_equal(xs[j][lo:hi, None], zs[j][None, :])
        else:
            diff = ~_equal(xs[lo:hi, None, :], zs[None, :, :])
        out[lo:hi] = np.logical_or.reduceat(diff[:, :, order], starts, axis=2)
    return out


def dummy_groups(game, X):
    """Dummy groups of every explained row, (n_rows, n_groups) bool.

    A column is fixed for a row when the background column is constant and
    equal to the row's value; a group is a dummy when all its columns are.
    """
    xs, zs = _columns(game, X)
    order, starts = _group_starts(game.labels)
    if isinstance(xs, list):
        fixed = np.column_stack([
            _equal(x, z[:1]) & _equal(z, z[:1]).all() for x, z in zip(xs, zs)
        ]) if xs else np.zeros((X.shape[0], 0), dtype=bool)
    else:
        constant = _equal(zs, zs[:1]).all(axis=0)
        fixed = _equal(xs, zs[:1]) & constant[None, :]
    return np.logical_and.reduceat(fixed[:, order], starts, axis=1)


def zero_dummy_groups(attributions, dummy):
    """Attributions with the dummy groups of each row set to exactly 0.

    Parameters
    ----------
    attributions : ndarray of shape (n_rows, n_groups) or (n_rows, n_groups, n_outputs)
    dummy : ndarray of shape (n_rows, n_groups), bool

    Returns
    -------
    attributions : ndarray
        A new array when some group is a dummy, else the input.
    """
    if not dummy.any():
        return attributions
    mask = dummy if attributions.ndim == 2 else dummy[:, :, None]
    return np.where(mask, 0.0, attributions)
