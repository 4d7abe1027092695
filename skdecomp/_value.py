"""Coalition values of a model over groups of columns (paper-spec §1.2, §7.1).

For explained rows x, background rows z and a partition into K groups, the
coalition value of a subset S of groups is

    v_x(S) = mean_{z in B} f(x_{G_S}, z_{-G_S}).

Hybrid rows are built at the level of the raw input columns, so a pipeline
that one-hot encodes a column sees that column move as one. Rows are built and
sent to the model in chunks of at most ``batch_size`` rows.
"""

# SPDX-License-Identifier: BSD-3-Clause

import numbers

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator, RegressorMixin, is_classifier
from sklearn.exceptions import NotFittedError
from sklearn.utils.validation import check_is_fitted
from joblib import effective_n_jobs
from sklearn.utils.parallel import Parallel, delayed

from ._kernels import mean_over_background

__all__ = [
    "Table",
    "ResponseFunction",
    "as_model",
    "resolve_response",
    "coalition_values",
]

RESPONSE_METHODS = ("predict", "predict_proba", "decision_function")


class Table:
    """Column store of a 2-D array or DataFrame that can build hybrid rows.

    Parameters
    ----------
    X : ndarray of shape (n_rows, n_features) or DataFrame
    dtypes : list of dtypes or None
        For DataFrames, the dtypes seen at fit; categorical columns are
        re-coded to a common set of categories so codes can be mixed.
    """

    def __init__(self, X, dtypes=None):
        self.is_frame = isinstance(X, pd.DataFrame)
        self.n_rows = X.shape[0]
        if not self.is_frame:
            self.array = np.asarray(X)
            return
        self.columns = list(X.columns)
        self.dtypes = list(X.dtypes) if dtypes is None else list(dtypes)
        self.data = []
        for j, name in enumerate(self.columns):
            self.data.append(self._encode(X.iloc[:, j], self.dtypes[j]))

    @staticmethod
    def _encode(series, dtype):
        if isinstance(dtype, pd.CategoricalDtype):
            return pd.Categorical(series, dtype=dtype).codes.astype(np.int64)
        if isinstance(series.dtype, np.dtype):
            return series.to_numpy()
        return series.to_numpy(dtype=object)

    @staticmethod
    def _decode(values, dtype):
        if isinstance(dtype, pd.CategoricalDtype):
            return pd.Categorical.from_codes(values, dtype=dtype)
        if isinstance(dtype, np.dtype):
            return values
        return pd.array(values, dtype=dtype)

    def hybrids(self, background, rows, column_masks):
        """Hybrid rows (x_{G_S}, z_{-G_S}) for each pair and background row.

        Parameters
        ----------
        background : Table
        rows : ndarray of shape (n_pairs,)
            Row of ``self`` for each pair.
        column_masks : ndarray of shape (n_pairs, n_features), bool
            True where the column is taken from x.

        Returns
        -------
        data : ndarray or DataFrame with n_pairs * background.n_rows rows,
            ordered pair-major.
        """
        n_pairs = rows.shape[0]
        n_bg = background.n_rows
        if not self.is_frame:
            x = self.array[rows][:, None, :]
            z = background.array[None, :, :]
            out = np.where(column_masks[:, None, :], x, z)
            return out.reshape(n_pairs * n_bg, -1)
        cols = {}
        for j, name in enumerate(self.columns):
            xj = self.data[j][rows][:, None]
            zj = background.data[j][None, :]
            vals = np.where(column_masks[:, j][:, None], xj, zj).reshape(-1)
            cols[name] = self._decode(vals, self.dtypes[j])
        return pd.DataFrame(cols, copy=False)

    def rows(self, rows):
        """The rows ``rows`` in the input format, for direct model calls."""
        if not self.is_frame:
            return self.array[rows]
        return pd.DataFrame(
            {
                name: self._decode(self.data[j][rows], self.dtypes[j])
                for j, name in enumerate(self.columns)
            },
            copy=False,
        )


def common_dtypes(fit_dtypes, X):
    """Dtypes under which fit-time and new categorical columns share codes."""
    out = []
    for fit_dtype, new_dtype in zip(fit_dtypes, X.dtypes):
        if isinstance(fit_dtype, pd.CategoricalDtype) and fit_dtype != new_dtype:
            cats = list(fit_dtype.categories)
            if isinstance(new_dtype, pd.CategoricalDtype):
                extra = [c for c in new_dtype.categories if c not in set(cats)]
            else:
                seen = set(cats)
                extra = [c for c in pd.unique(X[X.columns[len(out)]].dropna()) if c not in seen]
            fit_dtype = pd.CategoricalDtype(cats + extra, ordered=fit_dtype.ordered)
        out.append(fit_dtype)
    return out


class FunctionModel(RegressorMixin, BaseEstimator):
    """A plain callable ``f(X) -> array`` seen as a fitted regressor."""

    def __init__(self, function):
        self.function = function

    def predict(self, X):
        return self.function(X)

    def __sklearn_is_fitted__(self):
        return True


def is_fitted(estimator):
    """Whether a model is fitted; objects without ``fit`` count as fitted."""
    if not hasattr(estimator, "fit"):
        return True
    try:
        check_is_fitted(estimator)
    except NotFittedError:
        return False
    return True


def as_model(estimator):
    """The estimator itself, or a callable wrapped as a fitted regressor."""
    if any(
        hasattr(estimator, m)
        for m in ("fit", "predict", "predict_proba", "decision_function")
    ):
        return estimator
    return FunctionModel(estimator)


class ResponseFunction:
    """Calls one response method of a fitted model and returns a 2-D float array.

    Parameters
    ----------
    estimator : fitted estimator
    method : str
    columns : ndarray of int or None
        Output columns to keep; None keeps all.
    sign : float
        -1 to score the negative class of a binary ``decision_function``.
    """

    def __init__(self, estimator, method, columns=None, sign=1.0):
        self.estimator = estimator
        self.method = method
        self.columns = columns
        self.sign = sign

    def __call__(self, data):
        out = np.asarray(getattr(self.estimator, self.method)(data))
        if out.ndim == 1:
            out = out[:, None]
        if self.columns is not None:
            out = out[:, self.columns]
        if not np.issubdtype(out.dtype, np.number) or np.issubdtype(
            out.dtype, np.complexfloating
        ):
            raise ValueError(
                f"{type(self.estimator).__name__}.{self.method} returned values of "
                f"dtype {out.dtype}, which cannot be averaged; explain a numeric "
                "output instead (response_method='predict_proba' or "
                "'decision_function' for classifiers)."
            )
        out = out.astype(np.float64, copy=False)
        if self.sign != 1.0:
            out = self.sign * out
        return out


def resolve_response(estimator, response_method, target, probe):
    """Choose the response method and the output columns to explain.

    Parameters
    ----------
    estimator : fitted estimator
    response_method : {"auto", "predict", "predict_proba", "decision_function"}
    target : None, class label or int
        None explains every output, except the positive class only for a
        binary classifier's probabilities. A class label (classifiers) or an
        output index (multi-output regressors) picks one output.
    probe : data accepted by the estimator, used to learn the output shape.

    Returns
    -------
    response : ResponseFunction
    output_names : list of str
    """
    name = type(estimator).__name__
    if response_method == "auto":
        candidates = (
            ("predict_proba", "decision_function", "predict")
            if _is_classifier(estimator)
            else ("predict",)
        )
        method = next((m for m in candidates if hasattr(estimator, m)), None)
        if method is None:
            raise ValueError(
                f"{name} has none of the methods {list(candidates)}; pass a "
                "fitted model with one of them."
            )
    else:
        method = response_method
        if not hasattr(estimator, method):
            available = [m for m in RESPONSE_METHODS if hasattr(estimator, m)]
            raise ValueError(
                f"{name} has no method {method!r}; use response_method='auto' "
                f"or one of {available}."
            )
    raw = np.asarray(getattr(estimator, method)(probe))
    n_out = 1 if raw.ndim == 1 else raw.shape[1]
    classes = getattr(estimator, "classes_", None)
    by_class = method in ("predict_proba", "decision_function") and classes is not None

    if by_class:
        classes = np.asarray(classes)
        if classes.ndim != 1:
            raise ValueError(
                f"{name} has several targets (classes_ is not 1-D); explaining "
                "multi-output classifiers is not supported."
            )
        labels = [str(c) for c in classes]
        if target is None:
            if n_out == 1:
                return ResponseFunction(estimator, method), [labels[-1]]
            if method == "predict_proba" and len(classes) == 2:
                return ResponseFunction(estimator, method, np.array([1])), [labels[1]]
            return ResponseFunction(estimator, method), labels
        matches = np.flatnonzero(classes == target) if _comparable(classes, target) else []
        if len(matches) == 0:
            raise ValueError(
                f"target={target!r} is not a class of {name}; the classes are "
                f"{classes.tolist()}."
            )
        idx = int(matches[0])
        if n_out == 1:
            # binary decision_function scores classes_[1]; its negative scores classes_[0]
            sign = 1.0 if idx == 1 else -1.0
            return ResponseFunction(estimator, method, sign=sign), [labels[idx]]
        return ResponseFunction(estimator, method, np.array([idx])), [labels[idx]]

    if target is None:
        names = ["y"] if n_out == 1 else [f"y{o}" for o in range(n_out)]
        return ResponseFunction(estimator, method), names
    if (
        not isinstance(target, numbers.Integral)
        or isinstance(target, bool)
        or not 0 <= target < n_out
    ):
        raise ValueError(
            f"target={target!r} is invalid for {name}.{method}, which has "
            f"{n_out} output(s); give an output index in [0, {n_out - 1}] or None."
        )
    return ResponseFunction(estimator, method, np.array([int(target)])), [f"y{target}"]


def _is_classifier(estimator):
    """is_classifier that also accepts models without scikit-learn tags."""
    try:
        return is_classifier(estimator)
    except (AttributeError, TypeError):
        return getattr(estimator, "_estimator_type", None) == "classifier" or (
            hasattr(estimator, "classes_") and hasattr(estimator, "predict_proba")
        )


def _comparable(classes, target):
    try:
        np.asarray(classes == target)
    except Exception:  # pragma: no cover - exotic label types
        return False
    return True


def column_masks(masks, labels):
    """Boolean (n_masks, n_features): column j is taken from x under mask S.

    ``masks`` is either a 1-D array of int64 bitmasks (at most 63 groups) or
    a boolean array of shape (n_masks, n_groups), one coalition per row.
    """
    masks = np.asarray(masks)
    if masks.ndim == 2 and masks.dtype == bool:
        return masks[:, labels]
    masks = masks.astype(np.int64, copy=False)
    return ((masks[:, None] >> labels[None, :]) & 1).astype(bool)


def _evaluate_chunk(response, table, background, rows, cmasks, average):
    data = table.hybrids(background, rows, cmasks)
    preds = np.ascontiguousarray(response(data))
    if not average:
        return preds
    return mean_over_background(preds, background.n_rows)


def _evaluate_chunks(response, table, background, chunks, average):
    return np.concatenate(
        [
            _evaluate_chunk(response, table, background, rows, cmasks, average)
            for rows, cmasks in chunks
        ],
        axis=0,
    )


def coalition_values(
    response,
    table,
    background,
    labels,
    masks,
    *,
    batch_size,
    n_jobs=None,
    average=True,
    progress=None,
):
    """Coalition values v_x(S) for every explained row and every mask.

    Parameters
    ----------
    response : ResponseFunction
    table : Table of explained rows
    background : Table of background rows
    labels : ndarray of shape (n_features,), group of each column
    masks : ndarray of int64 bitmasks, or bool of shape (n_masks, n_groups),
        the coalitions to evaluate (the boolean form has no limit on the
        number of groups)
    batch_size : int, maximum rows per model call (at least one pair of
        ``background.n_rows`` rows is sent at once)
    n_jobs : int or None, joblib workers over chunks
    average : bool, default=True
        Average over the background rows. When False, return the model
        output at every hybrid, f(x^n_{G_S}, z^m_{-G_S}): the anchored values
        behind the N x N matrices of paper-spec §1.2 and §4.2.
    progress : str or None
        Show a progress bar with this label over the chunks.

    Returns
    -------
    values : ndarray of shape (n_rows, n_masks, n_outputs), or
        (n_rows, n_masks, n_background, n_outputs) when ``average=False``.
    """
    masks = np.asarray(masks)
    if not (masks.ndim == 2 and masks.dtype == bool):
        masks = masks.astype(np.int64, copy=False)
    n_rows, n_masks, n_bg = table.n_rows, masks.shape[0], background.n_rows
    n_pairs = n_rows * n_masks
    cmask_table = column_masks(masks, labels)
    n_workers = effective_n_jobs(n_jobs)
    pairs_per_chunk = max(1, int(batch_size) // n_bg)
    if n_workers > 1:
        # at least one chunk per worker, so that small jobs run in parallel too
        pairs_per_chunk = max(1, min(pairs_per_chunk, -(-n_pairs // n_workers)))
    starts = range(0, n_pairs, pairs_per_chunk)

    def chunk(start):
        pairs = np.arange(start, min(start + pairs_per_chunk, n_pairs))
        return pairs // n_masks, cmask_table[pairs % n_masks]

    if n_pairs == 0:
        raise ValueError("coalition_values needs at least one row and one mask.")
    if n_workers == 1 or len(starts) == 1:
        results = (
            _evaluate_chunk(response, table, background, *chunk(s), average)
            for s in starts
        )
        total = len(starts)
    else:
        # A task takes several chunks, so the model is sent to workers a few
        # times rather than once per chunk; joblib returns tasks in order, so
        # results do not depend on n_jobs or on the backend (e.g. dask).
        per_task = -(-len(starts) // (4 * n_workers))
        tasks = [starts[i : i + per_task] for i in range(0, len(starts), per_task)]
        results = Parallel(n_jobs=n_jobs, return_as="generator")(
            delayed(_evaluate_chunks)(
                response, table, background, [chunk(s) for s in task], average
            )
            for task in tasks
        )
        total = len(tasks)
    if progress:
        from tqdm.auto import tqdm

        results = tqdm(results, total=total, desc=progress)
    results = list(results)
    values = np.concatenate(results, axis=0)
    if average:
        return values.reshape(n_rows, n_masks, -1)
    return values.reshape(n_rows, n_masks, n_bg, -1)
