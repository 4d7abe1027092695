"""The analysis behind ``skdecomp report`` and ``skdecomp demo``, and its HTML page."""

# SPDX-License-Identifier: BSD-3-Clause

import base64
import functools
import hashlib
import html
import io
import json
import os
import shutil
import tempfile
import time
import zipfile
from pathlib import Path

import numpy as np
import pandas as pd

__all__ = [
    "DataError",
    "load_table",
    "load_model",
    "load_groups",
    "check_target",
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
def load_table(path, target):
    """Read a CSV or Parquet file and split off the target column.

    Parameters
    ----------
    path : str or path-like
        A ``.csv`` file, or a ``.parquet``/``.pq`` file.
    target : str
        Name of the target column.

    Returns
    -------
    X : DataFrame
        The other columns; text columns become categorical.
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
            X[col] = X[col].astype("category")
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


def make_model(kind, X, y, random_state=None):
    """A pipeline that encodes non-numeric columns, then the chosen model.

    Parameters
    ----------
    kind : {"hgb", "rf", "linear", "mlp"}
        The model.
    X : DataFrame
        The table, without the target.
    y : Series
        The target; it decides between classifier and regressor.
    random_state : int or None, default=None
        Seed of the model.

    Returns
    -------
    pipeline : Pipeline
        The unfitted pipeline.
    note : str
        What was encoded.
    """
    from sklearn.compose import ColumnTransformer
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
    from sklearn.preprocessing import OneHotEncoder, StandardScaler

    clf = is_classification(y)
    models = {
        "hgb": (HistGradientBoostingClassifier if clf else HistGradientBoostingRegressor)(
            random_state=random_state
        ),
        "rf": (RandomForestClassifier if clf else RandomForestRegressor)(
            n_estimators=100, random_state=random_state
        ),
        "linear": LogisticRegression(max_iter=1000) if clf else RidgeCV(),
        "mlp": (MLPClassifier if clf else MLPRegressor)(
            hidden_layer_sizes=(64,), max_iter=500, random_state=random_state
        ),
    }
    categorical = [c for c in X.columns if not pd.api.types.is_numeric_dtype(X[c])]
    numeric = [c for c in X.columns if c not in categorical]
    transformers = []
    if categorical:
        transformers.append(
            (
                "categorical",
                make_pipeline(
                    SimpleImputer(strategy="most_frequent"),
                    OneHotEncoder(handle_unknown="ignore"),
                ),
                categorical,
            )
        )
    if numeric:
        transformers.append(
            ("numeric", make_pipeline(SimpleImputer(), StandardScaler()), numeric)
        )
    pre = ColumnTransformer(transformers)
    note = (
        f"non-numeric columns {categorical} are one-hot encoded inside the model "
        "pipeline and explained as raw columns"
        if categorical
        else "all columns are numeric"
    )
    return make_pipeline(pre, models[kind]), note


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
SAMPLED_DEFAULT = ["kernel_shap", "permutation_shap", "lime"]


def _explain_partition(model, X, groups, methods, *, n_rows, background, random_state,
                       n_jobs, notes, target=None):
    from . import metrics
    from ._explainer import MAX_EXACT_GROUPS, Explainer
    from ._model import describe_response

    from ._partition import resolve_groups

    positions, names = resolve_groups(
        None if groups is None else groups, X.shape[1], list(X.columns)
    )
    K = len(positions)
    chosen = list(methods) if methods else None
    if chosen is None:
        chosen = EXACT_DEFAULT if K <= MAX_EXACT_GROUPS else SAMPLED_DEFAULT
        if K > MAX_EXACT_GROUPS:
            notes.append(
                f"{K} groups are more than exact enumeration allows (at most "
                f"{MAX_EXACT_GROUPS}); using the sampled methods {SAMPLED_DEFAULT}."
            )
    rows = X.iloc[:n_rows]
    explainer = Explainer(
        model,
        method=chosen[0],
        groups=groups,
        background=background,
        target=target,
        random_state=random_state,
        n_jobs=n_jobs,
    ).fit(X)
    # one set of model calls serves every exact method
    res = {
        m: np.asarray(e.values, dtype=float)
        for m, e in explainer.explain(rows, methods=chosen).items()
    }
    scale = float(np.var(explainer.game_.predict(explainer.game_.check_X(X)))) or 1.0
    pair = metrics.disagreement(res, measure="l2")
    rank = metrics.disagreement(res, measure="spearman")
    return {
        "group_names": [str(n) for n in names],
        "groups": [[str(X.columns[j]) for j in pos] for pos in positions],
        "methods": chosen,
        "attributions": {m: a.tolist() for m, a in res.items()},
        "importance": {m: np.mean(np.abs(a), axis=0).tolist() for m, a in res.items()},
        "disagreement_l2": (np.asarray(pair.pairwise) / scale).tolist(),
        "disagreement_spearman": np.asarray(rank.pairwise).tolist(),
        "mean_disagreement_l2": float(pair.score) / scale,
        "output": explainer.output_names_[0] if explainer.n_outputs_ == 1 else None,
        "response_method": explainer.response_method_,
        "explained_output": describe_response(
            explainer.response_method_, explainer.output_names_, explainer.estimator_
        ),
        "n_rows": int(len(rows)),
    }


def check_exact_limit(methods, X, groups):
    """Refuse exact methods over more groups than exact enumeration allows.

    Exact methods enumerate all 2**K coalitions of K groups; this is found
    before any model work.

    Parameters
    ----------
    methods : list of str or None
        Names given with ``--methods``; None picks methods that fit.
    X : DataFrame
        The table.
    groups : str, list or dict
        What :func:`load_groups` returns.
    """
    from ._explainer import MAX_EXACT_GROUPS
    from ._methods import EXACT_METHODS

    exact = [m for m in methods or () if m in EXACT_METHODS]
    if not exact:
        return
    n_groups = len(groups) if isinstance(groups, (list, dict)) else X.shape[1]
    if n_groups > MAX_EXACT_GROUPS:
        raise DataError(
            f"--methods {exact} enumerate all 2**K coalitions and {n_groups} "
            f"{'groups' if isinstance(groups, (list, dict)) else 'columns'} are more "
            f"than they allow (at most {MAX_EXACT_GROUPS}); drop --methods to use the "
            "sampled methods, or give fewer groups with --groups."
        )


def analyse(X, y, *, model=None, estimator="hgb", groups="auto", methods=None,
            n_rows=20, background=50, n_jobs=None, random_state=0, log=print):
    """Fit or take a model, explain it per column and over AGREED groups.

    The options, the target and the number of groups are checked before any
    model is fitted or called.

    Parameters
    ----------
    X : DataFrame
        The table, without the target.
    y : Series
        The target.
    model : estimator or None, default=None
        A fitted model; None fits the one ``estimator`` names.
    estimator : {"hgb", "rf", "linear", "mlp"}, default="hgb"
        The model to fit when ``model`` is None.
    groups : {"auto", "columns"}, list or dict, default="auto"
        ``auto`` explains per column and over AGREED groups, ``columns`` per
        column only; a list or dict gives the groups.
    methods : list of str or None, default=None
        Explanation methods; None picks exact or sampled methods by size.
    n_rows : int, default=20
        Number of rows to explain, at least 1.
    background : int, default=50
        Number of background rows.
    n_jobs : int or None, default=None
        Parallel jobs for the model calls.
    random_state : int, default=0
        Seed of the model and of the sampling.
    log : callable, default=print
        Called with a line of progress.

    Returns
    -------
    results : dict
        JSON-serialisable results.
    """
    if isinstance(n_rows, bool) or not isinstance(n_rows, (int, np.integer)) or n_rows < 1:
        raise DataError(f"n_rows must be a positive integer, got {n_rows!r}.")
    check_methods(methods)
    check_target(y, model)
    check_exact_limit(methods, X, groups)
    notes = []
    t0 = time.perf_counter()
    if model is None:
        model, note = make_model(estimator, X, y, random_state=random_state)
        notes.append(note)
        log(f"fitting a {estimator} model on {X.shape[0]} rows, {X.shape[1]} columns")
        model.fit(X, y)
    else:
        try:
            model.predict(X.iloc[:2])
        except Exception as exc:
            raise DataError(
                f"the model cannot predict on the table's columns ({exc}); give "
                "the table it was trained on (same columns, same encoding)."
            ) from exc
    classification = is_classification(y, model)
    target_class = None
    if classification and hasattr(model, "classes_") and len(model.classes_) > 2:
        # explain the most frequent class; one output keeps the report readable
        target_class = pd.Series(y).mode().iloc[0]
        notes.append(f"multiclass target: explaining class {target_class!r}")

    partitions = {}
    history = None
    if isinstance(groups, (list, dict)):
        partitions["given"] = groups
    else:
        partitions["columns"] = None
        if groups == "auto":
            from ._grouping import AdaptiveGrouper

            log("grouping interacting columns with AGREED")
            grouper = AdaptiveGrouper(
                model,
                max_samples=min(50, X.shape[0]),
                n_groups=None,
                target=target_class,
                n_jobs=n_jobs,
                random_state=random_state,
            ).fit(X)
            partitions["agreed"] = {
                str(name): [str(X.columns[j]) for j in cols]
                for name, cols in zip(grouper.group_names_, grouper.groups_)
            }
            def _num(v):
                return None if v is None else float(v)

            history = {
                "initial_loss": float(grouper.initial_loss_),
                "final_loss": float(grouper.loss_),
                "held_out_initial_loss": _num(grouper.held_out_initial_loss_),
                "n_groups": int(grouper.n_groups_),
                "n_columns": int(X.shape[1]),
                "largest_group": int(max(len(g) for g in grouper.groups_)),
                "stop_reason": str(grouper.stop_reason_),
                "merges": [
                    {
                        "groups": [[int(j) for j in g] for g in h["groups"]],
                        "names": [str(n) for n in h["names"]],
                        "loss_before": float(h["loss_before"]),
                        "loss_after": float(h["loss_after"]),
                        "held_out_loss_before": _num(h["held_out_loss_before"]),
                        "held_out_loss_after": _num(h["held_out_loss_after"]),
                        "held_out_error": _num(h["held_out_error"]),
                        "accepted": bool(h["accepted"]),
                        "n_groups": int(h["n_groups"]),
                    }
                    for h in grouper.history_
                ],
            }
    results = {}
    for key, part in partitions.items():
        log(f"explaining {n_rows} rows over the {key} partition")
        results[key] = _explain_partition(
            model, X, part, methods, n_rows=min(n_rows, X.shape[0]),
            background=min(background, X.shape[0]), random_state=random_state,
            n_jobs=n_jobs, notes=notes, target=target_class,
        )
    return {
        "n_rows": int(X.shape[0]),
        "columns": [str(c) for c in X.columns],
        "target": str(y.name),
        "task": "classification" if classification else "regression",
        "model": type(model).__name__ if not hasattr(model, "steps") else
        " > ".join(type(s).__name__ for _, s in model.steps),
        "partitions": results,
        "agreed": history,
        "notes": notes,
        "seconds": round(time.perf_counter() - t0, 2),
    }


# -- HTML ------------------------------------------------------------------------------
def _e(text):
    return html.escape(str(text), quote=True)


def _table(header, rows, fmt="{:.3g}"):
    head = "".join(f"<th>{_e(h)}</th>" for h in header)
    body = []
    for row in rows:
        cells = []
        for v in row:
            if isinstance(v, float):
                cells.append(f"<td class='num'>{_e(fmt.format(v))}</td>")
            else:
                cells.append(f"<td>{_e(v)}</td>")
        body.append("<tr>" + "".join(cells) + "</tr>")
    return f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"


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
td,th{border:1px solid #ddd;padding:.25em .6em}th{background:#f4f4f4}
td.num{text-align:right;font-variant-numeric:tabular-nums}img{max-width:100%}
.note{background:#fff8e1;border-left:4px solid #f0c000;padding:.4em .8em;margin:.4em 0}
"""


def render_html(results, figures=None, title="skdecomp report"):
    """A self-contained HTML page; every user-provided string is escaped."""
    figures = figures or {}
    parts = [
        "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>",
        "<meta name='viewport' content='width=device-width, initial-scale=1'>",
        f"<title>{_e(title)}</title><style>{CSS}</style></head><body>",
        f"<h1>{_e(title)}</h1>",
        f"<p>Target <b>{_e(results['target'])}</b> ({_e(results['task'])}), "
        f"model <code>{_e(results['model'])}</code>, {results['n_rows']} rows, "
        f"{len(results['columns'])} columns. Analysis took {results['seconds']} s.</p>",
    ]
    explained = next(
        (p.get("explained_output") for p in results["partitions"].values()), None
    )
    if explained:
        parts.append(f"<p>Explained output: <b>{_e(explained)}</b>.</p>")
    for note in results["notes"]:
        parts.append(f"<div class='note'>{_e(note)}</div>")
    labels = {"columns": "One group per column", "agreed": "AGREED groups",
              "given": "Given groups"}
    for key, part in results["partitions"].items():
        parts.append(f"<h2>{_e(labels.get(key, key))}</h2>")
        parts.append(
            f"<p>Mean disagreement between methods (squared difference / Var f): "
            f"<b>{part['mean_disagreement_l2']:.4g}</b>. Lower means the explanations "
            "can be trusted to say the same thing.</p>"
        )
        if key in figures:
            parts.extend(figures[key])
        rows = [
            [name, " + ".join(cols)] + [part["importance"][m][k] for m in part["methods"]]
            for k, (name, cols) in enumerate(zip(part["group_names"], part["groups"]))
        ]
        parts.append("<p>Mean absolute attribution per group and method:</p>")
        parts.append(_table(["group", "columns"] + part["methods"], rows))
        dis = part["disagreement_l2"]
        parts.append("<p>Pairwise disagreement (squared difference / Var f):</p>")
        parts.append(_table([""] + part["methods"],
                            [[m] + [float(v) for v in dis[i]] for i, m in enumerate(part["methods"])]))
    if results.get("agreed"):
        a = results["agreed"]
        parts.append("<h2>How AGREED merged the columns</h2>")
        parts.extend(_agreed_summary(a))
        if "agreed_curve" in figures:
            parts.extend(figures["agreed_curve"])
        parts.append(
            "<p>Each merge, with the share of the initial interaction loss it "
            "removed on the sample and on held-out rows:</p>"
        )
        parts.append(_table(
            ["merged", "groups after", "loss removed", "held-out loss removed", "kept"],
            [[" + ".join(h["names"]), str(h["n_groups"]),
              _share(h["loss_before"] - h["loss_after"], a["initial_loss"]),
              _share(_diff(h["held_out_loss_before"], h["held_out_loss_after"]),
                     a.get("held_out_initial_loss")),
              "yes" if h.get("accepted", True) else "no: did not pay on held-out rows"]
             for h in a["merges"]],
        ))
    parts.append("<p>Made with skdecomp.</p></body></html>")
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


def _agreed_summary(a):
    """Plain-words paragraphs on what AGREED merged and why it stopped."""
    initial, final = a["initial_loss"], a["final_loss"]
    removed = _share(initial - final, initial)
    out = []
    if a.get("n_groups") is not None:
        out.append(
            f"<p>AGREED merged the {a['n_columns']} columns into {a['n_groups']} "
            f"groups, removing {_e(removed)} of the interaction loss between "
            f"groups on its sample; it stopped because "
            f"{_e(_STOP_REASONS.get(a['stop_reason'], a['stop_reason']))}.</p>"
        )
        if a["largest_group"] > max(2, a["n_columns"] // 2):
            out.append(
                "<div class='note'>Warning: one group holds "
                f"{a['largest_group']} of the {a['n_columns']} columns. The "
                "explanations agree over it only because they no longer tell "
                "those columns apart; the model's interactions are spread over "
                "many columns. Read the per-column results above, or bound the "
                "groups (AdaptiveGrouper(max_group_size=...)).</div>"
            )
    else:
        out.append(f"<p>Between-group interaction loss fell by {_e(removed)}.</p>")
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
    ax.set_xticks(n)
    ax.set_ylim(bottom=0)
    ax.set_xlabel("number of groups (merges go right)")
    ax.set_ylabel("interaction loss left, % of start")
    ax.set_title("What each AGREED merge buys")
    ax.legend(fontsize=8, loc="upper right")
    fig.tight_layout()
    return fig


def make_figures(results):
    """Figures embedded in the report (empty when matplotlib is missing)."""
    try:
        import matplotlib

        matplotlib.use("Agg", force=False)
        import matplotlib.pyplot as plt
    except ImportError:
        return {}
    from .plot import AttributionDisplay, DisagreementDisplay

    figures = {}
    for key, part in results["partitions"].items():
        res = {m: np.asarray(a, dtype=float) for m, a in part["attributions"].items()}
        n_groups = len(part["group_names"])
        fig, axes = plt.subplots(
            1, 2, figsize=(12, 0.35 * min(n_groups, 20) + 2.5),
            gridspec_kw={"width_ratios": [2, 1]},
        )
        AttributionDisplay.from_result(
            {m: np.abs(a).mean(axis=0) for m, a in res.items()},
            group_names=part["group_names"], kind="bar", ax=axes[0],
        )
        axes[0].set_xlabel("mean |attribution|")
        axes[0].set_title(f"Mean |attribution| over {part['n_rows']} rows")
        # the same normalised matrix as the table below (squared difference / Var f)
        DisagreementDisplay.from_result(
            {"pairwise": np.asarray(part["disagreement_l2"]), "names": part["methods"]},
            measure="l2 / Var f", ax=axes[1],
        )
        figures[key] = [_png(fig)]
    agreed = results.get("agreed")
    if agreed and agreed["merges"]:
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


def write_report(results, out_dir, title="skdecomp report", overwrite=False):
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

    Returns
    -------
    out : Path
        The report folder.
    """
    check_output(out_dir, overwrite=overwrite)
    out = Path(os.path.abspath(os.fspath(out_dir)))
    files = {
        "results.json": json.dumps(results, indent=2).encode("utf-8"),
        "index.html": render_html(results, make_figures(results), title).encode("utf-8"),
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
