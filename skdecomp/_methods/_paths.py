"""Integrated Gradients over groups, without derivatives: model calls along paths.

The model is evaluated along straight lines from the background rows to x;
the differences between neighbouring points, summed by group, add up to
f(x) - f(z) on every path (see :ref:`sampled_estimators`).
"""

# SPDX-License-Identifier: BSD-3-Clause

import numpy as np
import pandas as pd

__all__ = ["integrated_gradients", "numeric_matrix"]


def numeric_matrix(X, feature_names, what):
    """X as a float64 array, or a ValueError naming the non-numeric columns."""
    names = (
        list(X.columns)
        if isinstance(X, pd.DataFrame)
        else (list(feature_names) if feature_names is not None else None)
    )
    if isinstance(X, pd.DataFrame):
        bad = [
            j
            for j, dt in enumerate(X.dtypes)
            if not pd.api.types.is_numeric_dtype(dt) or pd.api.types.is_bool_dtype(dt)
        ]
    else:
        arr = np.asarray(X)
        if arr.dtype.kind in "iuf":
            bad = []
        else:
            bad = []
            for j in range(arr.shape[1]):
                col = arr[:, j]
                if arr.dtype.kind == "b" or any(
                    isinstance(v, (bool, np.bool_, str, bytes)) for v in col
                ):
                    bad.append(j)
                    continue
                try:
                    np.asarray(col, dtype=np.float64)
                except (TypeError, ValueError):
                    bad.append(j)
    if bad:
        labels = [names[j] for j in bad] if names is not None else bad
        raise ValueError(
            f"integrated_gradients interpolates every column between the "
            f"background and x, but {what} has non-numeric columns {labels}. "
            "Encode them as numbers first (e.g. one-hot encode them and put "
            "each encoded block in one group), or use a coalition method such "
            "as 'kernel_shap', which moves each group as a whole."
        )
    if isinstance(X, pd.DataFrame):
        return X.to_numpy(dtype=np.float64, na_value=np.nan)
    return np.asarray(X, dtype=np.float64)


class _PathPoints:
    """Column weights alpha of the points on the paths from z to x: (1 - alpha) z + alpha x.

    ``"path"`` scheme, n steps with alpha_t = t / n: the inner grid points
    t = 1..n-1, then for every step the K - 1 points where groups 0..j-1
    have moved to alpha_{t+1} (forward order) and the K - 1 points where
    groups K-j..K-1 have (reverse order). ``"central"`` scheme: for every step
    and every column, the step midpoint with that column at alpha_t or at
    alpha_{t+1}.
    """

    def __init__(self, scheme, n_steps, labels, n_groups):
        self.scheme = scheme
        self.n_steps = n_steps
        self.labels = labels
        self.n_groups = n_groups
        n, K, d = n_steps, n_groups, labels.shape[0]
        if scheme == "path":
            self.n_points = (n - 1) + 2 * n * (K - 1)
        else:
            self.n_points = 2 * n * d

    def alphas(self, ids):
        n, K = self.n_steps, self.n_groups
        d = self.labels.shape[0]
        if self.scheme == "central":
            t, rest = np.divmod(ids, 2 * d)
            col, plus = np.divmod(rest, 2)
            out = np.repeat(((t + 0.5) / n)[:, None], d, axis=1)
            out[np.arange(ids.size), col] = (t + plus) / n
            return out
        group_alpha = np.empty((ids.size, K))
        grid = ids < n - 1
        group_alpha[grid] = ((ids[grid] + 1) / n)[:, None]
        q = ids[~grid] - (n - 1)
        reverse, q = np.divmod(q, n * (K - 1))
        t, j = np.divmod(q, K - 1)
        j = j + 1
        k = np.arange(K)[None, :]
        moved = np.where(
            reverse[:, None] == 1, k >= K - j[:, None], k < j[:, None]
        )
        group_alpha[~grid] = np.where(moved, (t + 1)[:, None], t[:, None]) / n
        return group_alpha[:, self.labels]


class _PathData:
    """Input rows at the path points of (explained row, point) pairs; picklable."""

    def __init__(self, x, background, points, columns):
        self.x = x
        self.background = background
        self.points = points
        self.columns = columns

    def __call__(self, pairs):
        rows, ids = np.divmod(pairs, self.points.n_points)
        a = self.points.alphas(ids)
        # (1 - a) z + a x, built in place: wide rows (images) make no
        # temporaries of the output's size
        moved = np.multiply(a, self.x[rows], dtype=np.float64)
        np.subtract(1.0, a, out=a)
        data = np.empty((a.shape[0], self.background.shape[0], a.shape[1]))
        for b, z in enumerate(self.background):
            np.multiply(a, z, out=data[:, b, :])
            data[:, b, :] += moved
        data = data.reshape(-1, self.x.shape[1])
        if self.columns is not None:
            data = pd.DataFrame(data, columns=self.columns)
        return data


def _path_values(game, x, background, points):
    """Mean model output over the background at every path point: (n_rows, n_points, n_outputs)."""
    n_rows = x.shape[0]
    n_points = points.n_points

    def describe(pair, row):
        return (
            f"the path point {pair % n_points} from background row {row} to "
            f"explained row {pair // n_points}"
        )

    values = game.mean_predictions(
        _PathData(x, background, points, game.columns), n_rows * n_points,
        background.shape[0], describe=describe,
    )
    return values.reshape(n_rows, n_points, -1)


def integrated_gradients(game, X, prediction, n_steps, scheme, feature_names=None):
    """Derivative-free Integrated Gradients over groups, (n_rows, K, n_outputs)."""
    x = numeric_matrix(X, feature_names, "X")
    bg = numeric_matrix(game.background, feature_names, "the background")
    K, labels = game.n_groups, game.labels
    n_rows, n_out = prediction.shape
    base = game.expected_value
    if K == 1 and scheme == "path":
        return (prediction - base[None, :])[:, None, :]
    points = _PathPoints(scheme, n_steps, labels, K)
    V = _path_values(game, x, bg, points) if points.n_points else (
        np.empty((n_rows, 0, n_out))
    )
    n = n_steps
    if scheme == "central":
        diff = V.reshape(n_rows, n, x.shape[1], 2, n_out)
        per_column = (diff[:, :, :, 1] - diff[:, :, :, 0]).sum(axis=1)
        phi = np.zeros((n_rows, K, n_out))
        np.add.at(phi, (slice(None), labels), per_column)
        return phi
    grid = np.concatenate(
        [np.broadcast_to(base, (n_rows, 1, n_out)), V[:, : n - 1], prediction[:, None]],
        axis=1,
    )
    m = n * (K - 1)
    phi = np.zeros((n_rows, K, n_out))
    for r, inner in enumerate((V[:, n - 1 : n - 1 + m], V[:, n - 1 + m :])):
        stairs = np.concatenate(
            [grid[:, :-1, None], inner.reshape(n_rows, n, K - 1, n_out), grid[:, 1:, None]],
            axis=2,
        )
        steps = np.diff(stairs, axis=2).sum(axis=1)  # (n_rows, K, n_out) by position
        phi += steps if r == 0 else steps[:, ::-1]
    return phi / 2.0
