"""The analysis behind ``skdecomp report`` and ``skdecomp demo``, and its HTML page."""

# SPDX-License-Identifier: BSD-3-Clause

import base64
import functools
import hashlib
import html
import io
import json
import os
import re
import shutil
import tempfile
import time
import warnings
import zipfile
from pathlib import Path

import numpy as np
import pandas as pd

from ._json import strict_json

__all__ = [
    "DataError",
    "load_table",
    "load_model",
    "load_groups",
    "check_target",
    "check_drop",
    "check_estimator",
    "prepare_table",
    "check_output",
    "check_exact_limit",
    "make_model",
    "analyse",
    "write_report",
]

PICKLE_SUFFIXES = {".pkl", ".pickle", ".joblib", ".sav", ".p"}
#: fewer data rows than this cannot be fitted and explained meaningfully
MIN_ROWS = 10
#: a classification target may have at most this many classes, and at most one
#: class per two rows
MAX_CLASSES = 100
#: what ``write_report`` writes; the marker records the digests of the other two
REPORT_FILES = ("results.json", "index.html")
MARKER = ".skdecomp-report"
STAGING_PREFIX = ".skdecomp-staging-"
PSEUDO_FILESYSTEMS = ("/proc", "/sys", "/dev")


class DataError(Exception):
    """A problem with the user's input: data, model, options or output folder.

    The message names the problem and says what to fix.
    """


# -- types a model file may hold ------------------------------------------------------
# Plain builtins skops needs for containers and scalars. Only types: a file that
# names a builtin callable (exec, eval, getattr, __import__, open, ...) is refused.
BUILTIN_TYPES = (
    "builtins.bool",
    "builtins.bytearray",
    "builtins.bytes",
    "builtins.complex",
    "builtins.dict",
    "builtins.float",
    "builtins.frozenset",
    "builtins.int",
    "builtins.list",
    "builtins.set",
    "builtins.slice",
    "builtins.str",
    "builtins.tuple",
    "collections.OrderedDict",
    "collections.defaultdict",
)
# Building blocks of fitted scikit-learn models that are not estimators themselves.
SKLEARN_PARTS = (
    "sklearn.ensemble._hist_gradient_boosting.binning._BinMapper",
    "sklearn.ensemble._hist_gradient_boosting.predictor.TreePredictor",
    "sklearn.neighbors._ball_tree.BallTree",
    "sklearn.neighbors._kd_tree.KDTree",
    "sklearn.neural_network._stochastic_optimizers.AdamOptimizer",
    "sklearn.neural_network._stochastic_optimizers.SGDOptimizer",
    "sklearn.tree._tree.Tree",
    "sklearn.utils._bunch.Bunch",
    "scipy.interpolate._bsplines.BSpline",
)


def _type_name(cls):
    return f"{cls.__module__}.{cls.__name__}"


def _classes_in(module, base=object, exclude=()):
    """Names of the classes defined in ``module`` that derive from ``base``."""
    return {
        _type_name(obj)
        for name, obj in vars(module).items()
        if isinstance(obj, type)
        and obj.__module__ == module.__name__
        and issubclass(obj, base)
        and name not in exclude
    }


@functools.lru_cache(maxsize=1)
def allowed_model_types():
    """Types the command line lets a model file hold.

    Scikit-learn estimators and transformers and the parts of fitted models,
    NumPy and SciPy array types, and the plain builtins skops uses for
    containers. Never a function: skops may call a type named in a file, so a
    callable such as ``builtins.exec`` would run code.

    Returns
    -------
    types : frozenset of str
        Fully qualified type names, as :func:`skops.io.get_untrusted_types`
        lists them.
    """
    import scipy.sparse
    import sklearn._loss.link
    import sklearn._loss.loss
    import sklearn.gaussian_process.kernels as kernels
    import sklearn.metrics._dist_metrics as dist_metrics
    from sklearn.utils import all_estimators

    names = set(BUILTIN_TYPES) | set(SKLEARN_PARTS)
    names |= {
        _type_name(cls) for _, cls in all_estimators() if cls.__module__.startswith("sklearn.")
    }
    names |= _classes_in(kernels, kernels.Kernel)
    # a distance given as a Python function (PyFuncDistance) is left out
    names |= _classes_in(dist_metrics, exclude=("PyFuncDistance32", "PyFuncDistance64"))
    names |= _classes_in(sklearn._loss.loss) | _classes_in(sklearn._loss.link)
    names |= {"numpy.dtype", "numpy.ndarray"}
    names |= {
        _type_name(t) for t in set(np.sctypeDict.values()) if t.__module__ == "numpy"
    }
    names |= {
        f"numpy.random.{name}"
        for name in dir(np.random)
        if isinstance(getattr(np.random, name), type)
        and issubclass(getattr(np.random, name), (np.random.BitGenerator,
                                                    np.random.Generator,
                                                    np.random.RandomState))
    }
    sparse_bases = tuple(
        b for b in (getattr(scipy.sparse, "spmatrix", None),
                    getattr(scipy.sparse, "sparray", None)) if b is not None
    )
    names |= {
        _type_name(obj)
        for obj in vars(scipy.sparse).values()
        if isinstance(obj, type) and issubclass(obj, sparse_bases)
    }
    return frozenset(names)


# -- inputs --------------------------------------------------------------------------
def load_table(path, target, parse_dates=True):
    """Read a CSV or Parquet file and split off the target column.

    Parameters
    ----------
    path : str or path-like
        A ``.csv`` file, or a ``.parquet``/``.pq`` file.
    target : str
        Name of the target column.
    parse_dates : bool, default=True
        Read text columns holding only year-first dates (``2021-03-04``,
        ``2021/03/04``, optionally with a time) as dates.

    Returns
    -------
    X : DataFrame
        The other columns; text columns become categorical, or dates.
    y : Series
        The target column.
    """
    path = Path(path)
    if not path.exists():
        raise DataError(f"{path}: no such file; check the path of the data.")
    if not path.is_file():
        raise DataError(f"{path} is not a file; give a CSV or Parquet file.")
    suffix = path.suffix.lower()
    try:
        if suffix in (".parquet", ".pq"):
            try:
                df = pd.read_parquet(path)
            except ImportError as exc:
                raise DataError(
                    f"{path}: reading Parquet needs pyarrow; install it with "
                    "'pip install pyarrow' or give a CSV file."
                ) from exc
        else:
            df = pd.read_csv(path)
    except pd.errors.EmptyDataError:
        raise DataError(f"{path} is empty; give a table with a header row and data rows.")
    except (UnicodeDecodeError, pd.errors.ParserError) as exc:
        raise DataError(f"{path} could not be read as a table ({exc}).")
    except OSError as exc:
        raise DataError(
            f"{path} could not be read ({exc.strerror or exc}); check that it is "
            "a readable CSV or Parquet file."
        ) from exc
    if df.shape[0] == 0:
        raise DataError(f"{path} has a header but no data rows.")
    if target not in df.columns:
        raise DataError(
            f"target column {target!r} is not in {path.name}; its columns are "
            f"{list(map(str, df.columns))}. Pass one of them with --target."
        )
    if df.shape[0] < MIN_ROWS:
        raise DataError(
            f"{path.name} has only {df.shape[0]} data row(s); skdecomp needs at least "
            f"{MIN_ROWS} to fit and explain a model. Give a larger table."
        )
    y = df[target]
    n_missing = int(y.isna().sum())
    if n_missing == len(y):
        raise DataError(
            f"target column {target!r} has no values (all {len(y)} are missing); "
            "pick another column with --target."
        )
    if n_missing:
        raise DataError(
            f"target column {target!r} has {n_missing} missing values; "
            "drop those rows first."
        )
    X = df.drop(columns=[target])
    if X.shape[1] == 0:
        raise DataError(f"{path.name} has no columns besides the target {target!r}.")
    X.columns = [str(c) for c in X.columns]
    for col in X.columns:
        if X[col].dtype == object or pd.api.types.is_string_dtype(X[col]):
            dates = parse_dates_of(X[col]) if parse_dates else None
            X[col] = X[col].astype("category") if dates is None else dates
    return X, y


def is_classification(y, model=None):
    """Whether to treat the target as classes.

    A given model decides by its type. Otherwise non-numeric or boolean
    targets are classes, and so are integer targets with at most 20 distinct
    values that each come back on average at least twice; everything else is
    a regression target.

    Parameters
    ----------
    y : array-like
        The target.
    model : estimator or None, default=None
        A fitted model, if one is given.

    Returns
    -------
    classification : bool
        Whether the target is treated as classes.
    """
    if model is not None:
        from sklearn.base import is_classifier

        return bool(is_classifier(model))
    y = pd.Series(y)
    if not pd.api.types.is_numeric_dtype(y) or pd.api.types.is_bool_dtype(y):
        return True
    values = y.to_numpy(dtype=float)
    integral = np.isfinite(values).all() and np.all(np.equal(np.mod(values, 1), 0))
    n_values = y.nunique()
    return bool(integral and n_values <= 20 and n_values <= len(y) // 2)


def _plain(value):
    """A NumPy scalar as the Python value it holds, for messages."""
    return value.item() if isinstance(value, np.generic) else value


def check_target(y, model=None):
    """Refuse a target no model can be fitted to, before fitting.

    Parameters
    ----------
    y : Series
        The target column, without missing values.
    model : estimator or None, default=None
        A fitted model; then the target is not fitted and is not checked.

    Raises
    ------
    DataError
        For a constant target, a non-finite numeric target, or a
        classification target with more classes than the rows can support
        (more than :data:`MAX_CLASSES` or one per two rows).
    """
    if model is not None:
        return
    y = pd.Series(y)
    name, n = y.name, len(y)
    if y.nunique() < 2:
        raise DataError(
            f"target column {name!r} has the same value ({_plain(y.iloc[0])!r}) in all {n} "
            "rows, so there is nothing to predict or explain; pick a column that "
            "varies with --target."
        )
    if not is_classification(y):
        values = y.to_numpy(dtype=float)
        if not np.isfinite(values).all():
            raise DataError(
                f"target column {name!r} has {int((~np.isfinite(values)).sum())} "
                "infinite values; drop or fix those rows first."
            )
        return
    n_classes = int(y.nunique())
    limit = min(MAX_CLASSES, n // 2)
    if n_classes > limit:
        raise DataError(
            f"target column {name!r} holds classes (its values are not numbers) "
            f"with {n_classes} distinct values in "
            f"{n} rows; a classifier needs several rows per class (at most {limit} "
            "classes here). If it holds numbers stored as text, clean it into a "
            "numeric column; otherwise merge rare classes or pick another --target."
        )


# -- columns ---------------------------------------------------------------------------
#: text recognised as a date: year first (2021-03-04, 2021/03/04), optionally a time
DATE_PATTERN = re.compile(
    r"\d{4}[-/]\d{1,2}[-/]\d{1,2}"
    r"(?:[ T]\d{1,2}:\d{2}(?::\d{2}(?:\.\d+)?)?)?(?:Z|[+-]\d{2}:?\d{2})?"
)
#: dates become this many days after this day
EPOCH = "1970-01-01"
#: fewer rows than this are flagged as a tiny sample
SMALL_SAMPLE = 100
#: a column named like this and unique per row is an identifier
ID_NAME = re.compile(r"(?:^|[_ .-])(?:id|index|idx|key|rownames?|row|unnamed: ?0)$",
                     re.IGNORECASE)


def parse_dates_of(values):
    """Text holding only year-first dates as ``datetime64``, else None.

    Parameters
    ----------
    values : Series
        A text column.

    Returns
    -------
    dates : Series or None
        The parsed dates (UTC times without a time zone when the text has
        one), or None when a value is not a year-first date.
    """
    text = values.dropna().astype(str).str.strip()
    if text.empty or not text.str.fullmatch(DATE_PATTERN).all():
        return None
    normalised = values.astype(object).where(values.isna(), values.astype(str).str.strip())
    normalised = normalised.str.replace("/", "-", n=2, regex=False)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            dates = pd.to_datetime(normalised, format="ISO8601", utc=True)
    except (ValueError, TypeError, OverflowError):
        return None
    if dates.isna().sum() != values.isna().sum():
        return None
    return dates.dt.tz_localize(None)


def days_since_epoch(dates):
    """Dates (``datetime64``, with or without time zone) as float days since 1970-01-01."""
    if getattr(dates.dt, "tz", None) is not None:
        dates = dates.dt.tz_convert("UTC").dt.tz_localize(None)
    return (dates - pd.Timestamp(EPOCH)) / pd.Timedelta(days=1)


def _as_text_categories(values):
    """A non-numeric column as categories of strings (missing values kept)."""
    obj = values.astype(object)
    return obj.where(obj.isna(), obj.astype(str)).astype("category")


def _id_reason(name, values, n_rows):
    """Why a column looks like a row identifier, or None."""
    if n_rows < 20 or values.isna().any() or pd.api.types.is_bool_dtype(values):
        return None
    if pd.api.types.is_datetime64_any_dtype(values):
        return None
    if pd.api.types.is_numeric_dtype(values):
        a = values.to_numpy(dtype=float)
        if not np.all(np.isfinite(a)) or not np.all(a == np.round(a)):
            return None
        if np.unique(a).size != n_rows:
            return None
        d = np.diff(a)
        if (d > 0).all() or (d < 0).all():
            order = "increasing" if d[0] > 0 else "decreasing"
            return f"a different whole number in every row, in {order} order"
        if ID_NAME.search(name) or a.max() - a.min() < 2 * n_rows:
            return "a different whole number in every row"
        return None
    if values.nunique() == n_rows:
        return "a different value in every row"
    return None


def _show_value(value):
    text = str(_plain(value))
    return text if len(text) <= 30 else text[:27] + "..."


def prepare_table(X, *, fit=True, drop=None):
    """Check the columns and turn dates into numbers, before any model work.

    Parameters
    ----------
    X : DataFrame
        The table, without the target.
    fit : bool, default=True
        Whether a model will be fitted on it. Then constant columns are left
        out, dates become days since 1970-01-01 and text columns become
        categories; a given model gets the columns as they are.
    drop : list of str or None, default=None
        Columns to leave out.

    Returns
    -------
    X : DataFrame
        The columns the model sees.
    checks : list of dict
        One entry per finding: ``kind`` ("id", "constant", "dates",
        "tiny"), ``level`` ("warning" or "note"), ``columns`` and a
        plain-words ``message``.
    """
    X = X.drop(columns=list(drop or []))
    n, checks = X.shape[0], []
    if fit:
        constant = [c for c in X.columns if X[c].nunique(dropna=False) <= 1]
        if len(constant) == X.shape[1]:
            raise DataError(
                f"every column has the same value in all {n} rows "
                f"({', '.join(map(repr, constant[:5]))}"
                f"{' and more' if len(constant) > 5 else ''}), so no model can learn "
                "anything; give a table whose columns vary."
            )
    else:
        constant = [c for c in X.columns if X[c].nunique(dropna=False) <= 1]
    for c in constant:
        value = X[c].iloc[0]
        what = "is always missing" if pd.isna(value) else (
            f"has the same value ({_show_value(value)}) in every row")
        fate = ("it cannot change any prediction, so it is left out of the model and "
                "the explanations." if fit else "it cannot change any prediction, and "
                "its attributions are 0.")
        checks.append({"kind": "constant", "level": "warning", "columns": [c],
                       "message": f"Column {c!r} {what}: {fate}"})
    if fit:
        X = X.drop(columns=constant)
    for c in X.columns:
        why = _id_reason(c, X[c], n)
        if why:
            checks.append({
                "kind": "id", "level": "warning", "columns": [c],
                "message": f"Column {c!r} looks like a row identifier ({why}). A model "
                "can use it only by memorising rows or the order in which they were "
                "recorded, which does not carry over to new data. It is kept; leave it "
                f"out with --drop {c} if it is an identifier.",
            })
    if fit:
        X = X.copy()
        dates, durations = [], []
        for c in X.columns:
            if pd.api.types.is_datetime64_any_dtype(X[c]):
                X[c] = days_since_epoch(X[c])
                dates.append(c)
            elif pd.api.types.is_timedelta64_dtype(X[c]):
                X[c] = X[c] / pd.Timedelta(days=1)
                durations.append(c)
            elif not pd.api.types.is_numeric_dtype(X[c]):
                X[c] = _as_text_categories(X[c])
        if dates:
            checks.append({
                "kind": "dates", "level": "note", "columns": dates,
                "message": f"{_names(dates, 'Column', 'Columns')} "
                f"{'holds' if len(dates) == 1 else 'hold'} dates: the model sees the "
                f"number of days since {EPOCH}, so 'higher' means 'later'.",
            })
        if durations:
            checks.append({
                "kind": "dates", "level": "note", "columns": durations,
                "message": f"{_names(durations, 'Column', 'Columns')} "
                f"{'holds' if len(durations) == 1 else 'hold'} durations: the model "
                "sees them in days.",
            })
    if n < SMALL_SAMPLE or n < 3 * X.shape[1]:
        checks.append({
            "kind": "tiny", "level": "warning", "columns": [],
            "message": f"Only {n} rows for {X.shape[1]} columns: the held-out score "
            "and the explanations rest on few rows and may change a lot with other "
            "data from the same source.",
        })
    return X, checks


def _names(columns, one="column", many="columns", limit=6):
    """'column 'a'' or 'columns 'a', 'b' and 3 more'."""
    shown = ", ".join(repr(str(c)) for c in columns[:limit])
    more = f" and {len(columns) - limit} more" if len(columns) > limit else ""
    return f"{one if len(columns) == 1 else many} {shown}{more}"


def check_drop(drop, X):
    """Refuse ``--drop`` columns that are not in the table, before any model work.

    Parameters
    ----------
    drop : list of str or None
        Columns to leave out.
    X : DataFrame
        The table, without the target.

    Returns
    -------
    drop : list of str
        The same names.
    """
    drop = list(drop or [])
    unknown = [c for c in drop if c not in X.columns]
    if unknown:
        raise DataError(
            f"--drop names {_names(unknown)} not in the table; its columns are "
            f"{list(map(str, X.columns))[:20]}{' ...' if X.shape[1] > 20 else ''}."
        )
    if len(set(drop)) == X.shape[1]:
        raise DataError("--drop leaves no column to explain; keep at least one.")
    return drop


# -- models ----------------------------------------------------------------------------
ESTIMATORS = ("hgb", "rf", "linear", "mlp")
#: categorical columns with at most this many levels are one-hot encoded (linear, mlp)
ONE_HOT_MAX_LEVELS = 20
#: levels seen in fewer rows are pooled into one (tree models)
RARE_LEVEL_ROWS = 5
#: most levels a tree model tells apart (HistGradientBoosting allows 255)
MAX_TREE_LEVELS = 250


def check_estimator(estimator):
    """Refuse an unknown ``--estimator`` name before any model work.

    Parameters
    ----------
    estimator : str
        The model to fit.

    Returns
    -------
    estimator : str
        The same name.
    """
    if estimator not in ESTIMATORS:
        raise DataError(
            f"unknown estimator {estimator!r}; choose among {list(ESTIMATORS)}."
        )
    return estimator


def _target_encoder(classification, random_state):
    """A TargetEncoder with seeded cross fitting, for the installed scikit-learn."""
    from sklearn.model_selection import KFold, StratifiedKFold
    from sklearn.preprocessing import TargetEncoder

    if TargetEncoder().get_params().get("shuffle") == "deprecated":
        split = StratifiedKFold if classification else KFold
        return TargetEncoder(cv=split(5, shuffle=True, random_state=random_state))
    return TargetEncoder(shuffle=True, random_state=random_state)


def make_model(kind, X, y, random_state=None):
    """A pipeline that encodes the columns as the chosen model needs, then the model.

    Every encoding is dense and works column by column, so the explainer
    explains the table's own columns through the pipeline, and the tree
    models keep the exact tree path.

    - ``"hgb"``: categorical columns become category codes that the
      gradient-boosted trees split natively; missing values stay missing.
    - ``"rf"``: categorical columns become category codes (missing: -1);
      missing numbers become the median.
    - ``"linear"`` and ``"mlp"``: categorical columns with at most
      :data:`ONE_HOT_MAX_LEVELS` levels are one-hot encoded, those with more
      are target encoded (each level becomes the mean target of the rows
      that have it, cross-fitted); numbers are standardised, missing ones
      replaced by the median.

    In the tree models, levels seen in fewer than :data:`RARE_LEVEL_ROWS`
    rows are pooled, and at most :data:`MAX_TREE_LEVELS` levels are kept.

    Parameters
    ----------
    kind : {"hgb", "rf", "linear", "mlp"}
        The model.
    X : DataFrame
        The table, without the target, as :func:`prepare_table` returns it.
    y : Series
        The target; it decides between classifier and regressor.
    random_state : int or None, default=None
        Seed of the model.

    Returns
    -------
    pipeline : Pipeline
        The unfitted pipeline.
    note : str
        How the columns are encoded, in plain words.
    """
    from sklearn.compose import ColumnTransformer, TransformedTargetRegressor
    from sklearn.ensemble import (
        HistGradientBoostingClassifier,
        HistGradientBoostingRegressor,
        RandomForestClassifier,
        RandomForestRegressor,
    )
    from sklearn.impute import SimpleImputer
    from sklearn.linear_model import LogisticRegression, RidgeCV
    from sklearn.neural_network import MLPClassifier, MLPRegressor
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import OneHotEncoder, OrdinalEncoder, StandardScaler

    check_estimator(kind)
    clf = is_classification(y)
    categorical = [c for c in X.columns if not pd.api.types.is_numeric_dtype(X[c])]
    numeric = [c for c in X.columns if c not in categorical]
    levels = {c: int(X[c].nunique()) for c in categorical}
    many = [c for c in categorical if levels[c] > ONE_HOT_MAX_LEVELS]
    notes = []
    if kind in ("hgb", "rf"):
        missing = np.nan if kind == "hgb" else -1
        codes = OrdinalEncoder(
            handle_unknown="use_encoded_value", unknown_value=missing,
            encoded_missing_value=missing, min_frequency=RARE_LEVEL_ROWS,
            max_categories=MAX_TREE_LEVELS,
        )
        numbers = "passthrough" if kind == "hgb" else SimpleImputer(strategy="median")
        transformers = [("categorical", codes, categorical)] if categorical else []
        transformers += [("numeric", numbers, numeric)] if numeric else []
        if kind == "hgb":
            cls = HistGradientBoostingClassifier if clf else HistGradientBoostingRegressor
            # early stopping on a tenth of the rows: the defaults overfit small tables
            model = cls(categorical_features=list(range(len(categorical))) or None,
                        learning_rate=0.05, max_iter=300,
                        early_stopping=X.shape[0] >= 200, random_state=random_state)
        else:
            cls = RandomForestClassifier if clf else RandomForestRegressor
            model = cls(n_estimators=100, min_samples_leaf=3, random_state=random_state)
        if categorical:
            notes.append(
                "categorical columns become category codes that the trees split on"
                + (" natively" if kind == "hgb" else "")
                + f"; levels seen in fewer than {RARE_LEVEL_ROWS} rows are pooled"
            )
        if numeric and kind == "rf":
            notes.append("missing numbers are replaced by the column's median")
    else:
        one_hot = [c for c in categorical if c not in many]
        transformers = []
        if one_hot:
            transformers.append((
                "categorical",
                OneHotEncoder(handle_unknown="ignore", sparse_output=False),
                one_hot,
            ))
        if many:
            transformers.append((
                "many_levels",
                make_pipeline(_target_encoder(clf, random_state), StandardScaler()),
                many,
            ))
        if numeric:
            transformers.append((
                "numeric",
                make_pipeline(SimpleImputer(strategy="median"), StandardScaler()),
                numeric,
            ))
        if kind == "linear":
            model = (LogisticRegression(max_iter=1000) if clf
                     else RidgeCV(alphas=np.logspace(-3, 3, 13)))
        else:
            # L-BFGS with a strong L2 penalty: steady on small and wide tables
            mlp = (MLPClassifier if clf else MLPRegressor)(
                hidden_layer_sizes=(64,), solver="lbfgs", alpha=10.0, max_iter=200,
                random_state=random_state,
            )
            model = mlp if clf else TransformedTargetRegressor(
                regressor=mlp, transformer=StandardScaler()
            )
        if one_hot:
            notes.append(f"categorical columns with at most {ONE_HOT_MAX_LEVELS} levels "
                         "are one-hot encoded")
        if many:
            notes.append(
                f"{_names(many)} {'has' if len(many) == 1 else 'have'} more levels "
                f"(up to {max(levels[c] for c in many)}) and "
                f"{'is' if len(many) == 1 else 'are'} target encoded: each level "
                "becomes the mean target of the rows that have it (cross-fitted)"
            )
        if numeric:
            notes.append("numbers are standardised, missing ones replaced by the median")
    pre = ColumnTransformer(transformers, sparse_threshold=0.0)
    if not notes:
        return make_pipeline(pre, model), "All columns are numeric; none needs encoding."
    note = ("Encoding: " + "; ".join(notes) + ". Each column of the table is "
            "explained as it is, through the encoding.")
    return make_pipeline(pre, model), note


def load_model(path):
    """Load a scikit-learn model saved with skops; refuse pickles and foreign types.

    Only the few first bytes are read to recognise a pickle. The types the
    file names are checked against :func:`allowed_model_types` with
    :func:`skops.io.get_untrusted_types` before anything is built, and
    :func:`skops.io.load` is given exactly those types as trusted.

    Parameters
    ----------
    path : str or path-like
        A file written by :func:`skops.io.dump`.

    Returns
    -------
    model : estimator
        The loaded model.
    """
    path = Path(path)
    if not path.exists():
        raise DataError(f"{path}: no such model file; check the path given to --model.")
    if not path.is_file():
        raise DataError(f"--model {path} is not a file; give a model saved with skops.")
    try:
        with open(path, "rb") as f:
            head = f.read(4)
        is_zip = zipfile.is_zipfile(path)  # reads the end of the file only
    except OSError as exc:
        raise DataError(
            f"{path} could not be read ({exc.strerror or exc}); check its permissions."
        ) from exc
    if path.suffix.lower() in PICKLE_SUFFIXES or head[:1] == b"\x80":
        raise DataError(
            f"{path.name} is a pickle file. Loading a pickle can run any code it "
            "contains, so skdecomp refuses it. Convert it where you trust it: "
            "'import joblib, skops.io as sio; sio.dump(joblib.load(\"model.pkl\"), "
            "\"model.skops\")', then pass --model model.skops."
        )
    if head[:2] != b"PK" or not is_zip:
        raise DataError(
            f"{path.name} is not an skops file; save the model with "
            "'skops.io.dump(model, \"model.skops\")'."
        )
    try:
        import skops.io as sio
    except ImportError as exc:  # pragma: no cover - skops is a dependency
        raise DataError("loading models needs skops: pip install skops") from exc
    try:
        untrusted = sio.get_untrusted_types(file=path)
    except Exception as exc:
        raise DataError(f"{path.name} is unreadable as an skops file ({exc}).") from exc
    allowed = allowed_model_types()
    refused = sorted(t for t in untrusted if t not in allowed)
    if refused:
        raise DataError(
            f"{path.name} names types the command line does not load: {refused}. "
            "It loads only scikit-learn estimators, NumPy and SciPy arrays and plain "
            "containers, never functions (a function in a model file can run code). "
            "If you trust the file, load it in Python with skops.io.load(path, "
            "trusted=[...]) and explain it with skdecomp.Explainer."
        )
    try:
        return sio.load(path, trusted=list(untrusted))
    except Exception as exc:
        raise DataError(f"{path.name} could not be loaded ({exc}).") from exc


def load_groups(spec, X):
    """``auto``, ``columns`` or a JSON file with a list or dict of column lists.

    A file is checked against the columns of ``X`` here, before any model work.

    Parameters
    ----------
    spec : str
        ``"auto"``, ``"columns"`` or the path of a JSON file.
    X : DataFrame
        The table whose columns the groups name.

    Returns
    -------
    groups : str, list or dict
        ``spec`` itself for ``auto`` and ``columns``, else the groups.
    """
    if spec in ("auto", "columns"):
        return spec
    path = Path(spec)
    if not path.is_file():
        raise DataError(
            f"--groups {spec}: no such file; use auto, columns or a JSON file of "
            "column groups."
        )
    try:
        groups = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise DataError(f"--groups {spec} could not be read ({exc}).") from exc
    except json.JSONDecodeError as exc:
        raise DataError(f"{path.name} is not valid JSON ({exc}).") from exc
    shape = (
        f"{path.name} must hold a list of column lists, e.g. [[\"a\", \"b\"], [\"c\"]], "
        "or an object mapping group names to column lists, e.g. "
        "{\"size\": [\"a\", \"b\"], \"place\": [\"c\"]}"
    )
    if isinstance(groups, dict):
        items = list(groups.items())
    elif isinstance(groups, list):
        items = list(enumerate(groups))
    else:
        raise DataError(shape + ".")
    for key, cols in items:
        for col in cols if isinstance(cols, list) else [cols]:
            if isinstance(col, bool) or not isinstance(col, (str, int)):
                raise DataError(
                    f"{path.name}: group {key!r} holds {json.dumps(col)}, which is not a "
                    f"column name; {shape}."
                )
    from ._partition import resolve_groups

    try:
        resolve_groups(groups, X.shape[1], list(X.columns))
    except (TypeError, ValueError) as exc:
        raise DataError(f"{path.name}: {exc}") from exc
    return groups


def check_methods(methods):
    """Refuse unknown explanation method names.

    Parameters
    ----------
    methods : list of str or None
        Names given with ``--methods``.

    Returns
    -------
    methods : list of str or None
        The same names.
    """
    if methods is None:
        return None
    from ._methods import EXACT_METHODS, SAMPLED_METHODS

    known = list(EXACT_METHODS) + list(SAMPLED_METHODS)
    unknown = [m for m in methods if m not in known]
    if unknown:
        raise DataError(f"unknown methods {unknown} in --methods; choose among {known}.")
    return list(methods)


# -- analysis ------------------------------------------------------------------------
EXACT_DEFAULT = ["shapley", "banzhaf", "occlusion", "arch"]
#: methods beyond exact enumeration: exact single-column ones and two Shapley estimates
WIDE_DEFAULT = ["occlusion", "arch", "kernel_shap", "permutation_shap"]
SAMPLED_DEFAULT = ["kernel_shap", "permutation_shap"]
#: model evaluations one sampled method may spend on one partition
SAMPLED_EVALUATIONS = 1_500_000
#: values below this fraction of the output's spread are round-off, shown as 0
ROUND_OFF = 1e-12
#: columns compared pairwise in the interaction heatmap
INTERACTION_COLUMNS = 10
#: a column is flagged as possible leakage when its share of the attributions is
#: above LEAK_SHARE and it is LEAK_RATIO times the next column
LEAK_SHARE = 0.5
LEAK_RATIO = 10.0
#: agreement levels, as root mean square difference / spread of the output
CLOSE, NOTICEABLE = 0.05, 0.15


def _clean(values, scale):
    """``values`` with entries below round-off (relative to ``scale``) set to 0."""
    a = np.asarray(values, dtype=float)
    return np.where(np.abs(a) < ROUND_OFF * scale, 0.0, a)


def _main_method(methods):
    """The method whose attributions the report leads with."""
    for m in ("shapley", "kernel_shap", "permutation_shap", "banzhaf"):
        if m in methods:
            return m
    return methods[0]


def _sampled_budget(K, n_rows, n_background):
    """Coalitions per explained row for a sampled method: a fixed number of evaluations."""
    budget = SAMPLED_EVALUATIONS // max(1, n_rows * n_background)
    return int(min(2 * K + 2048, max(4 * (K + 1), budget)))


def _duration(seconds):
    if seconds < 90:
        return f"{seconds:.0f} s"
    return f"{seconds / 60:.1f} min"


def _direction(values, phi, categorical):
    """How a column's value moves its attribution, in plain words."""
    values = pd.Series(values).reset_index(drop=True)
    phi = pd.Series(np.asarray(phi, dtype=float))
    keep = values.notna().to_numpy() & np.isfinite(phi.to_numpy())
    values, phi = values[keep], phi[keep]
    if len(values) < 5 or phi.abs().max() == 0:
        return "no visible effect on these rows"
    if categorical:
        means = phi.groupby(values.astype(str).to_numpy()).mean()
        if len(means) < 2:
            return "one level on these rows"
        up, down = means.idxmax(), means.idxmin()
        return f"{up!r} raises the prediction most, {down!r} lowers it most"
    if values.nunique() < 2:
        return "one value on these rows"
    rho = float(pd.Series(values.to_numpy(dtype=float)).rank().corr(phi.rank()))
    if not np.isfinite(rho):
        return "no clear direction"
    if rho >= 0.5:
        return f"higher values raise the prediction (rank correlation {rho:+.2f})"
    if rho <= -0.5:
        return f"higher values lower the prediction (rank correlation {rho:+.2f})"
    return (f"no single direction (rank correlation {rho:+.2f}): the effect depends on "
            "other columns or is not monotone")


def _label(name, columns, width=28):
    """A short label of a group for plots: its column, or the first ones and a count."""
    if len(columns) == 1:
        text = str(columns[0])
    else:
        text = " + ".join(map(str, columns))
        if len(text) > width:
            text = f"{columns[0]} + {len(columns) - 1} more"
    return text if len(text) <= width else text[: width - 1] + "…"


def _explain_partition(model, X_fit, rows, groups, methods, *, background, random_state,
                       n_jobs, notes, target=None, response_method="auto", verbose=0,
                       log=print, rate=None, what="the columns"):
    from . import metrics
    from ._explainer import MAX_EXACT_GROUPS, Explainer
    from ._methods import SAMPLED_METHODS, SINGLE_GROUP_METHODS
    from ._model import describe_response
    from ._partition import resolve_groups

    positions, names = resolve_groups(groups, X_fit.shape[1], list(X_fit.columns))
    K = len(positions)
    explainer = Explainer(
        model, method="occlusion", groups=groups, background=background, target=target,
        response_method=response_method, random_state=random_state, n_jobs=n_jobs,
        verbose=verbose,
    ).fit(X_fit)
    tree = explainer.algorithm_ == "tree"
    chosen = list(methods) if methods else None
    if chosen is None:
        chosen = EXACT_DEFAULT if K <= MAX_EXACT_GROUPS or tree else WIDE_DEFAULT
        if chosen is WIDE_DEFAULT:
            note = (f"Beyond {MAX_EXACT_GROUPS} groups, exact Shapley values need a model "
                    "read on the tree path (this one is explained through model calls: "
                    f"{explainer.algorithm_}): occlusion and PDP/Arch are computed exactly, and Shapley "
                    "values are estimated by sampling (Kernel SHAP, permutation SHAP); "
                    "the difference between these two is sampling noise.")
            if note not in notes:
                notes.append(note)
    n_bg = len(explainer.background_)
    sampled = [m for m in chosen if m in SAMPLED_METHODS]
    n_samples = _sampled_budget(K, len(rows), n_bg) if sampled else None
    if sampled:
        explainer.set_params(n_samples=n_samples)
    exact = [m for m in chosen if m not in SAMPLED_METHODS]
    single = all(m in SINGLE_GROUP_METHODS for m in exact)
    per_row = (2 * K + 1 if single else 2 ** K) if exact else 0
    evaluations = len(rows) * n_bg * (per_row + len(sampled) * (n_samples or 0))
    if not tree and rate and evaluations / rate >= 5:
        log(f"explaining {len(rows)} rows over {what} ({K} groups) with "
            f"{', '.join(chosen)}: about {evaluations / 1e6:.2g} million model "
            f"evaluations, roughly {_duration(evaluations / rate)}")
    else:
        log(f"explaining {len(rows)} rows over {what} ({K} groups) with "
            f"{', '.join(chosen)}")
    res = {}
    for m, e in explainer.explain(rows, methods=chosen).items():
        a = np.asarray(e.values, dtype=float)
        res[m] = a[:, :, 0] if a.ndim == 3 else a
    sample = X_fit.iloc[:1000]
    output = explainer.game_.predict(explainer.game_.check_X(sample))[:, 0]
    spread = float(np.std(output))
    scale = spread or float(np.abs(output).mean()) or 1.0
    var = spread**2 or 1.0
    res = {m: _clean(a, scale) for m, a in res.items()}
    pair = metrics.disagreement(res, measure="l2")
    # summed over groups: the squared distance between two explanations of a row
    summed = np.asarray(metrics.disagreement(res, measure="l2", normalize="sum").pairwise)
    rms = np.sqrt(np.clip(summed / var, 0.0, None))
    rms[rms < np.sqrt(ROUND_OFF)] = 0.0
    E = len(chosen)
    mean_rms = float(np.sqrt(summed[np.triu_indices(E, 1)].mean() / var)) if E > 1 else 0.0
    if mean_rms < np.sqrt(ROUND_OFF):
        mean_rms = 0.0
    main = _main_method(chosen)
    importance = {m: _clean(np.mean(np.abs(a), axis=0), scale).tolist()
                  for m, a in res.items()}
    order = np.argsort(-np.asarray(importance[main]), kind="stable")
    group_columns = [[str(X_fit.columns[j]) for j in pos] for pos in positions]
    out = {
        "group_names": [str(n) for n in names],
        "group_labels": [_label(n, cols) for n, cols in zip(names, group_columns)],
        "groups": group_columns,
        "methods": chosen,
        "main_method": main,
        "order": [int(k) for k in order],
        "attributions": {m: a.tolist() for m, a in res.items()},
        "importance": importance,
        "disagreement_l2": (np.asarray(pair.pairwise) / var).tolist(),
        "mean_disagreement_l2": float(pair.score) / var,
        "disagreement_rms": rms.tolist(),
        "mean_disagreement_rms": mean_rms,
        "disagreement_spearman": np.asarray(
            metrics.disagreement(res, measure="spearman").pairwise).tolist(),
        "output": explainer.output_names_[0] if explainer.n_outputs_ == 1 else None,
        "response_method": explainer.response_method_,
        "explained_output": describe_response(
            explainer.response_method_, explainer.output_names_, explainer.estimator_
        ),
        "algorithm": explainer.algorithm_,
        "n_samples": n_samples,
        "n_background": int(n_bg),
        "output_spread": spread,
        "output_mean": float(np.mean(output)),
        "n_rows": int(len(rows)),
    }
    prediction = explainer.game_.predict(explainer.game_.check_X(rows))[:, 0]
    base = np.ravel(explainer.expected_value_)[0]
    out["row_ids"] = [int(i) if isinstance(i, (int, np.integer)) else str(i)
                      for i in rows.index]
    out["prediction"] = prediction.tolist()
    out["expected_value"] = float(base)
    if all(len(p) == 1 for p in positions):
        phi = res[main]
        out["direction"] = [
            _direction(rows.iloc[:, pos[0]], phi[:, k],
                       not pd.api.types.is_numeric_dtype(rows.iloc[:, pos[0]]))
            for k, pos in enumerate(positions)
        ]
    return out


def _interactions(model, X_fit, part, *, background, random_state, n_jobs, target,
                  response_method):
    """Pairwise interactions of the most important columns, as shares of the spread."""
    from ._explainer import Explainer
    from .inspection import interaction_matrix

    imp = np.asarray(part["importance"][part["main_method"]])
    top = [k for k in part["order"][:INTERACTION_COLUMNS] if imp[k] > 0]
    if len(top) < 2:
        return None
    columns = [part["groups"][k][0] for k in top]
    groups = {c: [c] for c in columns}
    rest = [c for c in X_fit.columns if c not in groups]
    if rest:
        groups["other columns"] = rest
    explainer = Explainer(model, groups=groups, background=background, target=target,
                          response_method=response_method, random_state=random_state,
                          n_jobs=n_jobs).fit(X_fit)
    M = interaction_matrix(explainer, kind="full")[: len(columns), : len(columns)]
    var = part["output_spread"] ** 2 or 1.0
    share = np.sqrt(np.clip(M / var, 0.0, None))
    share[share < np.sqrt(ROUND_OFF)] = 0.0
    pairs = sorted(
        ((float(share[i, j]), columns[i], columns[j])
         for i in range(len(columns)) for j in range(i + 1, len(columns))),
        reverse=True,
    )
    return {
        "columns": columns,
        "strength": share.tolist(),
        "top_pairs": [{"columns": [a, b], "strength": s}
                      for s, a, b in pairs[:5] if s > 0],
    }


def check_exact_limit(methods, X, groups, tree=False):
    """Refuse exact methods over more groups than exact enumeration allows.

    Exact methods enumerate all 2**K coalitions of K groups, except on the
    tree path; this is found before any model work.

    Parameters
    ----------
    methods : list of str or None
        Names given with ``--methods``; None picks methods that fit.
    X : DataFrame
        The table.
    groups : str, list or dict
        What :func:`load_groups` returns.
    tree : bool, default=False
        Whether the model will be a tree model read on the tree path, which
        takes exact methods for any number of groups.
    """
    from ._config import MAX_EXACT_GROUPS
    from ._methods import EXACT_METHODS, SINGLE_GROUP_METHODS

    exact = [m for m in methods or () if m in EXACT_METHODS]
    if tree or not exact or all(m in SINGLE_GROUP_METHODS for m in exact):
        return
    n_groups = len(groups) if isinstance(groups, (list, dict)) else X.shape[1]
    limit = MAX_EXACT_GROUPS
    if n_groups > limit:
        raise DataError(
            f"--methods {exact} enumerate all 2**K coalitions and {n_groups} "
            f"{'groups' if isinstance(groups, (list, dict)) else 'columns'} are more "
            f"than they allow (at most {limit}); drop --methods to use the "
            "sampled methods, or give fewer groups with --groups."
        )


def _check_groups_arg(groups, X):
    if isinstance(groups, str):
        if groups not in ("auto", "columns"):
            raise DataError(
                f"groups must be 'auto', 'columns', a list or a dict of column lists, "
                f"got {groups!r}."
            )
        return
    from ._partition import resolve_groups

    try:
        resolve_groups(groups, X.shape[1], list(X.columns))
    except (TypeError, ValueError) as exc:
        raise DataError(f"groups: {exc}") from exc


def _without(groups, dropped):
    """Given groups without the dropped columns (empty groups removed)."""
    if not dropped:
        return groups
    if isinstance(groups, dict):
        kept = {k: [c for c in v if c not in dropped] for k, v in groups.items()}
        return {k: v for k, v in kept.items() if v}
    kept = [[c for c in g if c not in dropped] for g in groups]
    return [g for g in kept if g]


def _score(model, X_test, y_test, classification, held_out, fitted_here=False):
    """The model's score on rows it was not fitted on, with a sentence."""
    from sklearn.metrics import accuracy_score, r2_score, roc_auc_score

    n = len(y_test)
    if held_out:
        where = f"on {n} held-out rows"
    elif fitted_here:
        where = (f"on the {n} rows it was fitted on (too few rows to hold some out, "
                 "so this is optimistic)")
    else:
        where = (f"on the {n} rows of the table (which may include the rows it was "
                 "trained on, so this can be optimistic)")
    if not classification:
        r2 = float(r2_score(y_test, model.predict(X_test)))
        return {"metric": "r2", "r2": r2, "n_rows": n, "held_out": held_out,
                "text": f"R² = {r2:.3f} {where}: the model accounts for "
                        f"{_share_of(max(r2, 0.0))} of the target's variance there "
                        "(0 is no better than always predicting the mean, 1 is "
                        "perfect)."}
    acc = float(accuracy_score(y_test, model.predict(X_test)))
    counts = pd.Series(y_test).value_counts(normalize=True)
    out = {"metric": "accuracy", "accuracy": acc, "majority": float(counts.iloc[0]),
           "n_rows": n, "held_out": held_out}
    text = (f"Accuracy {acc:.1%} {where}; always answering the most common class "
            f"({_plain(counts.index[0])!r}) would give {counts.iloc[0]:.1%}.")
    classes = getattr(model, "classes_", None)
    try:
        if classes is not None and len(classes) == 2 and hasattr(model, "predict_proba"):
            auc = roc_auc_score(np.asarray(y_test) == classes[1],
                                model.predict_proba(X_test)[:, 1])
        elif classes is not None and hasattr(model, "predict_proba"):
            auc = roc_auc_score(y_test, model.predict_proba(X_test),
                                multi_class="ovr", labels=classes)
        else:
            auc = None
    except ValueError:  # a class missing from the held-out rows
        auc = None
    if auc is not None:
        out["roc_auc"] = float(auc)
        text += f" ROC AUC {auc:.3f} (0.5 is chance, 1 is perfect ranking)."
    out["text"] = text
    return out


#: a single column that predicts the target this well is flagged as possible leakage
LEAK_ALONE = 0.98


def _predictive_columns(X, y, classification):
    """Warnings for numeric columns that alone predict the target almost perfectly."""
    from sklearn.metrics import roc_auc_score

    y = pd.Series(y).reset_index(drop=True)
    if classification:
        classes = sorted(y.unique(), key=str)
        if len(classes) != 2:
            return []
        target = (y == classes[1]).to_numpy()
    else:
        target = y.to_numpy(dtype=float)
    out = []
    for c in X.columns:
        if not pd.api.types.is_numeric_dtype(X[c]):
            continue
        x = X[c].to_numpy(dtype=float)
        keep = np.isfinite(x)
        if keep.sum() < 20 or np.unique(x[keep]).size < 2:
            continue
        if classification:
            if np.unique(target[keep]).size < 2:
                continue
            auc = float(roc_auc_score(target[keep], x[keep]))
            strength, what = max(auc, 1.0 - auc), f"ROC AUC {max(auc, 1.0 - auc):.3f}"
        else:
            rho = float(pd.Series(x[keep]).rank().corr(pd.Series(target[keep]).rank()))
            strength, what = abs(rho), f"rank correlation {rho:+.3f}"
        if np.isfinite(strength) and strength >= LEAK_ALONE:
            out.append({
                "kind": "leak", "level": "warning", "columns": [str(c)],
                "message": f"Column {c!r} alone predicts the target almost perfectly "
                f"({what}). It may be a copy of the target or something known only "
                "after it (leakage); check how it was recorded before trusting the "
                "model.",
            })
    return out


def _share_of(fraction):
    """A fraction in [0, 1] as a percentage that reads 100% only when it is 1."""
    text = f"{fraction:.0%}"
    return f"{fraction:.1%}" if text == "100%" and fraction < 1 else text


def _agreement_words(rms):
    """How well explanations agree, from their RMS difference / spread of the output."""
    if rms == 0:
        return "agree exactly (up to round-off)"
    pct = 100.0 * rms
    if rms < CLOSE:
        return f"agree closely: they differ by {pct:.1f}% of the prediction spread"
    if rms < NOTICEABLE:
        return f"differ noticeably: by {pct:.0f}% of the prediction spread"
    return f"disagree strongly: by {pct:.0f}% of the prediction spread"


def _leak_check(part, score):
    """A warning when one column's attributions dwarf all the others."""
    imp = np.asarray(part["importance"][part["main_method"]], dtype=float)
    total = imp.sum()
    if len(imp) < 2 or total <= 0:
        return None
    order = part["order"]
    top, second = imp[order[0]], imp[order[1]]
    share = top / total
    if share <= LEAK_SHARE or top <= LEAK_RATIO * second:
        return None
    name = part["group_names"][order[0]]
    ratio = "infinitely many" if second == 0 else f"{top / second:.0f}"
    text = (f"Column {name!r} carries {share:.0%} of all attributions, {ratio} times "
            f"more than the next column ({part['group_names'][order[1]]!r}). A column "
            "this dominant can be a copy of the target or something known only after "
            "it (leakage); check how it was recorded before trusting the model. If it "
            "is a genuine cause of the target, the model simply rests on it.")
    perfect = score and (score.get("r2", 0) > 0.99 or score.get("accuracy", 0) > 0.99)
    if perfect:
        text += " The near-perfect score points the same way."
    return {"kind": "leak", "level": "warning", "columns": [name], "message": text}


def _verdict(results):
    """The report's conclusion, in a few plain sentences."""
    out = []
    score = results.get("score")
    if score:
        if score["metric"] == "r2":
            quality = ("no better than predicting the mean" if score["r2"] <= 0.05 else
                       "weak" if score["r2"] < 0.3 else
                       "moderate" if score["r2"] < 0.7 else "good")
            out.append(f"The model's fit is {quality} (R² {score['r2']:.2f} on rows it "
                       "did not see)." if score["held_out"] else
                       f"The model's R² on the table is {score['r2']:.2f}.")
        else:
            gain = score["accuracy"] - score["majority"]
            quality = ("no better than always answering the most common class"
                       if gain <= 0.01 else "better than always answering the most "
                       f"common class by {100 * gain:.0f} percentage points")
            out.append(f"The model is {quality} (accuracy {score['accuracy']:.0%}).")
    cols = results["partitions"].get("columns") or results["partitions"].get("given")
    if cols:
        main = cols["main_method"]
        imp = np.asarray(cols["importance"][main])
        top = [k for k in cols["order"][:3] if imp[k] > 0]
        if top:
            share = imp[top].sum() / imp.sum()
            names = ", ".join(repr(cols["group_names"][k]) for k in top)
            out.append(f"Its predictions depend most on {names} ({share:.0%} of the "
                       f"mean absolute {METHOD_NAMES.get(main, main)} attributions).")
        else:
            out.append("No column changes its predictions on the explained rows.")
        what = "one column at a time" if "columns" in results["partitions"] else \
            "over the given groups"
        out.append(f"Explained {what}, the methods "
                   f"{_agreement_words(cols['mean_disagreement_rms'])}.")
    inter = results.get("interactions")
    if inter and inter["top_pairs"]:
        p = inter["top_pairs"][0]
        out.append(f"The strongest interaction is between {p['columns'][0]!r} and "
                   f"{p['columns'][1]!r} ({100 * p['strength']:.1f}% of the prediction "
                   "spread); interactions are what make the methods disagree.")
    agreed = results["partitions"].get("agreed")
    a = results.get("agreed")
    if agreed and a and not a.get("useful_partition", True):
        out.append(f"No grouping of the columns makes the methods agree: the model's "
                   f"interactions are spread over many pairs of columns, and the "
                   f"{len(agreed['groups'])} groups AGREED kept leave "
                   f"{a['remaining_share']:.0%} of the disagreement between groups. Read "
                   "the explanation one column at a time, knowing that the methods "
                   "differ there.")
    elif agreed and a:
        out.append(f"Over the {len(agreed['groups'])} groups AGREED chose, the methods "
                   f"{_agreement_words(agreed['mean_disagreement_rms'])}.")
    elif a and a.get("no_interactions"):
        out.append("The model has no interactions between columns, so every method "
                   "gives the same explanation and no grouping is needed.")
    elif a:
        out.append("AGREED found no merge of columns that pays off on held-out rows; "
                   "read the explanation one column at a time.")
    if cols and cols["mean_disagreement_rms"] >= NOTICEABLE and (
            not agreed or agreed["mean_disagreement_rms"] >= NOTICEABLE):
        out.append("Where the methods disagree, prefer the Shapley values: they share "
                   "each interaction evenly between its columns, while occlusion and "
                   "PDP/Arch give it all or nothing.")
    warnings_ = [c for c in results.get("checks", []) if c["level"] == "warning"]
    if warnings_:
        out.append(f"Read the {len(warnings_)} data warning"
                   f"{'s' if len(warnings_) > 1 else ''} at the top before trusting "
                   "any of this.")
    return out


def _agreed_history(grouper, X, scale):
    def num(v):
        return None if v is None else float(_clean(v, scale**2))

    return {
        "initial_loss": num(grouper.initial_loss_),
        "final_loss": num(grouper.loss_),
        "held_out_initial_loss": num(grouper.held_out_initial_loss_),
        "n_groups": int(grouper.n_groups_),
        "n_columns": int(X.shape[1]),
        "largest_group": int(max(len(g) for g in grouper.groups_)),
        "stop_reason": str(grouper.stop_reason_),
        "remaining_share": float(grouper.remaining_share_),
        "useful_partition": bool(grouper.useful_partition_),
        "groups": [[str(X.columns[j]) for j in g] for g in grouper.groups_],
        "merges": [
            {
                "groups": [[int(j) for j in g] for g in h["groups"]],
                "names": [str(n) for n in h["names"]],
                "columns": [[str(X.columns[j]) for j in g] for g in h["groups"]],
                "loss_before": num(h["loss_before"]),
                "loss_after": num(h["loss_after"]),
                "held_out_loss_before": num(h["held_out_loss_before"]),
                "held_out_loss_after": num(h["held_out_loss_after"]),
                "held_out_error": num(h["held_out_error"]),
                "accepted": bool(h["accepted"]),
                "n_groups": int(h["n_groups"]),
            }
            for h in grouper.history_
        ],
    }


def _evaluation_rate(model, X, response_method):
    """Model evaluations per second on table rows, for time estimates."""
    from ._model import ResponseFunction, auto_response

    rows = X.sample(20000, replace=True, random_state=0)
    try:
        if response_method == "auto":
            response_method = auto_response(model)[0]
        response = ResponseFunction(model, response_method)
        best = np.inf
        for _ in range(2):  # the first call may pay for warming up
            start = time.perf_counter()
            response.model_output(rows)
            best = min(best, time.perf_counter() - start)
        return len(rows) / max(best, 1e-6)
    except Exception:  # the estimate is only for the log
        return None


def analyse(X, y, *, model=None, estimator="hgb", groups="auto", methods=None,
            n_rows=50, background=50, n_jobs=None, random_state=0, log=print,
            test_size=0.25, drop=None, verbose=0, started=None):
    """Fit or take a model, score it, and explain it per column and over AGREED groups.

    Every option, the target and the groups are checked before any model is
    fitted or called. The data checks (identifier-like and constant columns,
    dates, tiny samples, one dominant column) go to ``checks``.

    Parameters
    ----------
    X : DataFrame
        The table, without the target.
    y : Series
        The target.
    model : estimator or None, default=None
        A fitted model; None fits the one ``estimator`` names on a training
        split and scores it on the held-out rows.
    estimator : {"hgb", "rf", "linear", "mlp"}, default="hgb"
        The model to fit when ``model`` is None (see :func:`make_model`).
    groups : {"auto", "columns"}, list or dict, default="auto"
        ``auto`` explains per column and over AGREED groups, ``columns`` per
        column only; a list or dict gives the groups.
    methods : list of str or None, default=None
        Explanation methods; None picks exact or sampled methods by size.
    n_rows : int, default=50
        Number of rows to explain (held-out rows when a model is fitted).
    background : int, default=50
        Number of background rows.
    n_jobs : int or None, default=None
        Parallel jobs for the model calls.
    random_state : int, default=0
        Seed of the split, the model and the sampling.
    log : callable, default=print
        Called with a line of progress.
    test_size : float, default=0.25
        Share of the rows held out to score a fitted model.
    drop : list of str or None, default=None
        Columns to leave out.
    verbose : int, default=0
        Show progress bars of the model calls when positive.
    started : float or None, default=None
        ``time.perf_counter()`` when the work began (reading the data);
        ``seconds`` counts from it. None counts from this call.

    Returns
    -------
    results : dict
        JSON-serialisable results.
    """
    started = time.perf_counter() if started is None else started
    if isinstance(n_rows, bool) or not isinstance(n_rows, (int, np.integer)) or n_rows < 1:
        raise DataError(f"n_rows must be a positive integer, got {n_rows!r}.")
    if model is None:
        check_estimator(estimator)
    check_methods(methods)
    if not isinstance(X, pd.DataFrame):
        raise DataError("X must be a pandas DataFrame with named columns.")
    if not 0.0 < float(test_size) < 1.0:
        raise DataError(f"test_size must be between 0 and 1, got {test_size!r}.")
    drop = check_drop(drop, X)
    check_target(y, model)
    _check_groups_arg(groups, X)
    tree = model is None and estimator in ("hgb", "rf")
    check_exact_limit(methods, X, groups, tree=tree)

    X, checks = prepare_table(X, fit=model is None, drop=drop)
    checks += _predictive_columns(
        X, y, is_classification(y) if model is None else is_classification(y, model))
    dropped = set(drop) | {c for ch in checks if ch["kind"] == "constant" and model is None
                           for c in ch["columns"]}
    if isinstance(groups, (list, dict)):
        groups = _without(groups, dropped)
    notes = []
    y = pd.Series(y).reset_index(drop=True)
    X = X.reset_index(drop=True)
    response_method = "auto"
    estimator_fitted = model is None
    if model is None:
        from sklearn.model_selection import train_test_split

        classification = is_classification(y)
        model, note = make_model(estimator, X, y, random_state=random_state)
        notes.append(note)
        n_test = int(round(test_size * len(y)))
        held_out = n_test >= 10 and len(y) - n_test >= 10
        if held_out:
            counts = y.value_counts()
            stratify = y if classification and counts.min() >= 2 and \
                n_test >= len(counts) else None
            X_fit, X_test, y_fit, y_test = train_test_split(
                X, y, test_size=n_test, random_state=random_state, stratify=stratify)
        else:
            X_fit, X_test, y_fit, y_test = X, X, y, y
        t = time.perf_counter()
        log(f"fitting a {estimator} model on {len(X_fit)} rows, {X.shape[1]} columns"
            + (f"; {len(X_test)} rows held out to score it" if held_out else ""))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", category=UserWarning)
            try:
                from sklearn.exceptions import ConvergenceWarning

                warnings.simplefilter("ignore", category=ConvergenceWarning)
            except ImportError:  # pragma: no cover
                pass
            model.fit(X_fit, y_fit)
        log(f"fitted in {_duration(time.perf_counter() - t)}")
    else:
        try:
            model.predict(X.iloc[:2])
        except Exception as exc:
            raise DataError(
                f"the model cannot predict on the table's columns ({exc}); give "
                "the table it was trained on (same columns, same encoding)."
            ) from exc
        classification = is_classification(y, model)
        held_out = False
        X_fit, X_test, y_test = X, X, y
    score = _score(model, X_test, y_test, classification, held_out,
                   fitted_here=estimator_fitted)
    log(score["text"])
    target_class = None
    if classification and hasattr(model, "classes_") and len(model.classes_) > 2:
        # explain the most frequent class; one output keeps the report readable
        target_class = _plain(y.mode().iloc[0])
        notes.append(f"The target has {len(model.classes_)} classes; the report explains "
                     f"class {target_class!r}, the most frequent.")
    rows = X_test.iloc[: min(n_rows, len(X_test))]
    bg = min(background, len(X_fit))
    rate = _evaluation_rate(model, X_fit, response_method)
    common = dict(background=bg, random_state=random_state, n_jobs=n_jobs,
                  target=target_class, response_method=response_method)

    partitions, history = {}, None
    if isinstance(groups, (list, dict)):
        partitions["given"] = groups
    else:
        partitions["columns"] = None
    results = {}
    for key, part in list(partitions.items()):
        t = time.perf_counter()
        results[key] = _explain_partition(
            model, X_fit, rows, part, methods, notes=notes, verbose=verbose, log=log,
            rate=rate, what="the given groups" if key == "given" else
            "one group per column", **common)
        log(f"done in {_duration(time.perf_counter() - t)}")
    first = results.get("columns") or results.get("given")
    scale = first["output_spread"] or 1.0
    interactions = None
    if "columns" in results:
        t = time.perf_counter()
        log("measuring the interactions between the most important columns")
        interactions = _interactions(model, X_fit, results["columns"], **common)
        log(f"done in {_duration(time.perf_counter() - t)}")
        leak = _leak_check(results["columns"], score)
        flagged = {c for ch in checks if ch["kind"] == "leak" for c in ch["columns"]}
        if leak and leak["columns"][0] not in flagged:
            checks.append(leak)
    if groups == "auto" and X.shape[1] > 1:
        from ._grouping import AdaptiveGrouper

        # the tree path reads the N x N sums from the leaves, so more rows
        # (more power to tell a real interaction from noise) cost little
        N = min(200 if first["algorithm"] == "tree" else 50, len(X_fit))
        t = time.perf_counter()
        estimate = ""
        low = 2 * X.shape[1] * N * N
        if rate and first["algorithm"] != "tree" and low / rate >= 5:
            estimate = (f": at least {low / 1e6:.2g} million model evaluations, roughly "
                        f"{_duration(low / rate)} or more with each merge")
        log(f"grouping interacting columns with AGREED on {N} rows{estimate}")
        grouper = AdaptiveGrouper(
            model, max_samples=N, n_groups=None, target=target_class,
            response_method=response_method, n_jobs=n_jobs, random_state=random_state,
            verbose=verbose,
        ).fit(X_fit)
        log(f"done in {_duration(time.perf_counter() - t)}: {grouper.n_groups_} groups")
        history = _agreed_history(grouper, X_fit, scale)
        history["no_interactions"] = not history["initial_loss"]
        if history["n_groups"] < X.shape[1]:
            agreed = {str(name): [str(X_fit.columns[j]) for j in cols]
                      for name, cols in zip(grouper.group_names_, grouper.groups_)}
            t = time.perf_counter()
            results["agreed"] = _explain_partition(
                model, X_fit, rows, agreed, methods, notes=notes, verbose=verbose,
                log=log, rate=rate, what="the AGREED groups", **common)
            log(f"done in {_duration(time.perf_counter() - t)}")
    out = {
        "n_rows": int(X.shape[0]),
        "columns": [str(c) for c in X.columns],
        "target": str(y.name),
        "task": "classification" if classification else "regression",
        "model": type(model).__name__ if not hasattr(model, "steps") else
        " > ".join(type(s).__name__ for _, s in model.steps),
        "n_fit_rows": int(len(X_fit)),
        "score": score,
        "checks": checks,
        "dropped_columns": sorted(dropped),
        "partitions": results,
        "interactions": interactions,
        "agreed": history,
        "notes": list(dict.fromkeys(notes)),
    }
    out["verdict"] = _verdict(out)
    out["seconds"] = round(time.perf_counter() - started, 2)
    return out


# -- HTML ------------------------------------------------------------------------------
#: rows shown in a table; the rest are counted and left to results.json
TABLE_ROWS = 15
#: merges listed in the AGREED table
MERGE_ROWS = 10
METHOD_NAMES = {
    "shapley": "Shapley", "banzhaf": "Banzhaf", "occlusion": "occlusion (PFI)",
    "pfi": "occlusion (PFI)", "arch": "PDP/Arch", "pdp": "PDP/Arch",
    "kernel_shap": "Kernel SHAP", "permutation_shap": "permutation SHAP",
    "lime": "LIME", "rise": "RISE", "integrated_gradients": "Integrated Gradients",
}


def _e(text):
    return html.escape(str(text), quote=True)


def _num(v, fmt="{:.3g}"):
    """A number for a table; exact zeros (and round-off set to 0) show as 0."""
    return "0" if v == 0 else fmt.format(v)


def _pct(fraction):
    """A fraction as a percentage; 0 stays 0."""
    if not fraction:
        return "0%"
    pct = 100.0 * fraction
    return "<0.1%" if abs(pct) < 0.1 else f"{pct:.1f}%"


def _table(header, rows, fmt="{:.3g}"):
    head = "".join(f"<th>{_e(h)}</th>" for h in header)
    body = []
    for row in rows:
        cells = []
        for v in row:
            if isinstance(v, float):
                cells.append(f"<td class='num'>{_e(_num(v, fmt))}</td>")
            else:
                cells.append(f"<td>{_e(v)}</td>")
        body.append("<tr>" + "".join(cells) + "</tr>")
    return f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"


def _more(n_more, what):
    if n_more <= 0:
        return ""
    return (f"<p class='small'>… and {n_more} more {what}, not shown; all are in "
            "results.json.</p>")


def _png(fig):
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=90, bbox_inches="tight")
    import matplotlib.pyplot as plt

    plt.close(fig)
    data = base64.b64encode(buf.getvalue()).decode("ascii")
    return f"<img alt='figure' src='data:image/png;base64,{data}'>"


CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;max-width:1100px;
margin:2em auto;padding:0 1em;color:#222;line-height:1.45}
h1{font-size:1.6em}h2{font-size:1.25em;border-bottom:1px solid #ddd;padding-bottom:.2em;
margin-top:1.8em}table{border-collapse:collapse;margin:.6em 0;font-size:.9em}
td,th{border:1px solid #ddd;padding:.25em .6em;vertical-align:top}th{background:#f4f4f4}
td.num{text-align:right;font-variant-numeric:tabular-nums}img{max-width:100%}
.warn{background:#fdecea;border-left:4px solid #d93025;padding:.4em .8em;margin:.4em 0}
.note{background:#fff8e1;border-left:4px solid #f0c000;padding:.4em .8em;margin:.4em 0}
.ok{background:#e8f5e9;border-left:4px solid #2e7d32;padding:.4em .8em;margin:.4em 0}
.verdict{background:#f1f5fb;border:1px solid #c9d7ee;padding:.6em 1.2em}
.small{font-size:.85em;color:#555}code{white-space:nowrap}
"""


def _method_list(methods):
    return ", ".join(METHOD_NAMES.get(m, m) for m in methods)


def _drivers_table(part):
    imp = part["importance"][part["main_method"]]
    total = sum(imp) or 1.0
    single = all(len(g) == 1 for g in part["groups"])
    header = ["", "column" if single else "group"]
    if not single:
        header.append("columns")
    header += [f"mean |{METHOD_NAMES.get(part['main_method'], part['main_method'])}|",
               "share"]
    if "direction" in part:
        header.append("effect on the prediction")
    rows = []
    for rank, k in enumerate(part["order"][:TABLE_ROWS], 1):
        row = [str(rank), part["group_names"][k] if single else part["group_labels"][k]]
        if not single:
            row.append(", ".join(part["groups"][k]))
        row += [float(imp[k]), _pct(imp[k] / total)]
        if "direction" in part:
            row.append(part["direction"][k])
        rows.append(row)
    what = "columns" if single else "groups"
    return [_table(header, rows), _more(len(part["order"]) - TABLE_ROWS, what)]


def _methods_table(part):
    rows = [
        [part["group_labels"][k]]
        + [float(part["importance"][m][k]) for m in part["methods"]]
        for k in part["order"][:TABLE_ROWS]
    ]
    what = "columns" if all(len(g) == 1 for g in part["groups"]) else "groups"
    return [
        "<p>Mean absolute attribution of every method:</p>",
        _table([""] + [METHOD_NAMES.get(m, m) for m in part["methods"]], rows),
        _more(len(part["order"]) - TABLE_ROWS, what),
    ]


def _agreement_paragraph(part, what):
    rms = part["mean_disagreement_rms"]
    text = (f"<p>Explained {what}, the methods ({_e(_method_list(part['methods']))}) "
            f"<b>{_e(_agreement_words(rms))}</b>. ")
    text += ("This is the root mean square distance between two methods' explanations "
             "of a row, averaged over pairs of methods, as a share of the prediction "
             "spread (the standard deviation of the explained output over the "
             "training rows); below "
             f"{100 * CLOSE:.0f}% they tell the same story, above "
             f"{100 * NOTICEABLE:.0f}% they can rank the columns differently.</p>")
    return text


def render_html(results, figures=None, title="skdecomp report"):
    """A self-contained HTML page; every user-provided string is escaped.

    Parameters
    ----------
    results : dict
        What :func:`analyse` returns.
    figures : dict or None, default=None
        What :func:`make_figures` returns.
    title : str, default="skdecomp report"
        Title of the page.

    Returns
    -------
    page : str
        The HTML page.
    """
    figures = figures or {}
    parts_ = results["partitions"]
    score = results.get("score")
    fit_rows = results.get("n_fit_rows", results["n_rows"])
    parts = [
        "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>",
        "<meta name='viewport' content='width=device-width, initial-scale=1'>",
        f"<title>{_e(title)}</title><style>{CSS}</style></head><body>",
        f"<h1>{_e(title)}</h1>",
        f"<p>Target <b>{_e(results['target'])}</b> ({_e(results['task'])}), "
        f"model <code>{_e(results['model'])}</code> on {results['n_rows']} rows "
        f"({fit_rows} used to fit or as background), {len(results['columns'])} "
        f"columns. The analysis took {_e(_duration(results['seconds']))} "
        "(wall time, from reading the data to writing this page).</p>",
    ]
    # -- data checks first
    parts.append("<h2>Data checks</h2>")
    checks = results.get("checks", [])
    warnings_ = [c for c in checks if c["level"] == "warning"]
    for c in warnings_:
        message = re.sub(r"(--drop [^\s;,]+?)(?=[.;,]?(?:\s|$))", r"<code>\1</code>",
                         _e(c["message"]))
        parts.append(f"<div class='warn'><b>Warning.</b> {message}</div>")
    if not warnings_:
        parts.append("<div class='ok'>No identifier-like or constant column, no column "
                     "that dwarfs the others, and enough rows.</div>")
    for c in checks:
        if c["level"] != "warning":
            parts.append(f"<div class='note'>{_e(c['message'])}</div>")
    # -- verdict
    if results.get("verdict"):
        parts.append("<h2>In short</h2><div class='verdict'><ul>")
        parts.extend(f"<li>{_e(s)}</li>" for s in results["verdict"])
        parts.append("</ul></div>")
    # -- the model and the explained output
    parts.append("<h2>The model</h2>")
    if score:
        parts.append(f"<p>{_e(score['text'])}</p>")
    first = parts_.get("columns") or parts_.get("given")
    for note in results["notes"]:
        parts.append(f"<div class='note'>{_e(note)}</div>")
    if first:
        parts.append(
            f"<p>Explained output: <b>{_e(first['explained_output'])}</b>. Its average "
            f"over the background rows is {_num(first['expected_value'])} and its spread "
            f"(standard deviation) {_num(first['output_spread'])}. An attribution is in "
            "the same units: how much a column moves this output of one row away from "
            "the average; the Shapley values of a row add up to its output minus the "
            f"average. {first['n_rows']} rows are explained"
            + (" (held-out rows)" if score and score.get("held_out") else "")
            + f" against {first['n_background']} background rows.</p>")
    # -- drivers
    if first:
        single = "columns" in parts_
        parts.append("<h2>What drives the predictions</h2>")
        parts.append(
            f"<p>Columns ranked by their mean absolute "
            f"{_e(METHOD_NAMES.get(first['main_method'], first['main_method']))} "
            "attribution over the explained rows"
            + ("; the effect column says how the value of a column moves its "
               "attribution on these rows." if single else ".") + "</p>")
        key = "columns" if single else "given"
        parts.extend(figures.get(f"drivers:{key}", []))
        parts.extend(_drivers_table(first))
    # -- agreement
    if first:
        parts.append("<h2>Do the explanation methods agree?</h2>")
        what = "one column at a time" if "columns" in parts_ else "over the given groups"
        parts.append(_agreement_paragraph(first, what))
        parts.append(
            "<p>The methods differ only in how they share out interactions: Shapley "
            "values split each interaction equally between the columns involved, "
            "occlusion (like permutation importance) gives every column the whole of "
            "its interactions, PDP/Arch gives none, and Banzhaf lies between. Without "
            "interactions all of them coincide, so where they disagree, columns "
            "interact."
            + (" The sampled methods (Kernel SHAP, permutation SHAP) also carry "
               "sampling noise." if any(m in SAMPLED_DEFAULT for m in first["methods"])
               else "") + "</p>")
        key = "columns" if "columns" in parts_ else "given"
        parts.extend(figures.get(f"agreement:{key}", []))
        parts.extend(_methods_table(first))
    inter = results.get("interactions")
    if inter:
        parts.append("<h3>Which columns interact</h3>")
        if inter["top_pairs"]:
            parts.append(
                "<p>The strength of the interaction of two columns is the root mean "
                "square of the part of the output that depends on both together, as a "
                "share of the prediction spread. The strongest pairs among the "
                f"{len(inter['columns'])} most important columns:</p><ul>")
            parts.extend(
                f"<li>{_e(p['columns'][0])} × {_e(p['columns'][1])}: "
                f"{_e(_pct(p['strength']))}</li>" for p in inter["top_pairs"])
            parts.append("</ul>")
            parts.extend(figures.get("interactions", []))
        else:
            parts.append("<p>The most important columns do not interact (up to "
                         "round-off): the model adds up their effects.</p>")
    # -- AGREED
    a = results.get("agreed")
    if a:
        parts.append("<h2>AGREED: groups of columns the methods agree on</h2>")
        parts.extend(_agreed_summary(a, parts_.get("agreed")))
        if "agreed_curve" in figures:
            parts.extend(figures["agreed_curve"])
        if a["merges"] and a["initial_loss"]:
            parts.append(
                "<p>Each merge, with the share of the starting interaction loss it "
                "removed on the sample and on held-out rows (the loss is the mean "
                "squared gap between the PDP and occlusion effects of the groups):</p>")
            rows = [[" + ".join(_merged(g) for g in h.get("columns", h["names"])),
                     str(h["n_groups"]),
                     _share(h["loss_before"] - h["loss_after"], a["initial_loss"]),
                     _share(_diff(h["held_out_loss_before"], h["held_out_loss_after"]),
                            a.get("held_out_initial_loss")),
                     "yes" if h.get("accepted", True)
                     else "no: did not pay on held-out rows"]
                    for h in a["merges"][:MERGE_ROWS]]
            parts.append(_table(["merged", "groups after", "loss removed",
                                 "held-out loss removed", "kept"], rows))
            parts.append(_more(len(a["merges"]) - MERGE_ROWS, "merges"))
        agreed = parts_.get("agreed")
        if agreed:
            parts.append(_agreement_paragraph(agreed, "over the AGREED groups"))
            parts.extend(figures.get("drivers:agreed", []))
            parts.extend(_drivers_table(agreed))
            parts.extend(figures.get("agreement:agreed", []))
    parts.append("<p class='small'>Made with skdecomp. Every number of this page, "
                 "and the attributions of every explained row, are in "
                 "results.json.</p></body></html>")
    return "\n".join(parts)


_STOP_REASONS = {
    "held_out": "the next merge did not lower the interaction loss of held-out rows "
    "by more than its sampling error and the price of a coarser explanation",
    "rel_tol": "the interaction loss fell below the tolerance",
    "n_groups": "the requested number of groups was reached",
    "max_group_size": "every further merge would exceed the largest group size",
}


def _diff(before, after):
    return None if before is None or after is None else before - after


def _share(value, total):
    """A loss decrease as a percentage of the initial loss; round-off shows as 0."""
    if value is None or not total:
        return "-"
    share = 100.0 * value / total
    return "0%" if abs(share) < 0.05 else f"{share:.1f}%"


def _merged(columns):
    """One side of a merge: a column, or a group of columns in parentheses."""
    if isinstance(columns, str):
        return columns
    return columns[0] if len(columns) == 1 else f"({', '.join(columns)})"


def _agreed_summary(a, agreed=None):
    """Plain-words paragraphs on what AGREED merged and why it stopped."""
    out = []
    n_columns = a["n_columns"]
    if not a["initial_loss"]:
        return ["<p>The model has no interactions between columns (up to round-off): "
                "every method gives the same explanation one column at a time, and "
                "AGREED has nothing to merge.</p>"]
    if a["n_groups"] >= n_columns:
        return [f"<p>AGREED tried to merge interacting columns, but no merge lowered the "
                f"interaction loss of held-out rows enough to pay for a coarser "
                f"explanation; it kept the {n_columns} columns apart. Read the "
                "explanation one column at a time above.</p>"]
    removed = _share(a["initial_loss"] - a["final_loss"], a["initial_loss"])
    merged = [g for g in a["groups"] if len(g) > 1]
    out.append(
        f"<p>AGREED merged the {n_columns} columns into {a['n_groups']} groups, "
        f"removing {_e(removed)} of the interaction loss between groups on its sample; "
        f"it stopped because {_e(_STOP_REASONS.get(a['stop_reason'], a['stop_reason']))}."
        f" The {len(merged)} merged group{'s' if len(merged) != 1 else ''}:</p><ul>")
    out.extend(f"<li>{_e(', '.join(g))}</li>" for g in merged[:TABLE_ROWS])
    out.append("</ul>")
    out.append(_more(len(merged) - TABLE_ROWS, "merged groups"))
    out.append(f"<p>The other {n_columns - sum(len(g) for g in merged)} columns stay "
               "on their own.</p>")
    if not a.get("useful_partition", True):
        out.append(
            "<div class='warn'><b>No useful partition.</b> These groups leave "
            f"{100 * a['remaining_share']:.0f}% of the interaction loss between "
            "groups on held-out rows: the model's interactions are spread over many "
            "pairs of columns, none strong enough to be worth a merge, so no "
            "partition makes the methods agree at a readable size.</div>"
        )
    if a["largest_group"] > max(2, n_columns // 2):
        out.append(
            "<div class='warn'><b>Warning.</b> One group holds "
            f"{a['largest_group']} of the {n_columns} columns. The "
            "explanations agree over it only because they no longer tell "
            "those columns apart; the model's interactions are spread over "
            "many columns. Read the per-column results above, or bound the "
            "groups (AdaptiveGrouper(max_group_size=...)).</div>"
        )
    return out


def _agreed_curve(plt, agreed):
    """Loss left after every merge, on the sample and on held-out rows."""
    merges = agreed["merges"]
    n = [merges[0]["n_groups"] + 1] + [h["n_groups"] for h in merges]
    fig, ax = plt.subplots(figsize=(7, 3.8))
    curves = [("on the sample", agreed["initial_loss"], "loss_after", "o", "C0")]
    if agreed.get("held_out_initial_loss"):
        curves.append(("on held-out rows", agreed["held_out_initial_loss"],
                       "held_out_loss_after", "s", "C1"))
    for label, start, key, marker, color in curves:
        values = [start] + [h[key] for h in merges]
        share = 100.0 * np.asarray(values, dtype=float) / (start or 1.0)
        ax.plot(n, share, marker=marker, color=color, label=label)
    refused = [h["n_groups"] for h in merges if not h.get("accepted", True)]
    if refused:
        ax.axvspan(min(refused) - 0.5, min(refused) + 0.5, color="0.9", zorder=0,
                   label="merge refused")
    chosen = agreed.get("n_groups")
    if chosen is not None:
        ax.axvline(chosen, color="0.3", linestyle=":", linewidth=1.2,
                   label=f"chosen: {chosen} groups")
    ax.set_xlim(max(n) + 0.5, min(n) - 0.5)
    step = max(1, len(n) // 12)
    ax.set_xticks(n[::step])
    ax.set_ylim(bottom=0)
    ax.set_xlabel("number of groups (merges go right)")
    ax.set_ylabel("interaction loss left, % of start")
    ax.set_title("What each AGREED merge buys", pad=10)
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.02, 1.0), borderaxespad=0)
    fig.tight_layout()
    return fig


def _heatmap(plt, values, labels, title, floor):
    """Annotated heatmap of percentages; the colour range starts at ``floor``.

    A matrix of round-off zeros is drawn in one colour, never stretched over
    the full colour range.
    """
    M = 100.0 * np.asarray(values, dtype=float)
    n = len(labels)
    fig, ax = plt.subplots(figsize=(max(4.5, 0.5 * n + 3.0), max(3.4, 0.42 * n + 1.6)))
    vmax = max(float(np.nanmax(M, initial=0.0)), floor)
    im = ax.imshow(M, vmin=0.0, vmax=vmax, cmap="viridis")
    for i in range(n):
        for j in range(n):
            v = M[i, j]
            if not np.isfinite(v):
                continue
            text = "0" if v == 0 else ("<0.1" if v < 0.1 else f"{v:.1f}")
            ax.text(j, i, text, ha="center", va="center", fontsize=7 if n > 6 else 8,
                    color="white" if v < 0.6 * vmax else "black")
    ax.set_xticks(range(n))
    ax.set_yticks(range(n))
    ax.set_xticklabels(labels, rotation=35, ha="right", rotation_mode="anchor")
    ax.set_yticklabels(labels)
    fig.colorbar(im, ax=ax, fraction=0.046, pad=0.04, label="% of the prediction spread")
    ax.set_title(title, pad=10)
    fig.tight_layout()
    return fig


def _drivers_figure(plt, part):
    """Mean absolute attribution of every method for the top groups."""
    from .plot import method_color

    top = part["order"][:TABLE_ROWS][::-1]
    methods = part["methods"]
    labels = [part["group_labels"][k] for k in top]
    fig, ax = plt.subplots(figsize=(8, 0.22 * len(top) * (1 + 0.2 * len(methods)) + 1.5))
    height = 0.8 / len(methods)
    y = np.arange(len(top))
    for i, m in enumerate(methods):
        imp = np.asarray(part["importance"][m])[top]
        ax.barh(y + ((len(methods) - 1) / 2 - i) * height, imp, height=height,
                label=METHOD_NAMES.get(m, m), color=method_color(m))
    ax.set_yticks(y)
    ax.set_yticklabels(labels)
    ax.set_xlabel("mean |attribution| (units of the explained output)")
    n = len(part["order"])
    shown = "" if n <= TABLE_ROWS else f" (top {TABLE_ROWS} of {n})"
    ax.set_title(f"Mean |attribution| over {part['n_rows']} rows{shown}", pad=10)
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.02, 1.0), borderaxespad=0)
    fig.tight_layout()
    return fig


def make_figures(results):
    """Figures embedded in the report (empty when matplotlib is missing).

    Parameters
    ----------
    results : dict
        What :func:`analyse` returns.

    Returns
    -------
    figures : dict
        HTML ``img`` tags by place in the report.
    """
    try:
        import matplotlib

        matplotlib.use("Agg", force=False)
        import matplotlib.pyplot as plt
    except ImportError:
        return {}
    figures = {}
    for key, part in results["partitions"].items():
        figures[f"drivers:{key}"] = [_png(_drivers_figure(plt, part))]
        if len(part["methods"]) > 1:
            names = [METHOD_NAMES.get(m, m) for m in part["methods"]]
            figures[f"agreement:{key}"] = [_png(_heatmap(
                plt, part["disagreement_rms"], names,
                "How far apart the methods' explanations are", floor=5.0))]
    inter = results.get("interactions")
    if inter and inter["top_pairs"]:
        M = np.array(inter["strength"], dtype=float)
        np.fill_diagonal(M, np.nan)
        labels = [_label(c, [c], width=20) for c in inter["columns"]]
        figures["interactions"] = [_png(_heatmap(
            plt, M, labels, "Interaction strength of column pairs", floor=5.0))]
    agreed = results.get("agreed")
    if agreed and agreed["merges"] and agreed["initial_loss"]:
        figures["agreed_curve"] = [_png(_agreed_curve(plt, agreed))]
    return figures


# -- output ----------------------------------------------------------------------------
def _digest(data):
    return hashlib.sha256(data).hexdigest()


def _read_nofollow(path):
    """Bytes of a regular file, refusing to follow a symbolic link."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    with os.fdopen(fd, "rb") as f:
        return f.read()


def _foreign_entries(out):
    """Names in ``out`` that an earlier report did not write, or that changed since."""
    try:
        recorded = json.loads(_read_nofollow(out / MARKER))["files"]
        if not isinstance(recorded, dict):
            recorded = {}
    except (OSError, ValueError, KeyError, TypeError):
        recorded = {}
    foreign = []
    with os.scandir(out) as entries:
        for entry in entries:
            name = entry.name
            if name.startswith(STAGING_PREFIX):
                continue  # another run's staging folder; never touched
            regular = entry.is_file(follow_symlinks=False)
            if regular and name == MARKER and recorded:
                continue
            if regular and name in REPORT_FILES and name in recorded:
                try:
                    if _digest(_read_nofollow(out / name)) == recorded[name]:
                        continue
                except OSError:
                    pass
            foreign.append(name)
    return sorted(foreign)


def _probe_writable(folder, label):
    """Create and remove a folder in ``folder``, as the report will."""
    try:
        os.rmdir(tempfile.mkdtemp(prefix=STAGING_PREFIX, dir=folder))
    except OSError as exc:
        raise DataError(
            f"--out {label}: cannot write in {folder} ({exc.strerror or exc}); "
            "choose a folder you can write to."
        ) from exc


def check_output(out_dir, overwrite=False):
    """Check that the report can be written to ``out_dir``, before any model work.

    Parameters
    ----------
    out_dir : str or path-like
        The report folder. It may be missing (its parent must exist), empty,
        or hold an earlier report; other files in it need ``overwrite``.
    overwrite : bool, default=False
        Whether to write into a folder holding files the report did not
        write; only the report's own files are then replaced.

    Returns
    -------
    action : str
        What writing the report will do, for the log.
    """
    label = os.fspath(out_dir)
    out = Path(os.path.abspath(label))
    if not out.name:
        raise DataError(f"--out {label}: give a folder for the report, not the root.")
    parent = out.parent
    real_parent = os.path.realpath(parent)
    for fs in PSEUDO_FILESYSTEMS:
        if real_parent == fs or real_parent.startswith(fs + os.sep):
            raise DataError(
                f"--out {label} is under {fs}, a system folder that holds no files; "
                "choose a folder in your home or working directory."
            )
    if os.path.islink(out):
        raise DataError(
            f"--out {label} is a symbolic link; skdecomp does not follow links when "
            "it writes. Give the folder itself, or a new folder."
        )
    if not parent.is_dir():
        raise DataError(
            f"--out {label}: the folder {parent} that should hold it does not exist; "
            f"create it first (mkdir -p {parent}) or choose another --out."
        )
    if not out.exists():
        _probe_writable(parent, label)
        return f"writing the report to the new folder {out}"
    if not out.is_dir():
        raise DataError(
            f"--out {label} is a file, not a folder; give a folder for index.html "
            "and results.json (a new one is created)."
        )
    _probe_writable(out, label)
    for name in (*REPORT_FILES, MARKER):
        target = out / name
        if target.is_dir() and not target.is_symlink():
            raise DataError(
                f"--out {label} holds a folder named {name}; move it away or "
                "choose another --out."
            )
    foreign = _foreign_entries(out)
    if not foreign:
        if any((out / name).exists() for name in REPORT_FILES):
            return f"replacing the earlier skdecomp report in {out}"
        return f"writing the report to the empty folder {out}"
    if not overwrite:
        shown = ", ".join(foreign[:5])
        if len(foreign) > 5:
            shown += f" and {len(foreign) - 5} more"
        raise DataError(
            f"--out {label} already holds files skdecomp did not write ({shown}); "
            "choose a new or empty folder, or pass --overwrite to replace only "
            "index.html and results.json there."
        )
    return (
        f"replacing index.html and results.json in {out} (--overwrite); its other "
        "files are left alone"
    )


def _write_file(folder, name, data):
    """Write ``data`` (bytes) to a new file ``folder / name``, flushed to disk."""
    with open(folder / name, "xb") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())


def write_report(results, out_dir, title="skdecomp report", overwrite=False,
                 started=None):
    """Write ``index.html`` and ``results.json`` into ``out_dir``, atomically.

    Both files are written to a staging folder first (next to ``out_dir``
    when it does not exist yet, inside it when it does, so that moving them
    is a rename on one file system) and moved into place only when complete.
    A failure leaves an earlier report untouched. Symbolic links in
    ``out_dir`` are replaced, never followed.

    Parameters
    ----------
    results : dict
        What :func:`analyse` returns.
    out_dir : str or path-like
        The report folder; see :func:`check_output`.
    title : str, default="skdecomp report"
        Title of the page.
    overwrite : bool, default=False
        Whether to write into a folder holding files the report did not write.
    started : float or None, default=None
        ``time.perf_counter()`` when the work began; the report's time is then
        the wall time from it to the page, figures included.

    Returns
    -------
    out : Path
        The report folder.
    """
    check_output(out_dir, overwrite=overwrite)
    out = Path(os.path.abspath(os.fspath(out_dir)))
    figures = make_figures(results)
    if started is not None:
        results = dict(results, seconds=round(time.perf_counter() - started, 2))
    files = {
        "results.json": json.dumps(strict_json(results), indent=2, allow_nan=False).encode(),
        "index.html": render_html(results, figures, title).encode("utf-8"),
    }
    existing = out.is_dir()
    staging_dir = out if existing else out.parent
    staging = Path(tempfile.mkdtemp(prefix=STAGING_PREFIX, dir=staging_dir))
    moved = []
    try:
        for name, data in files.items():
            _write_file(staging, name, data)
        marker = {"files": {name: _digest(data) for name, data in files.items()}}
        _write_file(staging, MARKER, json.dumps(marker).encode("utf-8"))
        if existing:
            # os.replace swaps the directory entry: a symbolic link is replaced
            for name in (*files, MARKER):
                os.replace(staging / name, out / name)
                moved.append(name)
        else:
            # mkdtemp makes a private folder; give it the mode a new folder gets
            probe = staging / "mode"
            os.mkdir(probe)
            mode = os.stat(probe).st_mode & 0o777
            os.rmdir(probe)
            os.chmod(staging, mode)
            os.rename(staging, out)
            staging = None
    except OSError as exc:
        state = (
            f"only {', '.join(moved)} were replaced" if moved
            else "nothing there was changed"
        )
        raise DataError(
            f"could not write the report to {out} ({exc.strerror or exc}); {state}. "
            "Free some space or choose another --out."
        ) from exc
    finally:
        if staging is not None:
            shutil.rmtree(staging, ignore_errors=True)
    return out
