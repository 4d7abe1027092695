"""Model adapters: the response of a fitted model as a 2-D float array.

A plain callable is seen as a fitted regressor; a classifier's output is
chosen by ``response_method`` and ``target``. :class:`ResponseFunction` is the
one place that calls the model: it checks the shape, dtype and finiteness of
what the model returns.
"""

# SPDX-License-Identifier: BSD-3-Clause

import numbers
import sys
import warnings
from functools import partial

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator, RegressorMixin, clone, is_classifier
from sklearn.ensemble import (
    ExtraTreesClassifier,
    GradientBoostingClassifier,
    HistGradientBoostingClassifier,
    RandomForestClassifier,
)
from sklearn.exceptions import NotFittedError
from sklearn.pipeline import Pipeline
from sklearn.tree import DecisionTreeClassifier
from sklearn.utils.validation import check_is_fitted

from ._boosters import (
    _MARGIN_CALLS,
    BOOSTER_LIBRARIES,
    _XGBoostMargin,
    _xgb_booster_predict,
    booster_library,
    booster_n_classes,
    is_raw_booster,
)
from ._compat import HasMethods
from ._polars import pandas_to_polars, polars_to_pandas

__all__ = [
    "FrameContainer",
    "FunctionModel",
    "LazyFrames",
    "ClippedLogOddsWarning",
    "InvalidProbabilityError",
    "NonFiniteOutputError",
    "ResponseFunction",
    "SCALE_NAMES",
    "as_model",
    "auto_response",
    "fitted_model",
    "describe_response",
    "is_fitted",
    "check_probabilities",
    "collect",
    "log_odds",
    "non_numeric_columns",
    "read_frame",
    "resolve_response",
    "to_pandas",
]

RESPONSE_METHODS = ("predict", "predict_proba", "decision_function", "log_odds", "margin")

# Probabilities are clipped to [_PROBA_EPS, 1] before their log is taken.
_PROBA_EPS = np.finfo(np.float64).eps
# How far probabilities may leave [0, 1], and their rows' sums 1 (float32 models).
_PROBA_TOL = 1e-5


class InvalidProbabilityError(ValueError):
    """The model's ``predict_proba`` returned values that are not probabilities.

    Attributes
    ----------
    rows : ndarray of int
        Positions, among the rows of the call, of the invalid rows.
    """

    def __init__(self, message, rows):
        super().__init__(message)
        self.rows = rows


def check_probabilities(name, proba):
    """Raise unless every row of ``proba`` is a probability distribution.

    Every value must lie in [0, 1] and, with two or more columns, every row
    must sum to 1, both within ``_PROBA_TOL``. NaN and infinity are left to
    the finiteness check.

    Parameters
    ----------
    name : str
        ``Model.method``, for the message.
    proba : ndarray of shape (n,) or (n, n_classes)
        What the model's ``predict_proba`` returned.

    Raises
    ------
    InvalidProbabilityError
        Naming the invalid rows and what to do.
    """
    p = np.asarray(proba, dtype=np.float64)
    if p.ndim == 1:
        p = p[:, None]
    with np.errstate(invalid="ignore"):
        finite = np.isfinite(p).all(axis=1)
        outside = finite & ((p < -_PROBA_TOL) | (p > 1 + _PROBA_TOL)).any(axis=1)
        unsummed = np.zeros_like(outside)
        if p.shape[1] >= 2:
            unsummed = finite & ~outside & (np.abs(p.sum(axis=1) - 1.0) > _PROBA_TOL)
    bad = np.flatnonzero(outside | unsummed)
    if bad.size == 0:
        return
    first = int(bad[0])
    problem = (
        f"values outside [0, 1] (row {first}: {np.round(p[first], 6).tolist()})"
        if outside[first]
        else f"rows that do not sum to 1 (row {first} sums to {p[first].sum():.6g})"
    )
    raise InvalidProbabilityError(
        f"{name} returned {problem} on {bad.size} of {p.shape[0]} rows "
        f"(rows {bad[:10].tolist()}{' ...' if bad.size > 10 else ''}); these are "
        "not probabilities. Fix the model's predict_proba (e.g. calibrate it with "
        "sklearn.calibration.CalibratedClassifierCV), or, if it returns a score, "
        "explain that score with response_method='predict' or 'decision_function'.",
        bad,
    )


def log_odds(proba):
    """Log-odds of class probabilities, finite even where a probability is 0.

    Parameters
    ----------
    proba : ndarray of shape (n, n_classes)
        Class probabilities, one row per sample.

    Returns
    -------
    log_odds : ndarray of shape (n, 1) or (n, n_classes)
        Binary: ``log(p_1 / p_0)``, the logit of the second class, one
        column. Multiclass: the centred log-probabilities
        ``log p_c - mean_c' log p_c'``, which sum to 0 over the classes.
        Probabilities are clipped to ``[eps, 1]`` (``eps`` the float64
        machine epsilon), so the values stay within about ±36.
    """
    logp = np.log(np.clip(np.asarray(proba, dtype=np.float64), _PROBA_EPS, 1.0))
    if logp.shape[1] == 2:
        return logp[:, 1:] - logp[:, :1]
    return logp - logp.mean(axis=1, keepdims=True)


def _polars(X, name):
    """Whether X is a polars ``DataFrame`` or ``LazyFrame`` (``name``).

    A polars frame exists only once polars is imported: it is not imported here.
    """
    cls = getattr(sys.modules.get("polars"), name, None)
    return cls is not None and isinstance(X, cls)


def _is_polars_frame(X):
    return _polars(X, "DataFrame")


def collect(X):
    """``X.collect()`` for a polars LazyFrame; anything else as is.

    The functions that take a table collect a LazyFrame once per call (they
    read every row anyway); collect it yourself to reuse it over calls.
    """
    return X.collect() if _polars(X, "LazyFrame") else X


def to_pandas(X):
    """A polars DataFrame or LazyFrame (collected) as pandas; anything else as is.

    Column names and types are kept: text stays text, and ``Categorical``
    and ``Enum`` columns become pandas categories.

    Parameters
    ----------
    X : object
        Rows, of any container.

    Returns
    -------
    X : object
        A pandas DataFrame for a polars DataFrame or LazyFrame, else X itself.
    """
    X = collect(X)
    return polars_to_pandas(X) if _is_polars_frame(X) else X


def read_frame(X):
    """``(to_pandas(X), FrameContainer.of(X))``, a LazyFrame collected once."""
    X = collect(X)
    return to_pandas(X), FrameContainer.of(X)


class LazyFrames(HasMethods):
    """Parameter constraint: a polars LazyFrame, collected ("array-like" refuses it)."""

    def __init__(self):
        super().__init__(["collect", "collect_schema"])

    def is_satisfied_by(self, val):
        return _polars(val, "LazyFrame")

    def __str__(self):
        return "a polars LazyFrame (it is collected)"


class FrameContainer:
    """Turns pandas rows back into polars rows with the column types of X.

    A model fitted on a polars DataFrame is called with one, with the column
    names and types of the rows it was fitted on, so that scikit-learn finds
    the feature names it was fitted with.

    Parameters
    ----------
    X : polars DataFrame or LazyFrame
        Rows whose column types the model is given (a LazyFrame's schema is
        read without collecting it).
    """

    def __init__(self, X):
        if not (_is_polars_frame(X) or _polars(X, "LazyFrame")):
            raise TypeError(f"{type(X).__name__} is not a polars DataFrame.")
        self.schema = dict(X.collect_schema())

    @classmethod
    def of(cls, X):
        """The container of X: None for anything but a polars DataFrame or LazyFrame."""
        return cls(X) if _is_polars_frame(X) or _polars(X, "LazyFrame") else None

    def __call__(self, frame):
        """The pandas DataFrame ``frame`` as a polars DataFrame."""
        out = pandas_to_polars(frame)
        schema = {c: t for c, t in self.schema.items() if c in out.columns}
        return out.cast(schema)


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


def fitted_model(estimator, X, y, owner, container=None):
    """The model to explain: a fitted model as is, else a clone fitted on (X, y).

    Parameters
    ----------
    estimator : estimator or callable
        The model given by the user; a plain callable is a fitted regressor.
    X, y : array-like
        Data to fit an unfitted model on (a polars LazyFrame is collected).
    owner : str
        Name of the estimator that explains the model, for messages.
    container : FrameContainer or None, default=None
        For pandas rows read from polars rows: the model is fitted on the
        polars rows, which it is then called with.

    Returns
    -------
    model : estimator
    """
    estimator = as_model(estimator)
    if is_fitted(estimator):
        return estimator
    if y is None:
        raise ValueError(
            f"This {owner} estimator requires y to be passed, but the target y "
            f"is None: {type(estimator).__name__} is not fitted, so fit(X, y) "
            "fits it first. Pass y, or pass a fitted model (wrap it in "
            "sklearn.frozen.FrozenEstimator to keep it fitted when cloned, "
            "e.g. in GridSearchCV)."
        )
    X = collect(X)
    if container is not None and isinstance(X, pd.DataFrame):
        X = container(X)
    try:
        return clone(estimator).fit(X, y)
    except (ValueError, TypeError) as exc:
        _raise_input_error(exc, type(estimator).__name__, X, "X")
        raise


def non_numeric_columns(X):
    """Columns of X that are not numbers (text, categories, dates).

    Booleans and complex numbers count as numbers. Object columns count as
    numbers when every value converts to a float.

    Parameters
    ----------
    X : ndarray or DataFrame of shape (n_samples, n_features)
        The data.

    Returns
    -------
    columns : list
        The names (DataFrames) or positions (arrays) of the columns that
        are not numbers.
    """
    if isinstance(X, pd.DataFrame):
        bad = []
        for j, (name, dtype) in enumerate(zip(X.columns, X.dtypes)):
            if pd.api.types.is_numeric_dtype(dtype):  # booleans included
                continue
            if dtype == object and _converts_to_float(X.iloc[:, j].to_numpy()):
                continue
            bad.append(name)
        return bad
    arr = np.asarray(X)
    if arr.ndim != 2 or arr.dtype.kind in "biufc":
        return []
    if arr.dtype.kind != "O":
        return list(range(arr.shape[1]))
    return [j for j in range(arr.shape[1]) if not _converts_to_float(arr[:, j])]


def _converts_to_float(values):
    if any(isinstance(v, (str, bytes)) for v in values):
        return False
    try:
        np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError):
        return False
    return True


def _has_non_finite(X):
    """Whether the numeric columns of X hold NaN or infinity."""
    if isinstance(X, pd.DataFrame):
        num = X.select_dtypes(include=[np.number])
        values = num.to_numpy(dtype=np.float64, na_value=np.nan) if num.shape[1] else None
    else:
        arr = np.asarray(X)
        values = arr if arr.dtype.kind in "iuf" else None
    return values is not None and not np.all(np.isfinite(values))


def _raise_input_error(exc, model_name, X, what):
    """Re-raise a model's failure on X with a message naming the cause and the fix.

    The error stays a TypeError when the model raised one, else it is a
    ValueError. Does nothing when X has neither non-numeric columns nor NaN
    or infinity, so that the caller re-raises the original error.
    """
    first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
    error = TypeError if isinstance(exc, TypeError) else ValueError
    columns = non_numeric_columns(X)
    if columns:
        if isinstance(X, pd.DataFrame):
            kinds = sorted({str(dt) for c, dt in zip(X.columns, X.dtypes) if c in columns})
        else:
            kinds = [str(np.asarray(X).dtype)]
        shown = [c.item() if isinstance(c, np.generic) else c for c in columns[:10]]
        more = f" (and {len(columns) - 10} more)" if len(columns) > 10 else ""
        if "categorical_feature" in first:
            # LightGBM was fitted with these columns as pandas categories
            raise error(
                f"{what} has the columns {shown}{more} as {', '.join(kinds)}, but "
                f"{model_name} was fitted with them as pandas categories ({first}); "
                "pass them as categories too, with the categories of the data the "
                "model was fitted on (X[col].astype(fit_X[col].dtype))."
            ) from exc
        raise error(
            f"{what} has non-numeric columns {shown}{more} (dtype "
            f"{', '.join(kinds)}), which {model_name} cannot take ({first}). "
            "Encode them inside the model, e.g. make_pipeline(make_column_"
            "transformer((OneHotEncoder(), columns), remainder='passthrough'), "
            "model), or drop them; explanations then move each raw column as one."
        ) from exc
    if _has_non_finite(X):
        raise error(
            f"{what} contains NaN or infinity, which {model_name} cannot take "
            f"({first}). Impute or drop those values, or explain a model that "
            "accepts missing values (e.g. HistGradientBoosting* or a Pipeline "
            "with an imputer)."
        ) from exc


def as_model(estimator):
    """The estimator itself, or a callable wrapped as a fitted regressor."""
    if any(
        hasattr(estimator, m)
        for m in ("fit", "predict", "predict_proba", "decision_function")
    ):
        return estimator
    return FunctionModel(estimator)


class ClippedLogOddsWarning(UserWarning):
    """Log-odds of probabilities of 0 or 1 come from the clip, not the model."""


class NonFiniteOutputError(ValueError):
    """The model returned NaN or infinity.

    Attributes
    ----------
    rows : ndarray of int
        Positions, among the rows of the call, where an output is not finite.
    """

    def __init__(self, message, rows):
        super().__init__(message)
        self.rows = rows


def _n_rows(data):
    shape = getattr(data, "shape", None)
    return int(shape[0]) if shape is not None else len(data)


def _check_output_shape(name, out, n_rows):
    """Raise a ValueError unless ``out`` has one value or one row per input row."""
    if out.ndim == 0 or out.ndim > 2 or out.shape[0] != n_rows:
        hint = ""
        if out.ndim == 3:
            # scikit-learn's multi-output classifiers give one array per output
            hint = (" A multi-output classifier gives one probability array per "
                    "output: explain one output at a time, e.g. with a function "
                    "lambda X: model.predict_proba(X)[k][:, 1].")
        raise ValueError(
            f"{name} returned an array of shape {out.shape} for "
            f"{n_rows} input rows; it must return one value (shape (n,)) or "
            "one row of outputs (shape (n, n_outputs)) per input row." + hint
        )


class _Transformed:
    """A model function applied after the transforming steps of a Pipeline."""

    def __init__(self, steps, function):
        self.steps = steps
        self.function = function

    def __call__(self, X):
        for step in self.steps:
            X = step.transform(X)
        return self.function(X)


class _CatBoostMargin:
    """CatBoost's raw score, with the columns checked (CatBoost raises a C++ error)."""

    def __init__(self, model):
        self.model = model

    def __call__(self, X):
        expected = getattr(self.model, "n_features_in_", None)
        width = X.shape[1] if hasattr(X, "shape") and len(X.shape) == 2 else None
        if expected is not None and width is not None and width != expected:
            raise ValueError(
                f"{type(self.model).__name__} was fitted on {expected} columns, but X "
                f"has {width}; give the columns the model was fitted on, in the "
                "same order."
            )
        return self.model.predict(X, prediction_type="RawFormulaVal")


def _margin_function(estimator):
    """The function returning a model's margin, or raise a ValueError."""
    steps, final = _unwrap(estimator)
    library = booster_library(final)
    if library == "xgboost":
        function = _XGBoostMargin(final)
    elif library == "lightgbm":
        function = partial(final.predict, raw_score=True)
    elif library == "catboost":
        function = _CatBoostMargin(final)
    else:
        raise ValueError(_no_margin_message(estimator))
    return _Transformed(steps, function) if steps else function


def _no_margin_message(estimator):
    available = [m for m in RESPONSE_METHODS if m != "margin" and _has_method(estimator, m)]
    return (
        f"{type(estimator).__name__} has no margin: response_method='margin' is the "
        "raw score of XGBoost, LightGBM and CatBoost models (alone or at the end "
        f"of a Pipeline). Use response_method='auto' or one of {available}."
    )


def _has_method(estimator, method):
    """Whether the model has the response method."""
    if method == "margin":
        return booster_library(_unwrap(estimator)[1]) is not None
    return hasattr(estimator, _model_method(method))


def _model_function(estimator, method):
    """The function that returns the model's raw output for a response method."""
    if method == "margin":
        return _margin_function(estimator)
    if (method == "predict" and is_raw_booster(estimator)
            and booster_library(estimator) == "xgboost"):
        return partial(_xgb_booster_predict, estimator)
    return getattr(estimator, _model_method(method))


class ResponseFunction:
    """Calls one response method of a fitted model and returns a 2-D float array.

    Every model call of the package goes through it, so it is the one place
    that checks what the model returns: one row of output per input row, a
    numeric dtype, and finite values.

    Parameters
    ----------
    estimator : fitted estimator
    method : str
        ``"predict"``, ``"predict_proba"``, ``"decision_function"``,
        ``"log_odds"`` (the log-odds of ``predict_proba``, see
        :func:`log_odds`) or ``"margin"`` (the raw score of an XGBoost,
        LightGBM or CatBoost model before its link).
    columns : ndarray of int or None
        Output columns to keep; None keeps all.
    sign : float
        -1 to score the negative class of a binary ``decision_function``
        or of binary log-odds.
    container : FrameContainer or None, default=None
        For a model fitted on a polars DataFrame: pandas rows are converted
        to polars before each call (see :class:`FrameContainer`). None calls
        the model with the rows as given.
    """

    def __init__(self, estimator, method, columns=None, sign=1.0, container=None):
        self.estimator = estimator
        self.method = method
        self.columns = columns
        self.sign = sign
        self.container = container

    @property
    def model_method(self):
        """The method of the model that is called."""
        if self.method == "margin":
            library = booster_library(_unwrap(self.estimator)[1])
            return _MARGIN_CALLS.get(library, "margin")
        return _model_method(self.method)

    @property
    def name(self):
        """``Model.method``, for messages."""
        return f"{type(self.estimator).__name__}.{self.model_method}"

    def model_output(self, data):
        """The model's output for ``data`` as it returns it, unchecked."""
        function = self.__dict__.get("_function")
        if function is None:
            # built once: the margin of XGBoost reads the model's trees
            function = self._function = _model_function(self.estimator, self.method)
        if self.container is not None and isinstance(data, pd.DataFrame):
            data = self.container(data)
        return function(data)

    def select(self, columns=None, sign=1.0):
        """The same response with other output columns or sign."""
        response = ResponseFunction(
            self.estimator, self.method, columns, sign, self.container
        )
        if "_function" in self.__dict__:
            response._function = self._function
        return response

    def __call__(self, data):
        try:
            out = np.asarray(self.model_output(data))
        except (ValueError, TypeError) as exc:
            # text columns or missing values the model cannot take: say so
            _raise_input_error(exc, self.name, data, "X")
            raise
        n_rows = _n_rows(data)
        _check_output_shape(self.name, out, n_rows)
        if out.ndim == 1:
            out = out[:, None]
        if not np.issubdtype(out.dtype, np.number) or np.issubdtype(
            out.dtype, np.complexfloating
        ):
            raise ValueError(
                f"{self.name} returned values of "
                f"dtype {out.dtype}, which cannot be averaged; explain a numeric "
                "output instead (response_method='predict_proba' or "
                "'decision_function' for classifiers)."
            )
        if self.method in ("predict_proba", "log_odds"):
            check_probabilities(self.name, out)
        if self.method == "log_odds":
            if out.shape[1] < 2 or not np.isfinite(out).all():
                self._check_finite(out, n_rows)
                raise ValueError(
                    f"{self.name} returned {out.shape[1]} column; the log-odds "
                    "need one probability per class."
                )
            self._warn_clipped(out)
            out = log_odds(out)
        if self.columns is not None:
            out = out[:, self.columns]
        out = out.astype(np.float64, copy=False)
        if self.sign != 1.0:
            out = self.sign * out
        self._check_finite(out, n_rows)
        return out

    def _warn_clipped(self, proba):
        """Warn, once per response, when log-odds come from the clip, not the model."""
        clipped = (np.asarray(proba, dtype=np.float64) < _PROBA_EPS).any(axis=1)
        if not clipped.any() or self.__dict__.get("_clip_warned"):
            return
        self._clip_warned = True
        warnings.warn(
            f"{self.name} returned a probability of 0 or 1 on {clipped.sum()} of "
            f"{clipped.size} rows ({clipped.mean():.0%}); their log-odds are "
            f"±{-np.log(_PROBA_EPS):.0f}, set by clipping the probabilities at "
            f"{_PROBA_EPS:.1e}, not by the model, and so are the attributions of "
            "those rows. Explain the probabilities instead "
            "(response_method='predict_proba'), which forests and trees are "
            "additive on.",
            ClippedLogOddsWarning,
            stacklevel=3,
        )

    def _check_finite(self, out, n_rows):
        finite = np.isfinite(out).all(axis=1)
        if not finite.all():
            rows = np.flatnonzero(~finite)
            raise NonFiniteOutputError(
                f"{self.name} returned NaN or infinity on {rows.size} of the "
                f"{n_rows} rows it was given (first: row {rows[0]}). Explanations "
                "need a finite output on every row; make the model return finite "
                "values there (e.g. impute or clip its inputs in a Pipeline).",
                rows,
            )


def resolve_response(
    estimator, response_method, target, probe, what="the data", container=None
):
    """Choose the response method and the output columns to explain.

    Parameters
    ----------
    estimator : fitted estimator
    response_method : {"auto", "predict", "predict_proba", "decision_function", \
            "log_odds", "margin"}
        "auto" takes the scale on which the model is a sum over trees or
        terms, as :func:`auto_response` chooses it.
    target : None, class label or int
        None explains every output, except the positive class only for a
        binary classifier's probabilities. A class label (classifiers; the
        class index for a raw Booster with a classification objective) or an
        output index (multi-output regressors) picks one output.
    probe : data accepted by the estimator, used to learn the output shape.
    what : str, default="the data"
        Name of the probe's data in error messages.
    container : FrameContainer or None, default=None
        The dataframe library the model is called with (see
        :class:`ResponseFunction`).

    Returns
    -------
    response : ResponseFunction
    output_names : list of str
    """
    name = type(estimator).__name__
    if response_method == "auto":
        method = auto_response(estimator)[0]
    else:
        method = response_method
        if method == "margin" and not _has_method(estimator, method):
            raise ValueError(_no_margin_message(estimator))
        if not _has_method(estimator, method):
            available = [m for m in RESPONSE_METHODS if _has_method(estimator, m)]
            raise ValueError(
                f"{name} has no method {_model_method(method)!r}; use "
                f"response_method='auto' or one of {available}."
            )
    base = ResponseFunction(estimator, method, container=container)
    try:
        raw = np.asarray(base.model_output(probe))
    except (ValueError, TypeError) as exc:
        _raise_input_error(exc, base.name, probe, what)
        raise

    _check_output_shape(base.name, raw, _n_rows(probe))
    if method in ("predict_proba", "log_odds") and np.issubdtype(raw.dtype, np.number):
        check_probabilities(base.name, raw)
    if method == "log_odds" and raw.ndim == 2 and raw.shape[1] == 2:
        raw = raw[:, 1]  # binary log-odds: one column, like decision_function
    n_out = 1 if raw.ndim == 1 else raw.shape[1]
    classes = getattr(estimator, "classes_", None)
    if method == "margin":
        classes = _margin_classes(estimator)
    by_class = (
        method in ("predict_proba", "decision_function", "log_odds", "margin")
        and classes is not None
    )

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
                return base, [labels[-1]]
            if method == "predict_proba" and len(classes) == 2:
                return base.select(np.array([1])), [labels[1]]
            return base, labels
        matches = np.flatnonzero(classes == target) if _comparable(classes, target) else []
        if len(matches) == 0:
            raise ValueError(
                f"target={target!r} is not a class of {name}; the classes are "
                f"{classes.tolist()}."
            )
        idx = int(matches[0])
        if n_out == 1:
            # binary decision_function and log-odds score classes_[1];
            # their negative scores classes_[0]
            sign = 1.0 if idx == 1 else -1.0
            return base.select(sign=sign), [labels[idx]]
        return base.select(np.array([idx])), [labels[idx]]

    if target is None:
        names = ["y"] if n_out == 1 else [f"y{o}" for o in range(n_out)]
        return base, names
    if isinstance(target, str) and hasattr(estimator, "explained_names"):
        # an image model's class name
        named = [str(n) for n in estimator.explained_names()]
        if target not in named:
            shown = named if len(named) <= 10 else named[:10] + ["..."]
            raise ValueError(
                f"target={target!r} is not a class of {name}; give one of its "
                f"class names {shown} or an output index in [0, {n_out - 1}]."
            )
        target = named.index(target)
    if isinstance(target, numbers.Real) and not isinstance(target, (numbers.Integral, bool)):
        raise TypeError(
            f"target must be an int output index, got {target!r} (a float); pass "
            + (f"target={int(target)}." if float(target).is_integer() else
               f"an index in [0, {n_out - 1}].")
        )
    if (
        not isinstance(target, numbers.Integral)
        or isinstance(target, bool)
        or not 0 <= target < n_out
    ):
        raise ValueError(
            f"target={target!r} is invalid for {name}.{method}, which has "
            f"{n_out} output(s); give an output index in [0, {n_out - 1}] or None."
        )
    return base.select(np.array([int(target)])), [f"y{target}"]


def _model_method(method):
    """The model method behind a response method."""
    return "predict_proba" if method == "log_odds" else method


def _margin_classes(estimator):
    """Classes named by the margin's columns: ``classes_`` of a classifier, the
    class indices of a raw Booster with a classification objective, else None."""
    final = _final_model(estimator)
    classes = getattr(estimator, "classes_", None)
    if _is_classifier(estimator) and classes is not None and len(classes):
        return classes
    n_classes = booster_n_classes(final)
    return None if n_classes is None else np.arange(n_classes)


#: The scale "auto" takes for a gradient-boosting model, classifier or regressor.
_BOOSTER_SCALE = (
    BOOSTER_LIBRARIES, "margin",
    "the raw score before the link (sigmoid, softmax or exp), a sum over the "
    "boosted trees (exact on the tree path); without a link it equals predict",
)

#: The scale "auto" explains a classifier on, and why: the first row whose
#: families hold the final model (see :func:`_final_model`; a tuple of
#: library names for the libraries of :data:`BOOSTER_LIBRARIES`), or any
#: classifier for a row without families, and whose method the model has.
#: Each reason completes "<scale>: <reason>" in :func:`describe_response`.
_AUTO_SCALES = (
    _BOOSTER_SCALE,
    ((RandomForestClassifier, ExtraTreesClassifier), "predict_proba",
     "a forest's probability is the mean of its trees', so it is additive "
     "over trees (exact on the tree path)"),
    # ExtraTreeClassifier is a DecisionTreeClassifier
    ((DecisionTreeClassifier,), "predict_proba",
     "a tree's probability is the class shares of the leaf a row reaches, a "
     "sum over its one tree (exact on the tree path)"),
    ((GradientBoostingClassifier, HistGradientBoostingClassifier), "decision_function",
     "the raw score (log-odds) before the sigmoid or softmax, a sum over the "
     "boosted trees (exact on the tree path)"),
    (None, "decision_function",
     "the raw score before any sigmoid or softmax, a sum over the model's terms"),
    (None, "log_odds",
     "the model has no decision function; its log-odds undo the sigmoid or "
     "softmax that makes every column of a probability interact"),
    (None, "predict", "the model's prediction"),
)

#: One name per scale, used wherever the package states the explained scale.
SCALE_NAMES = {
    "predict": "prediction",
    "predict_proba": "probability (predict_proba)",
    "decision_function": "decision function",
    "log_odds": "log-odds of predict_proba",
    "margin": "margin (raw score)",
}


def _unwrap(estimator):
    """(transforming steps, model) of FrozenEstimators and Pipelines.

    The steps are the Pipelines of the steps before each last step, in the
    order they apply; the wrappers that the tree path (``_tree._extract``)
    unwraps too.
    """
    try:
        from sklearn.frozen import FrozenEstimator
    except ImportError:  # pragma: no cover - scikit-learn < 1.6
        FrozenEstimator = ()
    steps = []
    while True:
        if FrozenEstimator and isinstance(estimator, FrozenEstimator):
            estimator = estimator.estimator
        elif isinstance(estimator, Pipeline) and estimator.steps:
            if len(estimator.steps) > 1:
                steps.append(estimator[:-1])
            estimator = estimator.steps[-1][1]
        else:
            return steps, estimator


def _final_model(estimator):
    """The model inside FrozenEstimators and at the end of Pipelines."""
    return _unwrap(estimator)[1]


def auto_response(estimator):
    """The response method ``response_method="auto"`` takes for a model, and why.

    The scale on which the model is a sum over trees or terms:
    ``predict_proba`` for random forests, extra trees and single decision
    trees (a forest's probability is the mean of its trees'); the
    ``decision_function`` of any other classifier that has one (gradient
    boosting, linear models, SVMs, AdaBoost); else the log-odds of
    ``predict_proba`` (``"log_odds"``, see :func:`log_odds`); ``predict`` for
    regressors and any other model. XGBoost, LightGBM and CatBoost models,
    classifiers and regressors alike, take their raw score (``"margin"``).
    A model inside a FrozenEstimator or at the end of a Pipeline counts as
    that model.

    Parameters
    ----------
    estimator : fitted estimator

    Returns
    -------
    method : str
        ``"predict"``, ``"predict_proba"``, ``"decision_function"``,
        ``"log_odds"`` or ``"margin"``.
    reason : str
        Why, in plain words, for :func:`describe_response`.

    Raises
    ------
    ValueError
        When the model has none of the methods.
    """
    final = _final_model(estimator)
    classifier = _is_classifier(estimator)
    if not classifier and _lightgbm_forest(final):
        return "predict", ("a random forest's prediction is the mean of its trees "
                           "(its raw score is their sum; exact on the tree path)")
    rows = _AUTO_SCALES if classifier else (_BOOSTER_SCALE, _AUTO_SCALES[-1])
    for families, method, reason in rows:
        if families is BOOSTER_LIBRARIES:
            if booster_library(final) is None:
                continue
        elif families is not None and not isinstance(final, families):
            continue
        if _has_method(estimator, method):
            return method, reason
    candidates = list(dict.fromkeys(m for f, m, _ in rows if f is not BOOSTER_LIBRARIES))
    raise ValueError(
        f"{type(estimator).__name__} has none of the methods {candidates}; pass "
        "a fitted model with one of them."
    )


def _lightgbm_forest(model):
    """Whether a LightGBM model is a random forest (``boosting_type="rf"``)."""
    if booster_library(model) != "lightgbm":
        return False
    if hasattr(model, "get_params"):
        return model.get_params().get("boosting_type") == "rf"
    params = getattr(model, "params", None) or {}
    return params.get("boosting", params.get("boosting_type")) in ("rf", "random_forest")


def describe_response(response_method, output_names, estimator=None):
    """A plain-words description of the explained output, its scale and why.

    Parameters
    ----------
    response_method : str
        The response method used (``response_method_`` of a fitted object).
    output_names : list of str
        Names of the explained outputs.
    estimator : estimator or None, default=None
        The model, to name classes of a classifier and, when the scale is the
        one ``response_method="auto"`` takes for it, to say why.

    Returns
    -------
    description : str
        The scale's name (:data:`SCALE_NAMES`), why "auto" takes it for the
        model (not for ``predict``, nor for a scale that was asked for
        instead), and the explained classes; for example ``"probability
        (predict_proba): a forest's probability is the mean of its trees', so
        it is additive over trees (exact on the tree path); class 'yes'"`` or
        ``"log-odds of predict_proba, class 'yes'"``.
    """
    scale = SCALE_NAMES.get(response_method, response_method)
    if estimator is not None and _is_classifier(estimator) and response_method != "predict":
        try:
            method, reason = auto_response(estimator)
        except ValueError:
            method = reason = None
        names = ", ".join(repr(str(o)) for o in output_names)
        word = "class" if len(output_names) == 1 else "classes"
        if method == response_method:
            return f"{scale}: {reason}; {word} {names}"
        return f"{scale}, {word} {names}"
    if estimator is not None and response_method == "margin":
        # a regressor or raw Booster of a gradient-boosting library
        try:
            method, reason = auto_response(estimator)
        except ValueError:
            method = reason = None
        if method == response_method:
            scale = f"{scale}: {reason}"
            if len(output_names) > 1:
                return f"{scale}; outputs {', '.join(map(str, output_names))}"
            return scale
    if len(output_names) > 1:
        return f"{scale}, outputs {', '.join(map(str, output_names))}"
    return scale


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
