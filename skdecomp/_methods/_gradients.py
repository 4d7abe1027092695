"""Integrated Gradients over groups from the model's own gradients (autograd).

For an explained row x and a background row z, the Integrated Gradients of
column j (Sundararajan et al., 2017) are

    IG_j(x, z) = (x_j - z_j) * int_0^1 d f / d x_j (z + a (x - z)) da,

here by Gauss-Legendre quadrature on ``n_steps`` nodes mapped to [0, 1]
(``a_i = (t_i + 1) / 2``, ``w_i = w_i' / 2``), the default of captum's
``IntegratedGradients``. A group gets the sum over its columns, averaged
over the background rows. The sum over the groups is f(x) - E_B f only up
to the quadrature error (the derivative-free schemes of ``_paths`` are
exactly complete).

The gradients come from ``game.response.estimator.gradients(rows, outputs)``
(an :class:`~skdecomp._image.ImageModel` on a torch module), called on the
interpolation points a block at a time, at most ``batch_rows(n_features)``
points per call.
"""

# SPDX-License-Identifier: BSD-3-Clause

import numpy as np
from scipy import sparse

__all__ = ["gradient_integrated_gradients", "has_gradients", "resolve_ig_scheme"]


def has_gradients(game):
    """Whether the game's model gives gradients of the explained response."""
    response = game.response
    model = getattr(response, "estimator", None)
    return (
        bool(getattr(model, "has_gradients", False))
        and getattr(response, "method", None) == "predict"
        and game.anchored
    )


def resolve_ig_scheme(game, scheme):
    """The Integrated Gradients scheme to run: "auto" picks "gradient" or "path"."""
    if scheme == "auto":
        return "gradient" if has_gradients(game) else "path"
    if scheme == "gradient" and not has_gradients(game):
        model = getattr(game.response, "estimator", game.response)
        runtime = getattr(model, "runtime", None)
        what = (
            f"an ImageModel on a {runtime}" if runtime is not None
            else type(model).__name__
        )
        raise ValueError(
            "method_params['scheme']='gradient' takes the gradients of a torch "
            f"module (autograd), but the model is {what}, which gives none. "
            "Pass the torch.nn.Module itself (or an ImageModel wrapping it), or "
            "use scheme='auto' or 'path' (derivative-free, any model)."
        )
    return scheme


def _quadrature(n_steps):
    """Gauss-Legendre nodes and weights on [0, 1], as captum's ``gausslegendre``."""
    t, w = np.polynomial.legendre.leggauss(n_steps)
    return 0.5 * (1.0 + t), 0.5 * w


def _group_matrix(labels, n_groups):
    """Sparse (n_features, n_groups) indicator of every column's group."""
    d = labels.shape[0]
    return sparse.csr_matrix(
        (np.ones(d), (np.arange(d), labels)), shape=(d, n_groups)
    )


def gradient_integrated_gradients(game, X, n_outputs, n_steps):
    """Integrated Gradients from autograd, summed by group: (n_rows, K, n_outputs).

    Parameters
    ----------
    game : CoalitionGame
        A marginal game whose ``response.estimator`` has ``gradients``.
    X : ndarray of shape (n_rows, n_features)
        Explained rows.
    n_outputs : int
        Number of explained outputs (columns of ``game.predict``).
    n_steps : int
        Quadrature nodes on every path.

    Returns
    -------
    phi : ndarray of shape (n_rows, K, n_outputs)
    """
    response = game.response
    model = response.estimator
    x = np.asarray(X, dtype=np.float32)
    bg = np.asarray(game.background, dtype=np.float32)
    n_rows, d = x.shape
    n_bg = bg.shape[0]
    K = game.n_groups
    alphas, weights = _quadrature(int(n_steps))
    alphas32 = alphas.astype(np.float32)
    columns = response.columns
    outputs = None if columns is None else [int(c) for c in np.atleast_1d(columns)]
    indicator = _group_matrix(game.labels, K)
    # points per gradient call: the model's batch, less when many outputs
    # come back (float64, one image per output and point)
    per_call = max(1, int(model.batch_rows(d)) // max(1, int(n_outputs)))
    n_points = n_rows * n_bg * n_steps
    phi = np.zeros((n_rows, K, n_outputs))
    starts = range(0, n_points, per_call)
    if getattr(game, "verbose", 0):
        from tqdm.auto import tqdm

        starts = tqdm(starts, desc="gradients")
    for start in starts:
        ids = np.arange(start, min(start + per_call, n_points))
        pair, step = np.divmod(ids, n_steps)  # pair = row * n_bg + background row
        row, b = np.divmod(pair, n_bg)
        points = bg[b] + alphas32[step][:, None] * (x[row] - bg[b])
        grads = np.asarray(model.gradients(points, outputs=outputs), dtype=np.float64)
        del points
        grads = grads.reshape(ids.size, n_outputs, d)
        if not np.isfinite(grads).all():
            bad = int(np.flatnonzero(~np.isfinite(grads).reshape(ids.size, -1).all(1))[0])
            raise ValueError(
                f"The gradients of {type(getattr(model, 'model', model)).__name__} "
                f"are NaN or infinite at step {int(step[bad])} of the path from "
                f"background row {int(b[bad])} to explained row {int(row[bad])}; "
                "Integrated Gradients need finite gradients. Use "
                "method_params={'scheme': 'path'} (model calls only)."
            )
        grads *= weights[step][:, None, None]
        # sum the steps of every (row, background row) pair in this block
        first = np.flatnonzero(np.r_[True, pair[1:] != pair[:-1]])
        summed = np.add.reduceat(grads, first, axis=0)  # (n_pairs, n_out, d)
        del grads
        p_row, p_b = row[first], b[first]
        summed *= (
            x[p_row].astype(np.float64) - bg[p_b].astype(np.float64)
        )[:, None, :]
        by_group = (indicator.T @ summed.reshape(-1, d).T).T  # (n_pairs * n_out, K)
        by_group = np.asarray(by_group).reshape(first.size, n_outputs, K)
        np.add.at(phi, p_row, by_group.transpose(0, 2, 1))
    phi /= n_bg
    if response.sign != 1.0:
        phi *= response.sign
    return phi
