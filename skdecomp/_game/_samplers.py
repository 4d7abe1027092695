"""Conditional samplers: draws of the unknown columns given the known ones.

The conditional value of a coalition S for a row x is

    v_x(S) = E[f(X) | X_S = x_S],

estimated by averaging f over rows whose columns outside S are drawn from an
estimate of p(X_-S | X_S = x_S) fitted on data (Aas, Jullum & Løland,
"Explaining individual predictions when features are dependent: more accurate
approximations to Shapley values", Artificial Intelligence 298, 2021).

Every sampler here is a scikit-learn estimator with one method besides
``fit``::

    draws = sampler.sample(X, known, n_draws, random_state=rng)

``X`` is a float array of shape (n, p), ``known`` a boolean array of the same
shape marking the conditioning columns of each row, and ``draws`` a float
array of shape (n, n_draws, p) equal to ``X`` where ``known`` is True. Rows
are grouped by their pattern of known columns, and each pattern is solved
once. The draws of a row depend on its known values, its pattern and the
seed alone, not on the other rows of the call: its random numbers come from
a counter-based generator (the splitmix64 mixing function of Steele, Lea &
Flood, OOPSLA 2014) keyed by a hash of the seed, the pattern and the known
values, so a coalition value does not depend on how rows are batched.

Any sampler given to the conditional game, the conditional inspection tools
or ``disagreement_sources`` is held to this contract by ``checked_draws``
(in ``_imputation``): it draws from copies of ``X`` and ``known``, its draws
must be finite numbers of shape (n, n_draws, p), and the known cells are
set back to the row's values.
"""

# SPDX-License-Identifier: BSD-3-Clause

from numbers import Integral, Real

import numpy as np
import pandas as pd
from scipy.linalg import cho_factor, cho_solve
from scipy.special import ndtr, ndtri
from sklearn.base import BaseEstimator
from sklearn.utils import check_random_state
from sklearn.utils.validation import check_is_fitted, validate_data

from .._compat import Interval, _fit_context, transactional_fit
from .._config import kernel_block_cells

__all__ = ["GaussianCopulaSampler", "KNeighborsSampler"]


# -- input checks -----------------------------------------------------------------
def _as_float_array(X, name, who):
    """``X`` as a float64 ndarray, or a TypeError naming its non-numeric part."""
    if isinstance(X, pd.DataFrame):
        bad = [
            str(c) for c, t in X.dtypes.items()
            if not (pd.api.types.is_numeric_dtype(t) or pd.api.types.is_bool_dtype(t))
        ]
        if bad:
            raise TypeError(
                f"{who} needs numeric data, but {name} has non-numeric columns "
                f"{bad}; encode them as numbers first (e.g. with OrdinalEncoder), "
                "or drop them."
            )
    arr = np.asarray(X)
    if arr.dtype.kind in "biuf":
        return arr.astype(np.float64, copy=False)
    try:
        return arr.astype(np.float64)
    except (TypeError, ValueError):
        raise TypeError(
            f"{who} needs numeric data, but {name} has dtype {arr.dtype} with "
            "values that are not numbers; encode them as numbers first (e.g. with "
            "OrdinalEncoder), or drop those columns."
        ) from None


def _first_bad_cell(bad):
    row, col = np.argwhere(bad)[0]
    return int(row), int(col), int(bad.sum())


# -- per-row random numbers -------------------------------------------------------
_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_MIX1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX2 = np.uint64(0x94D049BB133111EB)
_KNOWN = np.uint64(0x243F6A8885A308D3)
_UNKNOWN = np.uint64(0x13198A2E03707344)
_PICK = np.uint64(0xA4093822299F31D0)


def _mix(z):
    """The splitmix64 finaliser, elementwise on a uint64 array (wrapping)."""
    z = z ^ (z >> np.uint64(30))
    z *= _MIX1
    z ^= z >> np.uint64(27)
    z *= _MIX2
    z ^= z >> np.uint64(31)
    return z


def _row_keys(seed, X, known):
    """One 64-bit key per row from the seed, its pattern and its known values."""
    n, p = X.shape
    bits = np.where(known, X + 0.0, 0.0).view(np.uint64)  # -0.0 as 0.0
    salts = np.arange(p, dtype=np.uint64) * _GOLDEN  # array arithmetic wraps
    keys = _mix(np.full(n, seed, dtype=np.uint64))
    for j in range(p):
        flag = np.where(known[:, j], _KNOWN, _UNKNOWN) + salts[j:j + 1]
        keys = _mix(keys ^ _mix(bits[:, j] + flag))
    return keys


def _uniforms(keys, counters):
    """Uniform numbers in (0, 1), shape ``keys.shape + counters.shape``.

    Number ``c`` of the stream of key ``k`` is splitmix64's output at state
    ``k + (c + 1) * golden``: it depends on the key and the counter alone.
    """
    state = counters.astype(np.uint64) + np.uint64(1)
    state *= _GOLDEN
    state = keys.reshape(keys.shape + (1,) * counters.ndim) + state
    return ((_mix(state) >> np.uint64(11)).astype(np.float64) + 0.5) * 2.0**-53


class _BaseConditionalSampler(BaseEstimator):
    """Input checks and the grouping of rows by pattern, shared by the samplers."""

    _min_rows = 1

    def _check_fit_X(self, X):
        who = type(self).__name__
        arr = _as_float_array(X, "X", who)
        if arr.ndim != 2:
            raise ValueError(
                f"{who}.fit needs a 2-D array of shape (n_samples, n_features), "
                f"got an array of shape {arr.shape}; reshape it, e.g. "
                "X.reshape(-1, 1) for a single column."
            )
        if arr.shape[0] < self._min_rows or arr.shape[1] < 1:
            raise ValueError(
                f"{who}.fit needs at least {self._min_rows} rows and 1 column, "
                f"got X of shape {arr.shape}; give more data."
            )
        bad = ~np.isfinite(arr)
        if bad.any():
            row, col, count = _first_bad_cell(bad)
            raise ValueError(
                f"{who}.fit needs finite data, but X has {count} NaN or infinite "
                f"values (the first in row {row}, column {col}); impute them first "
                "(e.g. with SimpleImputer) or drop those rows."
            )
        data = X if isinstance(X, pd.DataFrame) else arr
        validate_data(self, data, reset=True, dtype=np.float64,
                      ensure_all_finite=False, ensure_min_samples=1)
        return arr

    def _check_sample_input(self, X, known, n_draws):
        check_is_fitted(self)
        who = f"{type(self).__name__}.sample"
        if isinstance(n_draws, (bool, np.bool_)) or not isinstance(n_draws, Integral):
            raise TypeError(
                f"{who} needs an integer n_draws, got {n_draws!r}; give the number "
                "of draws per row as an int >= 1."
            )
        if n_draws < 1:
            raise ValueError(
                f"{who} needs n_draws >= 1, got {n_draws}; ask for at least one draw."
            )
        X = _as_float_array(X, "X", who)
        p = self.n_features_in_
        if X.ndim != 2 or X.shape[1] != p:
            raise ValueError(
                f"{who} needs X of shape (n_rows, {p}) like the data it was fitted "
                f"on, got shape {X.shape}; give the rows with all {p} columns "
                "(X.reshape(1, -1) for a single row)."
            )
        known = np.asarray(known)
        if known.dtype != np.bool_:
            if known.dtype.kind in "iu" and np.isin(known, (0, 1)).all():
                known = known.astype(bool)
            else:
                raise TypeError(
                    f"{who} needs a boolean mask known (True for the conditioning "
                    f"columns), got dtype {known.dtype}; build it with e.g. "
                    "np.zeros(X.shape, dtype=bool)."
                )
        if known.shape == (p,):
            known = np.broadcast_to(known, X.shape)
        elif known.shape != X.shape:
            raise ValueError(
                f"{who} needs known of the same shape as X {X.shape} (one flag per "
                f"cell) or of shape ({p},) (the same columns for every row), got "
                f"shape {known.shape}."
            )
        bad = known & ~np.isfinite(X)
        if bad.any():
            row, col, count = _first_bad_cell(bad)
            raise ValueError(
                f"{who} conditions on the known cells of X, but {count} of them are "
                f"NaN or infinite (the first in row {row}, column {col}); impute them "
                "first, or mark those cells as unknown."
            )
        return X, np.ascontiguousarray(known)

    def sample(self, X, known, n_draws, random_state=None):
        """Draw the unknown columns of each row given its known columns.

        Parameters
        ----------
        X : array-like of shape (n_rows, n_features)
            Rows to complete. Only the cells where ``known`` is True are read;
            the others may hold anything, NaN included.
        known : array-like of bool, shape (n_rows, n_features) or (n_features,)
            True for the conditioning columns of each row (one shape-(n_features,)
            mask applies to every row). Rows may differ; rows that share a
            pattern are handled together.
        n_draws : int
            Number of draws per row, at least 1.
        random_state : int, RandomState instance or None, default=None
            Seed of the draws: an int gives the same draws on every call, a
            RandomState instance is advanced by one number (the call's
            seed), None takes that number from NumPy's global random state.
            Given the seed, the draws of a row depend on its known values and
            its pattern alone, not on the other rows of the call.

        Returns
        -------
        draws : ndarray of shape (n_rows, n_draws, n_features)
            ``draws[i, t]`` is the t-th completion of row ``i``: equal to
            ``X[i]`` on its known columns and drawn from the fitted
            conditional distribution on the others. A row with no known
            column gets draws from the fitted joint distribution; a row with
            every column known is repeated.
        """
        X, known = self._check_sample_input(X, known, n_draws)
        seed = check_random_state(random_state).randint(
            np.iinfo(np.int64).max, dtype=np.int64
        )
        n, p = X.shape
        draws = np.empty((n, n_draws, p))
        if n == 0:
            return draws
        keys = _row_keys(seed, X, known)
        state = self._sampling_state(seed)
        patterns, inverse = np.unique(known, axis=0, return_inverse=True)
        inverse = inverse.reshape(-1)
        order = np.argsort(inverse, kind="stable")
        bounds = np.cumsum(np.bincount(inverse, minlength=len(patterns)))[:-1]
        for pattern, rows in zip(patterns, np.split(order, bounds)):
            unknown = np.flatnonzero(~pattern)
            kept = np.flatnonzero(pattern)
            # rows are increasing: a run of consecutive rows is written in place
            in_place = rows[-1] - rows[0] + 1 == rows.size
            block = (draws[rows[0]:rows[-1] + 1] if in_place
                     else np.empty((rows.size, n_draws, p)))
            known_values = X[np.ix_(rows, kept)]
            block[:, :, kept] = known_values[:, None, :]
            if unknown.size:
                block[:, :, unknown] = self._draw(
                    known_values, kept, unknown, n_draws, keys[rows], state
                )
            if not in_place:
                draws[rows] = block
        return draws

    def _sampling_state(self, seed):
        return None


def _row_blocks(n_rows, cells_per_row):
    """Row ranges whose working arrays stay within the kernel block size."""
    step = max(1, kernel_block_cells() // max(1, int(cells_per_row)))
    return [(start, min(start + step, n_rows)) for start in range(0, n_rows, step)]


# -- Gaussian copula --------------------------------------------------------------
class GaussianCopulaSampler(_BaseConditionalSampler):
    """Conditional draws from a Gaussian copula with empirical margins.

    Each column is mapped to normal scores through its empirical CDF
    (mid-ranks, so tied values share one score):
    ``z = Phi^{-1}((#{x_i < x} + #{x_i = x} / 2) / n)``, linearly interpolated
    between observed values and clamped outside their range. The
    correlation matrix ``R`` of the scores is shrunk towards the identity,
    ``(1 - shrinkage) * R + shrinkage * I``, which keeps every conditional
    covariance positive definite (smallest eigenvalue at least
    ``shrinkage``) when columns are collinear, duplicated or constant.
    Given the scores ``z_S`` of the known columns, the unknown scores are
    drawn from the Gaussian conditional
    ``N(R_US R_SS^{-1} z_S, R_UU - R_US R_SS^{-1} R_SU)`` and mapped back
    through the inverse empirical CDF of each column, so every generated
    value is one of the column's observed values (discrete columns stay
    discrete, nothing leaves the column's range). This is the Gaussian
    copula approach of Aas, Jullum & Løland (Artificial Intelligence, 2021).

    One Cholesky solve is made per distinct pattern of known columns. The
    cost per draw does not depend on the number of fitted rows; scoring a
    known value is a binary search over its column's values.

    Assumptions and weak points: the dependence is that of a Gaussian
    after monotone transforms of the columns, so it captures monotone
    dependence only. Non-monotone dependence (``X2 = X1**2 + noise``), tail
    dependence, clusters and dependence that changes with the level are
    lost: the draws are then close to the marginal ones. For discrete
    columns with few values the scores of ties attenuate the correlations.
    The empirical margins are noisy in the tails (the standard error of a
    score is ``sqrt(F (1 - F) / n) / phi(z)``, 0.06 at two standard
    deviations for n = 2000), values between observed ones are never
    generated, and values outside the fitted range are conditioned on as
    the nearest extreme: there is no extrapolation.

    Parameters
    ----------
    shrinkage : float, default=1e-3
        Weight of the identity in the shrunk correlation matrix, in [0, 1).
        The default changes correlations by 0.1 % and bounds the condition
        number of every conditional solve by about ``p / shrinkage``; 0
        turns it off, and duplicated columns then make the solves fail.

    Attributes
    ----------
    correlation_ : ndarray of shape (n_features_in_, n_features_in_)
        Shrunk correlation matrix of the normal scores (0 off the diagonal
        for constant columns).
    quantiles_ : ndarray of shape (n_samples_fit_, n_features_in_)
        Sorted values of each column: the inverse empirical CDFs.
    levels_ : list of ndarray
        Distinct values of each column, increasing.
    level_scores_ : list of ndarray
        Normal score of each distinct value of each column.
    n_samples_fit_ : int
        Number of rows seen during :term:`fit`.
    n_features_in_ : int
        Number of features seen during :term:`fit`.
    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        Names of features seen during :term:`fit`. Defined only when `X`
        has feature names that are all strings.

    See Also
    --------
    KNeighborsSampler : Nonparametric draws of real rows near the known values.
    """

    _min_rows = 2

    _parameter_constraints = {
        "shrinkage": [Interval(Real, 0, 1, closed="left")],
    }

    def __init__(self, *, shrinkage=1e-3):
        self.shrinkage = shrinkage

    @_fit_context(prefer_skip_nested_validation=True)
    @transactional_fit
    def fit(self, X, y=None):
        """Fit the empirical margins and the correlation of the normal scores.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Numeric data without missing values, at least 2 rows.
        y : None
            Ignored.

        Returns
        -------
        self : GaussianCopulaSampler
            The fitted sampler.
        """
        X = self._check_fit_X(X)
        n, p = X.shape
        self.quantiles_ = np.asfortranarray(np.sort(X, axis=0))
        levels, level_scores = [], []
        for j in range(p):
            values, counts = np.unique(self.quantiles_[:, j], return_counts=True)
            below = np.cumsum(counts) - counts
            levels.append(values)
            level_scores.append(ndtri((below + counts / 2.0) / n))
        self.levels_, self.level_scores_ = levels, level_scores
        scores = self._scores(X, np.arange(p))
        centred = scores - scores.mean(axis=0)
        norms = np.sqrt((centred**2).sum(axis=0))
        ok = norms > 0
        corr = np.zeros((p, p))
        unit = centred[:, ok] / norms[ok]
        corr[np.ix_(ok, ok)] = np.clip(unit.T @ unit, -1.0, 1.0)
        corr = (1.0 - self.shrinkage) * corr
        np.fill_diagonal(corr, 1.0)
        self.correlation_ = corr
        self.n_samples_fit_ = n
        return self

    def _scores(self, values, columns):
        out = np.empty(values.shape)
        for i, j in enumerate(columns):
            out[:, i] = np.interp(values[:, i], self.levels_[j], self.level_scores_[j])
        return out

    def _draw(self, Xk, kept, unknown, n_draws, keys, state):
        R = self.correlation_
        R_uu = R[np.ix_(unknown, unknown)]
        try:
            if kept.size:
                factor = cho_factor(R[np.ix_(kept, kept)], lower=True)
                B = cho_solve(factor, R[np.ix_(kept, unknown)])  # (|K|, |U|)
                mean = self._scores(Xk, kept) @ B
                cov = R_uu - R[np.ix_(unknown, kept)] @ B
            else:
                mean = np.zeros((Xk.shape[0], unknown.size))
                cov = R_uu
            chol = np.linalg.cholesky((cov + cov.T) / 2.0)
        except np.linalg.LinAlgError:
            raise ValueError(
                "GaussianCopulaSampler: the correlation of the normal scores is "
                f"singular given the known columns {kept.tolist()} (collinear or "
                f"duplicated columns, shrinkage={self.shrinkage}); fit with a "
                "larger shrinkage, e.g. the default 1e-3."
            ) from None
        n_fit = self.n_samples_fit_
        # the inverse empirical CDF of column j at u is its sorted value
        # number floor(u * n), read from the flat column-major table
        table = self.quantiles_.T.ravel()
        offset = unknown * n_fit
        out = np.empty((Xk.shape[0], n_draws, unknown.size))
        # number (t, j) of a row's stream drives draw t of column j
        counters = np.arange(n_draws)[:, None] * self.n_features_in_ + unknown
        for a, b in _row_blocks(Xk.shape[0], 3 * n_draws * unknown.size):
            z = ndtri(_uniforms(keys[a:b], counters)) @ chol.T
            z += mean[a:b, None, :]
            idx = (ndtr(z) * n_fit).astype(np.intp)
            np.minimum(idx, n_fit - 1, out=idx)
            idx += offset
            out[a:b] = table[idx]
        return out


# -- nearest neighbours -----------------------------------------------------------
class KNeighborsSampler(_BaseConditionalSampler):
    """Conditional draws of real rows that are near in the known columns.

    Columns are standardised in :meth:`fit` (centred, divided by their
    standard deviation; constant columns are only centred). For each row,
    the ``n_neighbors`` fitted rows nearest in the known columns alone
    (Euclidean distance on the standardised values) are found by brute
    force, once per distinct pattern of known columns and in row blocks
    bounded by scikit-learn's ``working_memory``; ``n_draws`` of them are
    drawn uniformly with replacement, or, when ``n_draws`` equals the
    number of neighbours, all of them are taken, nearest first. Their
    values fill the unknown columns. Ties in distance (discrete known
    columns) are broken by a random order of the fitted rows, drawn from
    the seed. A row with no known column draws rows
    uniformly from all fitted rows: the empirical joint distribution. This
    is the nonparametric, empirical flavour of the conditional approach of
    Aas, Jullum & Løland (Artificial Intelligence, 2021), with a fixed
    number of neighbours in place of kernel weights.

    Assumptions and weak points: no model of the dependence, so
    non-monotone and local dependence are kept, and every draw is a real
    row (no impossible combinations). The price is the curse of
    dimension: with many known columns or few rows the neighbours are far
    away and the draws drift towards the marginal distribution (bias);
    with a small ``n_neighbors`` the estimate of a conditional mean rests
    on few rows (variance, about ``var / n_neighbors``). Known values
    outside the data are matched to the nearest edge, so the method does
    not extrapolate. Scale matters: standardisation treats one standard
    deviation of every column alike, and one-hot or heavy-tailed columns
    may deserve a transform first. The cost grows linearly with the
    number of fitted rows (about ``n_samples_fit_ * |S|`` operations per
    row and pattern).

    Parameters
    ----------
    n_neighbors : int, default=50
        Number of nearest fitted rows to draw from. Fewer are used when
        the data has fewer rows (see ``n_neighbors_``).

    Attributes
    ----------
    n_neighbors_ : int
        Neighbours actually used: ``min(n_neighbors, n_samples_fit_)``.
    fit_X_ : ndarray of shape (n_samples_fit_, n_features_in_)
        The fitted rows, as given.
    mean_ : ndarray of shape (n_features_in_,)
        Column means used for standardising.
    scale_ : ndarray of shape (n_features_in_,)
        Column standard deviations used for standardising (1 for
        constant columns).
    n_samples_fit_ : int
        Number of rows seen during :term:`fit`.
    n_features_in_ : int
        Number of features seen during :term:`fit`.
    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        Names of features seen during :term:`fit`. Defined only when `X`
        has feature names that are all strings.

    See Also
    --------
    GaussianCopulaSampler : Parametric draws from a Gaussian copula.
    """

    _parameter_constraints = {
        "n_neighbors": [Interval(Integral, 1, None, closed="left")],
    }

    def __init__(self, n_neighbors=50):
        self.n_neighbors = n_neighbors

    @_fit_context(prefer_skip_nested_validation=True)
    @transactional_fit
    def fit(self, X, y=None):
        """Store the rows and the column scales.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Numeric data without missing values.
        y : None
            Ignored.

        Returns
        -------
        self : KNeighborsSampler
            The fitted sampler.
        """
        X = self._check_fit_X(X)
        self.fit_X_ = np.array(X, dtype=np.float64, order="C")
        self.mean_ = X.mean(axis=0)
        scale = X.std(axis=0)
        scale[~(scale > 1e-12 * np.maximum(1.0, np.abs(self.mean_)))] = 1.0
        self.scale_ = scale
        self.n_samples_fit_ = X.shape[0]
        self.n_neighbors_ = int(min(self.n_neighbors, X.shape[0]))
        return self

    def _sampling_state(self, seed):
        # a random order of the fitted rows, from the seed alone, breaks ties
        # in distance
        return np.random.default_rng(seed).permutation(self.n_samples_fit_)

    def _picks(self, keys, n_draws, size):
        """Draw t of each row: an index in range(size), uniformly."""
        u = _uniforms(keys ^ _PICK, np.arange(n_draws))
        return np.minimum((u * size).astype(np.intp), size - 1)

    def _draw(self, Xk, kept, unknown, n_draws, keys, order):
        m, n_fit, k = Xk.shape[0], self.n_samples_fit_, self.n_neighbors_
        if kept.size == 0:
            rows = order[self._picks(keys, n_draws, n_fit)]
            return self.fit_X_[rows[..., None], unknown]
        ref = (self.fit_X_[np.ix_(order, kept)] - self.mean_[kept]) / self.scale_[kept]
        ref_sq = np.einsum("ij,ij->i", ref, ref)
        # squared distance up to the row's own |q|^2: |r|^2 - 2 q.r
        query = -2.0 * (Xk - self.mean_[kept]) / self.scale_[kept]
        out = np.empty((m, n_draws, unknown.size))
        for a, b in _row_blocks(m, 2 * n_fit):
            dist = query[a:b] @ ref.T
            dist += ref_sq
            if k < n_fit:
                near = np.argpartition(dist, k - 1, axis=1)[:, :k]
            else:
                near = np.broadcast_to(np.arange(n_fit), (b - a, n_fit))
            rank = np.argsort(np.take_along_axis(dist, near, axis=1), axis=1,
                              kind="stable")
            near = np.take_along_axis(near, rank, axis=1)
            if n_draws != k:
                pick = self._picks(keys[a:b], n_draws, k)
                near = np.take_along_axis(near, pick, axis=1)
            out[a:b] = self.fit_X_[order[near][..., None], unknown]
        return out
